// The admission webhook server: HTTPS, a router of handlers by path (one per webhook the controller registers),
// AdmissionReview v1 in and out. The certificate can be swapped at run time (rotation) without a restart. With a
// client CA every caller must present a certificate it signed (the API server's webhook client certificate); others
// are answered 401/403 before their body is read.
import { createServer, type Server } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { ControllerMetrics } from '../shared/metrics.js';
import {
  jsonPatch,
  type AdmissionHandler,
  type AdmissionRequest,
  type AdmissionResponse,
  type AdmissionReview,
} from './admission-review.js';
import { clientRefusal, type ClientAuthPolicy } from './client-auth.js';
import { closeNow, listenOn } from '../../util/server-listen.js';

const MAX_BODY_BYTES = 3 * 1024 * 1024 + 64 * 1024;
/** How long kube-apiserver's webhook client keeps an idle connection for reuse (Go's http.Transport default). */
export const API_SERVER_IDLE_CONN_TIMEOUT_MS = 90_000;
/**
 * How long this server keeps an idle connection: longer than its client, so the client always closes first. With
 * Node's default (5 s) the server closed connections the API server was about to reuse, and a CRR create failed with
 * `failed calling webhook ... write: broken pipe` (seen on the real cluster with a CRR every few seconds).
 */
const KEEP_ALIVE_TIMEOUT_MS = API_SERVER_IDLE_CONN_TIMEOUT_MS + 30_000;

export interface WebhookServerOptions {
  certPem: string;
  keyPem: string;
  logger: Logger;
  metrics: ControllerMetrics;
  /** Accept only callers with a client certificate this CA signed; absent: answer anyone. */
  clientAuth?: ClientAuthPolicy | undefined;
}

export class WebhookServer {
  private readonly handlers = new Map<string, AdmissionHandler>();
  private readonly server: Server;
  private cert: { certPem: string; keyPem: string };
  private clientAuth: ClientAuthPolicy | undefined;

  constructor(private readonly o: WebhookServerOptions) {
    this.cert = { certPem: o.certPem, keyPem: o.keyPem };
    this.clientAuth = o.clientAuth;
    const tls = {
      cert: o.certPem,
      key: o.keyPem,
      minVersion: 'TLSv1.2' as const,
      // ask for a certificate, verify it against the client CA, and refuse in HTTP (a clear 401/403) rather than
      // in the handshake
      ...(o.clientAuth ? { requestCert: true, rejectUnauthorized: false, ca: o.clientAuth.caPem } : {}),
    };
    this.server = createServer(tls, (req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        o.logger.error({ err, path: req.url }, 'webhook request failed');
        if (!res.headersSent) reply(res, 500, { message: 'internal error' });
        else res.destroy();
      });
    });
    this.server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
    this.server.headersTimeout = 10_000;
    this.server.requestTimeout = 30_000;
  }

  /** Register the handler of one path (`/validate-apps-kruise-io-imagepulljob`). */
  route(path: string, handler: AdmissionHandler): void {
    if (!path.startsWith('/')) throw new Error(`webhook path ${path} must start with /`);
    if (this.handlers.has(path)) throw new Error(`webhook path ${path} is registered twice`);
    this.handlers.set(path, handler);
  }

  paths(): string[] {
    return [...this.handlers.keys()];
  }

  /** Serve a new certificate from the next connection on. */
  setCertificate(certPem: string, keyPem: string): void {
    this.cert = { certPem, keyPem };
    this.applySecureContext();
  }

  /** Verify clients against a new CA (or other names) from the next connection on; only when one was configured. */
  setClientAuth(policy: ClientAuthPolicy): void {
    if (!this.clientAuth) throw new Error('client authentication was not configured at start');
    this.clientAuth = policy;
    this.applySecureContext();
  }

  /** Are callers required to present the API server's client certificate? */
  get authenticatesClients(): boolean {
    return this.clientAuth !== undefined;
  }

  private applySecureContext(): void {
    this.server.setSecureContext({
      cert: this.cert.certPem,
      key: this.cert.keyPem,
      ...(this.clientAuth ? { ca: this.clientAuth.caPem } : {}),
    });
  }

  async listen(host: string, port: number): Promise<number> {
    const bound = await listenOn(this.server, host, port, (err) =>
      this.o.logger.error({ err }, 'webhook server error'),
    );
    return bound.port;
  }

  close(): Promise<void> {
    return closeNow(this.server);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (this.clientAuth) {
      const refusal = clientRefusal(req.socket as TLSSocket, this.clientAuth.names);
      if (refusal) {
        this.o.metrics.webhookRefusedClients.inc({ code: String(refusal.code) });
        // no body is read: the connection closes after the answer
        res.setHeader('connection', 'close');
        reply(res, refusal.code, { message: refusal.message });
        return;
      }
    }
    const path = new URL(req.url ?? '/', 'https://webhook.invalid').pathname;
    if (path === '/healthz' || path === '/readyz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      return;
    }
    const handler = this.handlers.get(path);
    if (!handler) {
      reply(res, 404, { message: `no admission webhook at ${path}` });
      return;
    }
    if (req.method !== 'POST') {
      reply(res, 405, { message: 'admission webhooks take POST' });
      return;
    }
    const body = await readBody(req);
    if (body === undefined) {
      reply(res, 413, { message: 'request body too large' });
      return;
    }
    let review: AdmissionReview;
    try {
      review = JSON.parse(body) as AdmissionReview;
    } catch {
      reply(res, 400, { message: 'the body is not JSON' });
      return;
    }
    const request = review?.request;
    if (!request || typeof request !== 'object' || typeof request.uid !== 'string') {
      reply(res, 400, { message: 'an AdmissionReview with a request (and request.uid) is expected' });
      return;
    }
    const started = process.hrtime.bigint();
    const response = await this.answer(handler, request);
    this.o.metrics.webhookSeconds.observe({ path }, Number(process.hrtime.bigint() - started) / 1e9);
    this.o.metrics.webhookRequests.inc({ path, allowed: String(response.allowed) });
    reply(res, 200, { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response });
  }

  private async answer(handler: AdmissionHandler, request: AdmissionRequest): Promise<AdmissionResponse> {
    let decision;
    try {
      decision = await handler(request);
    } catch (err) {
      this.o.logger.warn({ err, uid: request.uid }, 'admission handler failed');
      return {
        uid: request.uid,
        allowed: false,
        status: { code: 500, message: `internal error: ${String((err as Error)?.message ?? err)}` },
      };
    }
    if (!decision.allowed) {
      return {
        uid: request.uid,
        allowed: false,
        status: {
          code: decision.code,
          message: decision.message,
          reason: decision.code === 403 ? 'Forbidden' : 'BadRequest',
        },
      };
    }
    const response: AdmissionResponse = { uid: request.uid, allowed: true };
    if (decision.warnings?.length) response.warnings = decision.warnings;
    if (decision.object && request.object) {
      const ops = jsonPatch(request.object, decision.object);
      if (ops.length > 0) {
        response.patchType = 'JSONPatch';
        response.patch = Buffer.from(JSON.stringify(ops)).toString('base64');
      }
    }
    return response;
  }
}

function reply(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
}

async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}
