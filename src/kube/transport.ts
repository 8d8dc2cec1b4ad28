// HTTP(S) to the API server through node:http/https with one keep-alive agent: the lightest way in memory (no extra
// modules), with client certificates, CA bundles and bearer tokens. Request timeouts; a 401 re-reads a rotated token once.
import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import type { Connection } from './credentials/connection.js';

export interface HttpRequest {
  method: string;
  /** Path and query, appended to the server URL (which may carry a path prefix). */
  path: string;
  headers?: Record<string, string> | undefined;
  body?: string | undefined;
  /** Overrides the transport's timeout; for streams it bounds the wait for response headers only. */
  timeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
}

export interface HttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface HttpStream {
  status: number;
  headers: IncomingHttpHeaders;
  body: Readable;
}

/** What the REST client needs from the wire; tests may pass a fake. */
export interface Transport {
  request(req: HttpRequest): Promise<HttpResponse>;
  /** Resolve when the response headers arrive; the body is left to the caller (watch streams). */
  stream(req: HttpRequest): Promise<HttpStream>;
  close(): void;
}

export interface HttpTransportOptions {
  userAgent?: string;
  /** Default request timeout (ms), 30 s. */
  timeoutMs?: number;
}

export class RequestTimeoutError extends Error {
  override readonly name = 'RequestTimeoutError';
}

class StaleConnectionError extends Error {
  constructor(override readonly cause: Error) {
    super(cause.message);
  }
}

const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);

export const DEFAULT_USER_AGENT = 'kruise-daemon/0.1.0 (linux) node-kube-light';

export class HttpTransport implements Transport {
  private readonly agent: http.Agent;
  private readonly base: URL;
  private readonly isHttps: boolean;
  private readonly timeoutMs: number;
  private readonly userAgent: string;

  constructor(
    private readonly connection: Connection,
    options: HttpTransportOptions = {},
  ) {
    this.base = new URL(connection.server);
    this.isHttps = this.base.protocol === 'https:';
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.userAgent = options.userAgent ?? DEFAULT_USER_AGENT;
    const common = {
      keepAlive: true,
      // No cap: each open watch holds a socket, and requests must never queue behind watches.
      maxSockets: Infinity,
      maxFreeSockets: 4,
      scheduling: 'lifo' as const,
    };
    this.agent = this.isHttps
      ? new https.Agent({
          ...common,
          ca: connection.ca,
          cert: connection.cert,
          key: connection.key,
          rejectUnauthorized: !connection.insecureSkipTLSVerify,
          servername: connection.tlsServerName,
        })
      : new http.Agent(common);
  }

  /** A whole exchange (headers and body) bounded by the timeout. */
  async request(req: HttpRequest): Promise<HttpResponse> {
    const timeoutMs = req.timeoutMs ?? this.timeoutMs;
    const deadline = new AbortController();
    const timer = setTimeout(() => {
      deadline.abort(new RequestTimeoutError(`${req.method} ${req.path}: no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    timer.unref();
    const signal = req.signal ? AbortSignal.any([req.signal, deadline.signal]) : deadline.signal;
    try {
      const res = await this.withAuthRetry({ ...req, signal });
      const body = await readBody(res.body, signal);
      return { status: res.status, headers: res.headers, body };
    } finally {
      clearTimeout(timer);
    }
  }

  async stream(req: HttpRequest): Promise<HttpStream> {
    return await this.withAuthRetry(req);
  }

  close(): void {
    this.agent.destroy();
  }

  /** Send; on 401 with a token that may have rotated, read the token afresh and send once more. */
  private async withAuthRetry(req: HttpRequest): Promise<HttpStream> {
    const first = await this.sendOnFreshSocketIfStale(req);
    if (first.status !== 401 || this.connection.auth.kind !== 'token') return first;
    first.body.resume();
    this.connection.auth.source.invalidate();
    return await this.sendOnFreshSocketIfStale(req);
  }

  /**
   * A kept-alive socket the server has closed (a restart, an idle timeout) fails at once with ECONNRESET; the request
   * never reached the server, so an idempotent one is sent again (Node's documented pattern, as Go's transport does).
   */
  private async sendOnFreshSocketIfStale(req: HttpRequest): Promise<HttpStream> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.send(req);
      } catch (err) {
        if (!(err instanceof StaleConnectionError)) throw err;
        if (!IDEMPOTENT.has(req.method) || attempt >= 3) throw err.cause;
      }
    }
  }

  private async send(req: HttpRequest): Promise<HttpStream> {
    const headers: Record<string, string> = {
      'User-Agent': this.userAgent,
      Accept: 'application/json',
      ...req.headers,
    };
    const auth = this.connection.auth;
    if (auth.kind === 'token') headers.Authorization = `Bearer ${await auth.source.token()}`;
    if (auth.kind === 'basic') {
      headers.Authorization = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
    }
    if (req.body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(req.body));
    const basePath = this.base.pathname.replace(/\/+$/, '');
    const timeoutMs = req.timeoutMs ?? this.timeoutMs;
    return await new Promise<HttpStream>((resolve, reject) => {
      if (req.signal?.aborted) {
        reject(abortReason(req.signal));
        return;
      }
      const options: https.RequestOptions = {
        protocol: this.base.protocol,
        hostname: this.base.hostname.replace(/^\[|\]$/g, ''),
        port: this.base.port || (this.isHttps ? 443 : 80),
        path: basePath + req.path,
        method: req.method,
        headers,
        agent: this.agent,
      };
      const request = (this.isHttps ? https : http).request(options);
      let settled = false;
      let response: IncomingMessage | undefined;
      const timer = setTimeout(() => {
        request.destroy(new RequestTimeoutError(`${req.method} ${req.path}: no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      timer.unref();
      const onAbort = (): void => {
        const reason = abortReason(req.signal);
        response?.destroy(reason);
        request.destroy(reason);
      };
      req.signal?.addEventListener('abort', onAbort, { once: true });
      const finish = (): void => {
        clearTimeout(timer);
        req.signal?.removeEventListener('abort', onAbort);
      };
      request.on('response', (res) => {
        settled = true;
        response = res;
        clearTimeout(timer);
        // The caller's signal keeps working on the body: aborting ends the stream.
        res.on('close', finish);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: res });
      });
      request.on('error', (err) => {
        finish();
        if (settled) return;
        if (request.reusedSocket && (err as NodeJS.ErrnoException).code === 'ECONNRESET') {
          reject(new StaleConnectionError(err));
        } else {
          reject(err);
        }
      });
      if (req.body !== undefined) request.end(req.body);
      else request.end();
    });
  }
}

function abortReason(signal?: AbortSignal): Error {
  return signal?.reason instanceof Error ? signal.reason : new Error('request aborted');
}

/** Read a whole body as UTF-8, capped at 256 MiB so a runaway answer cannot exhaust memory. */
async function readBody(body: Readable, signal?: AbortSignal): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  const limit = 256 * 1024 * 1024;
  for await (const chunk of body) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > limit) {
      body.destroy();
      throw new Error(`response body larger than ${limit} bytes`);
    }
    chunks.push(buf);
  }
  if (signal?.aborted) throw abortReason(signal);
  return Buffer.concat(chunks).toString('utf8');
}
