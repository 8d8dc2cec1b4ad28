// Request dispatch: faults and counting first, then /version, health, discovery, OpenAPI, or a resource verb.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiContext } from './context.js';
import {
  aggregatedContentType,
  aggregatedDiscovery,
  legacyApiVersions,
  legacyGroup,
  legacyGroupList,
  legacyResourceList,
} from './discovery.js';
import { ApiError, apiErrors } from './errors.js';
import type { FaultState } from './faults.js';
import { ResourceHandler } from './handlers/resource-handler.js';
import { sendError, sendJson, sendText } from './http-io.js';
import { wantsAggregatedDiscovery } from './media-types.js';
import { openApiGroupVersion, openApiRoot } from './openapi.js';
import type { RequestLog } from './request-log.js';
import { parseRequestInfo } from './request-info.js';
import type { WatchHub } from './watch-hub.js';
import { errorMessage } from '../../../src/util/error-message.js';

/** kubectl's dispatcher picks the kubectl binary by `minor`: it must say 32. */
export const VERSION_INFO = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.0',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2024-12-11T00:00:00Z',
  goVersion: 'go1.23.3',
  compiler: 'gc',
  platform: 'linux/amd64',
};

export interface FrontendDeps {
  ctx: ApiContext;
  hub: WatchHub;
  faults: FaultState;
  requests: RequestLog;
  bookmarkIntervalMs: number;
  /** host:port, for /api's serverAddressByClientCIDRs. */
  address(): string;
}

export class HttpFrontend {
  private readonly resources: ResourceHandler;

  constructor(private readonly deps: FrontendDeps) {
    this.resources = new ResourceHandler({ ctx: deps.ctx, hub: deps.hub, bookmarkIntervalMs: deps.bookmarkIntervalMs });
  }

  handle(req: IncomingMessage, res: ServerResponse): void {
    void this.serve(req, res).catch((err: unknown) => {
      if (err instanceof ApiError) {
        sendError(res, err);
        return;
      }
      this.deps.ctx.logger.error({ err, method: req.method, url: req.url }, 'request failed');
      sendError(res, apiErrors.internal(errorMessage(err)));
    });
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', 'http://emulator.invalid');
    const path = url.pathname;
    this.deps.requests.record(method, path, req.headers['user-agent'] ?? '');
    if (this.deps.faults.stallMs > 0) await new Promise((r) => setTimeout(r, this.deps.faults.stallMs));
    const injected = this.deps.faults.take(method, path, url.searchParams);
    if (injected) {
      req.resume();
      throw injected;
    }
    if (this.serveStatic(method, path, req, res)) return;
    const info = parseRequestInfo(method, path, url.searchParams);
    if (info.kind === 'other') throw apiErrors.noRoute();
    await this.resources.handle(info, req, res, url);
  }

  /** Non-resource paths; returns false when the path is not one of them. */
  private serveStatic(method: string, path: string, req: IncomingMessage, res: ServerResponse): boolean {
    const { registry } = this.deps.ctx;
    const clean = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
    const parts = clean.split('/').filter(Boolean);
    if (method !== 'GET' && method !== 'HEAD') {
      if (parts[0] !== 'api' && parts[0] !== 'apis') throw apiErrors.methodNotAllowed();
      return false;
    }
    if (clean === '/version') {
      sendJson(res, 200, VERSION_INFO);
      return true;
    }
    if (clean === '/healthz' || clean === '/livez' || clean === '/readyz') {
      sendText(res, 200, 'ok');
      return true;
    }
    const aggregated = wantsAggregatedDiscovery(req.headers.accept);
    if (clean === '/api' || clean === '/apis') {
      const legacy = clean === '/api';
      if (aggregated) {
        sendJson(res, 200, aggregatedDiscovery(registry, legacy, aggregated), {}, aggregatedContentType(aggregated));
      } else {
        sendJson(res, 200, legacy ? legacyApiVersions(this.deps.address()) : legacyGroupList(registry));
      }
      return true;
    }
    if (parts[0] === 'apis' && parts.length === 2) {
      sendDocument(res, legacyGroup(registry, parts[1]!));
      return true;
    }
    if ((parts[0] === 'api' && parts.length === 2) || (parts[0] === 'apis' && parts.length === 3)) {
      const group = parts[0] === 'api' ? '' : parts[1]!;
      sendDocument(res, legacyResourceList(registry, group, parts[parts.length - 1]!));
      return true;
    }
    if (parts[0] === 'openapi') {
      if (clean === '/openapi/v3') sendJson(res, 200, openApiRoot(registry));
      else if (parts[1] === 'v3' && parts[2] === 'api' && parts.length === 4) {
        sendDocument(res, openApiGroupVersion(registry, '', parts[3]!));
      } else if (parts[1] === 'v3' && parts[2] === 'apis' && parts.length === 5) {
        sendDocument(res, openApiGroupVersion(registry, parts[3]!, parts[4]!));
      } else {
        throw apiErrors.noRoute();
      }
      return true;
    }
    return false;
  }
}

function sendDocument(res: ServerResponse, doc: unknown): void {
  if (doc === undefined) throw apiErrors.noRoute();
  sendJson(res, 200, doc);
}
