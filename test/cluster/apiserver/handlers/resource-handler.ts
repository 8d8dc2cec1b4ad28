// The verbs on /api/v1/... and /apis/G/V/...: decode the request, call the handler, encode the answer
// (object, list, Table, Status, or a watch stream).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiContext } from '../context.js';
import { ApiError, apiErrors, successStatus } from '../errors.js';
import { decodeBody, readBody, sendJson, warningHeaders } from '../http-io.js';
import { wantsTable } from '../media-types.js';
import { buildFilter } from '../object-filter.js';
import { parseBool, type ResourceRequest } from '../request-info.js';
import type { ResourceType } from '../resource-types.js';
import { buildTable } from '../table.js';
import { apiVersionOf, type KubeObject } from '../types.js';
import type { WatchHub } from '../watch-hub.js';
import { bindPod } from './binding.js';
import { createObject } from './create.js';
import { patchObject } from './patch.js';
import { deleteObject, deletedStatusDetails, parseDeleteOptions } from './delete.js';
import type { WriteOptions, WriteResult } from './object-prep.js';
import { getObject, listObjects, parseLimit } from './read.js';
import { updateObject } from './update.js';
import { WatchSession } from './watch.js';

export interface ResourceHandlerDeps {
  ctx: ApiContext;
  hub: WatchHub;
  bookmarkIntervalMs: number;
}

function writeOptions(query: URLSearchParams, userAgent: string): WriteOptions {
  const dryRun = query.getAll('dryRun');
  for (const d of dryRun)
    if (d !== 'All') throw apiErrors.badRequest(`dryRun: Unsupported value: "${d}": supported values: "All"`);
  const fv = query.get('fieldValidation') ?? 'Warn';
  if (fv !== 'Strict' && fv !== 'Warn' && fv !== 'Ignore') {
    throw apiErrors.badRequest(
      `fieldValidation: Unsupported value: ${JSON.stringify(fv)}: supported values: "Ignore", "Strict", "Warn"`,
    );
  }
  return { dryRun: dryRun.length > 0, fieldValidation: fv, userAgent };
}

function parseRv(value: string | null): number | undefined {
  if (value === null || value === '' || value === '0') return undefined;
  if (!/^\d+$/.test(value)) {
    throw apiErrors.badRequest(
      `resourceVersion: Invalid value: ${JSON.stringify(value)}: must be a non-negative integer`,
    );
  }
  return Number(value);
}

function parseTimeout(value: string | null): number | undefined {
  if (value === null || value === '') return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0)
    throw apiErrors.badRequest(`timeoutSeconds must be a non-negative integer, got ${value}`);
  return n === 0 ? undefined : n * 1000;
}

export class ResourceHandler {
  constructor(private readonly deps: ResourceHandlerDeps) {}

  /** Find the served resource of a request, checking scope and subresource. */
  resolve(info: ResourceRequest): ResourceType {
    const rt = this.deps.ctx.registry.lookup(info.group, info.version, info.resource);
    if (!rt) throw apiErrors.noRoute();
    if (info.subresource && !rt.subresources.includes(info.subresource)) throw apiErrors.noRoute();
    if (!rt.namespaced && info.namespace && info.resource !== 'namespaces') throw apiErrors.noRoute();
    const needsNamespace = info.verb !== 'list' && info.verb !== 'watch' && info.verb !== 'deletecollection';
    if (rt.namespaced && needsNamespace && !info.namespace) throw apiErrors.noRoute();
    return rt;
  }

