// A small typed REST client for any group/version/resource: get, list, create, update, patch, delete, watch,
// with status subresource, list/watch query options, typed ApiErrors, request metrics and debug logs without secrets.
import type { Logger } from 'pino';
import { silentLogger } from '../observability/logger.js';
import { ApiError, type Status } from './errors.js';
import type { KubeMetrics } from './metrics.js';
import type { KubeList, KubeObject } from './object.js';
import { apiVersionOf, resourceLabel, resourcePath, type ResourceType } from './resource.js';
import type { Connection } from './credentials/connection.js';
import { HttpTransport, type HttpTransportOptions, type Transport } from './transport.js';
import { watchStreamOf, type WatchStream } from './watch-stream.js';

export interface ListOptions {
  namespace?: string | undefined;
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
  resourceVersion?: string | undefined;
  resourceVersionMatch?: 'NotOlderThan' | 'Exact' | undefined;
  limit?: number | undefined;
  continue?: string | undefined;
  timeoutSeconds?: number | undefined;
}

export interface WatchOptions extends Omit<ListOptions, 'limit' | 'continue' | 'resourceVersionMatch'> {
  allowWatchBookmarks?: boolean | undefined;
  signal?: AbortSignal | undefined;
}

export type PatchType = 'merge' | 'json' | 'strategic' | 'apply';

export const PATCH_CONTENT_TYPES: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
};

export interface ObjectOptions {
  namespace?: string | undefined;
  subresource?: string | undefined;
}

export interface WriteOptions extends ObjectOptions {
  fieldManager?: string | undefined;
  dryRun?: boolean | undefined;
}

export interface PatchOptions extends WriteOptions {
  type: PatchType;
  /** Server-side apply only: take over fields owned by other managers. */
  force?: boolean;
}

export interface DeleteOptions {
  namespace?: string | undefined;
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string | undefined; resourceVersion?: string };
  dryRun?: boolean;
}

export interface KubeClientOptions extends HttpTransportOptions {
  metrics?: KubeMetrics | undefined;
  logger?: Logger;
  /** Replace the HTTP transport (tests). */
  transport?: Transport;
}

