// The status HTTP listener of the agent and the controller: /livez (liveness checks: what a restart can fix), /readyz
// (liveness + readiness checks: dependencies such as the runtime, informers synced), /healthz (the same report as
// /readyz: every check, kept for OpenKruise's daemon and tools) and /metrics (the process's private prom-client
// registry). GET and HEAD only; `?verbose` lists every check. The checks read state the components keep; none of
// them calls a dependency (src/observability/health.ts).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import type { Logger } from './logger.js';
import { combineReports, renderReport, type HealthRegistry } from './health.js';
import { listenOn } from '../util/server-listen.js';

/** Where the status server listens. */
export interface ListenAddress {
  /** Undefined = every interface (Node listens on :: and 0.0.0.0). */
  host: string | undefined;
  /** 0 = any free port (tests). */
  port: number;
}

export interface StatusServerOptions {
  /** /livez: what a restart of the process can fix (its own loops and watches turn). */
  liveness: HealthRegistry;
  /** /readyz and /healthz add these to the liveness checks (the runtime answers, informers synced, not stopping). */
  readiness: HealthRegistry;
  metrics: Registry;
  logger: Logger;
}

export interface BoundAddress {
  host: string;
  port: number;
}

export class StatusServer {
  private readonly server: Server;

  constructor(private readonly options: StatusServerOptions) {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        options.logger.error({ err, path: req.url }, 'status request failed');
        if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', 'internal error\n');
        else res.destroy();
      });
    });
    // Probes are tiny: a client that dawdles is cut off rather than holding a socket.
    this.server.headersTimeout = 10_000;
    this.server.requestTimeout = 15_000;
  }

  /** Start listening; resolves with the address actually bound (port 0 = any free port). */
  async listen(address: ListenAddress): Promise<BoundAddress> {
    const bound = await listenOn(this.server, address.host, address.port, (err) =>
      this.options.logger.error({ err }, 'status server error'),
    );
    return { host: bound.address, port: bound.port };
  }

  /** Stop accepting, let requests in flight finish for up to graceMs, then drop what is left. */
  close(graceMs = 2000): Promise<void> {
    if (!this.server.listening) return Promise.resolve();
    return new Promise((resolve) => {
      const force = setTimeout(() => this.server.closeAllConnections(), graceMs);
      force.unref();
      this.server.close(() => {
        clearTimeout(force);
        resolve();
      });
      this.server.closeIdleConnections();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://status.invalid');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      send(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n');
      return;
    }
    const verbose = url.searchParams.has('verbose');
    switch (url.pathname) {
      case '/livez': {
        const report = await this.options.liveness.run();
        send(res, report.ok ? 200 : 500, 'text/plain; charset=utf-8', renderReport(report, verbose));
        return;
      }
      case '/readyz':
      case '/healthz': {
        const [live, ready] = await Promise.all([this.options.liveness.run(), this.options.readiness.run()]);
        const report = combineReports(live, ready);
        send(res, report.ok ? 200 : 500, 'text/plain; charset=utf-8', renderReport(report, verbose));
        return;
      }
      case '/metrics': {
        const body = await this.options.metrics.metrics();
        send(res, 200, this.options.metrics.contentType, body);
        return;
      }
      default:
        send(res, 404, 'text/plain; charset=utf-8', 'not found: try /livez, /readyz, /healthz or /metrics\n');
    }
  }
}

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { 'Content-Type': contentType, 'Cache-Control': 'no-store' });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}