  async handle(info: ResourceRequest, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const rt = this.resolve(info);
    const query = url.searchParams;
    const userAgent = req.headers['user-agent'] ?? '';
    const ns = rt.namespaced ? info.namespace : '';
    const { ctx } = this.deps;
    const accept = req.headers.accept;
    switch (info.verb) {
      case 'get': {
        const obj = getObject(ctx, rt, ns, info.name);
        if (wantsTable(accept)) {
          sendJson(
            res,
            200,
            buildTable(rt.table, [obj], ctx.clock.now(), { resourceVersion: obj.metadata.resourceVersion }),
          );
        } else {
          sendJson(res, 200, obj);
        }
        return;
      }
      case 'list': {
        const filter = buildFilter(rt, ns, query.get('labelSelector'), query.get('fieldSelector'));
        const result = listObjects(ctx, rt, filter, parseLimit(query.get('limit')), query.get('continue'));
        const metadata: Record<string, unknown> = { resourceVersion: result.resourceVersion };
        if (result.continueToken) {
          metadata.continue = result.continueToken;
          metadata.remainingItemCount = result.remainingItemCount;
        }
        const items = result.items.map((o) => rt.fromStorage(o));
        if (wantsTable(accept)) {
          sendJson(res, 200, buildTable(rt.table, items, ctx.clock.now(), metadata));
        } else {
          sendJson(res, 200, { kind: rt.listKind, apiVersion: apiVersionOf(rt.group, rt.version), metadata, items });
        }
        return;
      }
      case 'watch':
        this.watch(rt, info, query, accept, res);
        return;
      case 'create': {
        const body = decodeBody(await readBody(req), req.headers['content-type']);
        if (info.subresource === 'binding') {
          bindPod(ctx, ns, info.name, body);
          sendJson(res, 201, successStatus());
          return;
        }
        if (info.subresource || info.name) throw apiErrors.methodNotAllowed();
        this.sendWrite(res, await createObject(ctx, rt, ns, body, writeOptions(query, userAgent)));
        return;
      }
      case 'update': {
        if (info.subresource === 'binding') throw apiErrors.methodNotAllowed();
        const body = decodeBody(await readBody(req), req.headers['content-type']);
        const target = { rt, namespace: ns, name: info.name, subresource: info.subresource };
        this.sendWrite(res, await updateObject(ctx, target, () => body, writeOptions(query, userAgent)));
        return;
      }
      case 'patch': {
        if (info.subresource === 'binding') throw apiErrors.methodNotAllowed();
        const target = { rt, namespace: ns, name: info.name, subresource: info.subresource };
        const body = await readBody(req);
        const contentType = req.headers['content-type'] ?? '';
        this.sendWrite(res, await patchObject(ctx, target, body, contentType, writeOptions(query, userAgent)));
        return;
      }
      case 'delete': {
        if (info.subresource) throw apiErrors.methodNotAllowed();
        const raw = await readBody(req);
        const body = raw.length > 0 ? decodeBody(raw, req.headers['content-type']) : undefined;
        const options = parseDeleteOptions(body, query);
        const result = await deleteObject(ctx, rt, ns, info.name, options, writeOptions(query, userAgent));
        const code = result.removed ? 200 : 202;
        if (result.removed && !rt.behaviour.returnDeletedObject) {
          sendJson(res, code, successStatus(deletedStatusDetails(rt, result.object)));
        } else {
          sendJson(res, code, result.object);
        }
        return;
      }
      case 'deletecollection': {
        const raw = await readBody(req);
        const body = raw.length > 0 ? decodeBody(raw, req.headers['content-type']) : undefined;
        const options = parseDeleteOptions(body, query);
        const write = writeOptions(query, userAgent);
        const filter = buildFilter(rt, ns, query.get('labelSelector'), query.get('fieldSelector'));
        const { items } = listObjects(ctx, rt, filter, undefined, null);
        const deleted: KubeObject[] = [];
        for (const obj of items) {
          try {
            const r = await deleteObject(
              ctx,
              rt,
              obj.metadata.namespace ?? '',
              obj.metadata.name ?? '',
              options,
              write,
            );
            deleted.push(r.object);
          } catch (err) {
            if (!(err instanceof ApiError && err.code === 404)) throw err;
          }
        }
        sendJson(res, 200, {
          kind: rt.listKind,
          apiVersion: apiVersionOf(rt.group, rt.version),
          metadata: { resourceVersion: String(ctx.store.currentRv()) },
          items: deleted,
        });
        return;
      }
    }
  }

  private watch(
    rt: ResourceType,
    info: ResourceRequest,
    query: URLSearchParams,
    accept: string | undefined,
    res: ServerResponse,
  ): void {
    const { ctx, hub } = this.deps;
    const filter = buildFilter(
      rt,
      rt.namespaced ? info.namespace : '',
      query.get('labelSelector'),
      query.get('fieldSelector'),
      info.name || undefined,
    );
    const options = {
      sinceRv: parseRv(query.get('resourceVersion')),
      allowBookmarks: parseBool(query.get('allowWatchBookmarks'), 'allowWatchBookmarks'),
      bookmarkIntervalMs: this.deps.bookmarkIntervalMs,
      timeoutMs: parseTimeout(query.get('timeoutSeconds')),
      asTable: wantsTable(accept),
    };
    res.writeHead(200, {
      'Content-Type': 'application/json',
      'Transfer-Encoding': 'chunked',
      'Cache-Control': 'no-cache, private',
    });
    res.flushHeaders();
    const session = new WatchSession(
      rt,
      filter,
      options,
      {
        write: (line) => {
          if (!res.destroyed) res.write(line);
        },
        end: () => {
          if (!res.destroyed) res.end();
        },
      },
      { hub, store: ctx.store, clock: ctx.clock },
    );
    res.on('close', () => session.close());
    session.start();
  }

  private sendWrite(res: ServerResponse, result: WriteResult): void {
    sendJson(res, result.code, result.object, warningHeaders(result.warnings));
  }
}