function query(params: Record<string, string | number | boolean | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

function checkCount(name: string, value: number | undefined): void {
  if (value !== undefined && (!Number.isInteger(value) || value < 0)) {
    throw new Error(`${name} must be a non-negative integer (got ${value})`);
  }
}

export class KubeClient {
  readonly transport: Transport;
  private readonly metrics?: KubeMetrics | undefined;
  private readonly logger: Logger;

  constructor(
    readonly connection: Connection,
    options: KubeClientOptions = {},
  ) {
    this.transport = options.transport ?? new HttpTransport(connection, options);
    this.metrics = options.metrics;
    this.logger = options.logger ?? silentLogger;
  }

  /** The default namespace of the loaded credentials, else "default". */
  get defaultNamespace(): string {
    return this.connection.namespace ?? 'default';
  }

  async get<T extends KubeObject>(rt: ResourceType, name: string, opts: ObjectOptions = {}): Promise<T> {
    const path = resourcePath(rt, { namespace: this.ns(rt, opts.namespace), name, subresource: opts.subresource });
    return await this.call<T>('get', rt, opts.subresource, 'GET', path);
  }

  async list<T extends KubeObject>(rt: ResourceType, opts: ListOptions = {}): Promise<KubeList<T>> {
    checkCount('limit', opts.limit);
    checkCount('timeoutSeconds', opts.timeoutSeconds);
    const path =
      resourcePath(rt, { namespace: opts.namespace }) +
      query({
        labelSelector: opts.labelSelector,
        fieldSelector: opts.fieldSelector,
        resourceVersion: opts.resourceVersion,
        resourceVersionMatch: opts.resourceVersionMatch,
        limit: opts.limit,
        continue: opts.continue,
        timeoutSeconds: opts.timeoutSeconds,
      });
    const list = await this.call<KubeList<T>>('list', rt, undefined, 'GET', path);
    if (!Array.isArray(list.items)) list.items = [];
    return list;
  }

  /** List every page (limit per page, default 500) into one list; the resourceVersion is the first page's. */
  async listAll<T extends KubeObject>(
    rt: ResourceType,
    opts: Omit<ListOptions, 'continue'> = {},
  ): Promise<KubeList<T>> {
    const items: T[] = [];
    let first: KubeList<T> | undefined;
    let cont: string | undefined;
    do {
      const page: KubeList<T> = await this.list<T>(rt, { ...opts, limit: opts.limit ?? 500, continue: cont });
      first ??= page;
      items.push(...page.items);
      cont = page.metadata?.continue || undefined;
    } while (cont);
    return { ...first, metadata: { resourceVersion: first.metadata?.resourceVersion }, items };
  }

  async create<T extends KubeObject>(rt: ResourceType, obj: T, opts: WriteOptions = {}): Promise<T> {
    const namespace = this.ns(rt, opts.namespace ?? obj.metadata?.namespace);
    const path = resourcePath(rt, { namespace }) + this.writeQuery(opts);
    const body = { apiVersion: apiVersionOf(rt), kind: rt.kind, ...obj };
    return await this.call<T>('create', rt, undefined, 'POST', path, JSON.stringify(body), 'application/json');
  }

  /** PUT the whole object (its metadata.resourceVersion makes it conditional). */
  async update<T extends KubeObject>(rt: ResourceType, obj: T, opts: WriteOptions = {}): Promise<T> {
    const name = obj.metadata?.name;
    if (!name) throw new Error(`update ${resourceLabel(rt)}: the object has no metadata.name`);
    const namespace = this.ns(rt, opts.namespace ?? obj.metadata?.namespace);
    const path = resourcePath(rt, { namespace, name, subresource: opts.subresource }) + this.writeQuery(opts);
    const body = { apiVersion: apiVersionOf(rt), kind: rt.kind, ...obj };
    return await this.call<T>('update', rt, opts.subresource, 'PUT', path, JSON.stringify(body), 'application/json');
  }

  async updateStatus<T extends KubeObject>(rt: ResourceType, obj: T, opts: WriteOptions = {}): Promise<T> {
    return await this.update(rt, obj, { ...opts, subresource: 'status' });
  }

  async patch<T extends KubeObject>(rt: ResourceType, name: string, patch: unknown, opts: PatchOptions): Promise<T> {
    const contentType = PATCH_CONTENT_TYPES[opts.type];
    if (!contentType) throw new Error(`unknown patch type ${JSON.stringify(opts.type)}`);
    if (opts.type === 'json' && !Array.isArray(patch)) throw new Error('a JSON patch must be an array of operations');
    if (opts.type !== 'json' && (typeof patch !== 'object' || patch === null || Array.isArray(patch))) {
      throw new Error(`a ${opts.type} patch must be an object`);
    }
    if (opts.type === 'apply' && !opts.fieldManager) throw new Error('server-side apply needs a fieldManager');
    if (opts.force && opts.type !== 'apply') throw new Error('force is only allowed with server-side apply');
    const path =
      resourcePath(rt, { namespace: this.ns(rt, opts.namespace), name, subresource: opts.subresource }) +
      query({ fieldManager: opts.fieldManager, dryRun: opts.dryRun ? 'All' : undefined, force: opts.force });
    return await this.call<T>('patch', rt, opts.subresource, 'PATCH', path, JSON.stringify(patch), contentType);
  }

  /** Delete; answers the object (while finalizers run) or a Success Status. */
  async delete(rt: ResourceType, name: string, opts: DeleteOptions = {}): Promise<KubeObject | Status> {
    checkCount('gracePeriodSeconds', opts.gracePeriodSeconds);
    const path = resourcePath(rt, { namespace: this.ns(rt, opts.namespace), name });
    const body: Record<string, unknown> = { kind: 'DeleteOptions', apiVersion: 'v1' };
    if (opts.propagationPolicy) body.propagationPolicy = opts.propagationPolicy;
    if (opts.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = opts.gracePeriodSeconds;
    if (opts.preconditions) body.preconditions = opts.preconditions;
    if (opts.dryRun) body.dryRun = ['All'];
    return await this.call<KubeObject | Status>(
      'delete',
      rt,
      undefined,
      'DELETE',
      path,
      JSON.stringify(body),
      'application/json',
    );
  }

  /** Open a watch; resolves once the server has accepted it (200), else throws the ApiError. */
  async watch<T extends KubeObject>(rt: ResourceType, opts: WatchOptions = {}): Promise<WatchStream<T>> {
    checkCount('timeoutSeconds', opts.timeoutSeconds);
    const path =
      resourcePath(rt, { namespace: opts.namespace }) +
      query({
        watch: 'true',
        labelSelector: opts.labelSelector,
        fieldSelector: opts.fieldSelector,
        resourceVersion: opts.resourceVersion,
        timeoutSeconds: opts.timeoutSeconds,
        allowWatchBookmarks: opts.allowWatchBookmarks ? 'true' : undefined,
      });
    const started = Date.now();
    const label = resourceLabel(rt);
    let res;
    try {
      res = await this.transport.stream({ method: 'GET', path, signal: opts.signal });
    } catch (err) {
      this.count('watch', label, 'error');
      throw err;
    }
    this.count('watch', label, String(res.status));
    this.logger.debug({ verb: 'watch', path, code: res.status, ms: Date.now() - started }, 'kube api');
    if (res.status !== 200) {
      const chunks: Buffer[] = [];
      for await (const chunk of res.body) chunks.push(chunk as Buffer);
      throw ApiError.fromResponse(res.status, Buffer.concat(chunks).toString('utf8'), 'WATCH', path);
    }
    return watchStreamOf<T>(res.body, path);
  }

  close(): void {
    this.transport.close();
  }

  private ns(rt: ResourceType, namespace: string | undefined): string | undefined {
    if (!rt.namespaced) {
      if (namespace) throw new Error(`${resourceLabel(rt)} is cluster-scoped; no namespace may be given`);
      return undefined;
    }
    if (!namespace) throw new Error(`${resourceLabel(rt)} is namespaced; a namespace is needed`);
    return namespace;
  }

  private writeQuery(opts: WriteOptions): string {
    return query({ fieldManager: opts.fieldManager, dryRun: opts.dryRun ? 'All' : undefined });
  }

  private count(verb: string, resource: string, code: string): void {
    this.metrics?.apiRequests.inc({ verb, resource, code });
  }

  private async call<T>(
    verb: string,
    rt: ResourceType,
    subresource: string | undefined,
    method: string,
    path: string,
    body?: string,
    contentType?: string,
  ): Promise<T> {
    const label = resourceLabel(rt, subresource);
    const started = Date.now();
    let res;
    try {
      res = await this.transport.request({
        method,
        path,
        body,
        headers: contentType ? { 'Content-Type': contentType } : undefined,
      });
    } catch (err) {
      this.count(verb, label, 'error');
      this.logger.debug({ verb, path, err: (err as Error).message, ms: Date.now() - started }, 'kube api failed');
      throw err;
    }
    this.count(verb, label, String(res.status));
    this.logger.debug({ verb, path, code: res.status, ms: Date.now() - started }, 'kube api');
    if (res.status < 200 || res.status > 299) throw ApiError.fromResponse(res.status, res.body, method, path);
    try {
      return JSON.parse(res.body) as T;
    } catch {
      throw new Error(`${method} ${path}: the answer (${res.status}) is not JSON: ${res.body.slice(0, 120)}`);
    }
  }
}
