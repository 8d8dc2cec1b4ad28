// What the REST client needs to reach and authenticate to an API server, whatever it was loaded from.
import { readFile } from 'node:fs/promises';
import { systemClock, type Clock } from '../../util/clock.js';

/** A bearer token that may change over time (service-account tokens are rotated by kubelet). */
export interface TokenSource {
  /** The current token; re-read from its file when the cached copy is old or was invalidated. */
  token(): Promise<string>;
  /** Forget the cached token (after a 401), so the next call reads it afresh. */
  invalidate(): void;
}

export type Authentication =
  { kind: 'none' } | { kind: 'token'; source: TokenSource } | { kind: 'basic'; username: string; password: string };

export interface Connection {
  /** Base URL of the API server without a trailing slash; may carry a path prefix. */
  server: string;
  /** PEM bundle of CAs trusted for the server certificate (absent: the system roots). */
  ca?: Buffer | undefined;
  /** Client certificate and key (PEM) for mutual TLS. */
  cert?: Buffer | undefined;
  key?: Buffer | undefined;
  insecureSkipTLSVerify: boolean;
  tlsServerName?: string | undefined;
  auth: Authentication;
  /** Default namespace: the context's namespace or the service account's. */
  namespace?: string | undefined;
  /** Where it came from, for messages ("kubeconfig /root/.kube/config, context kind"). Never holds secrets. */
  origin: string;
}

export class StaticTokenSource implements TokenSource {
  constructor(private readonly value: string) {
    if (!value.trim()) throw new Error('empty bearer token');
  }
  token(): Promise<string> {
    return Promise.resolve(this.value.trim());
  }
  invalidate(): void {
    // a literal token never changes
  }
}

/**
 * A token kept in a file and re-read: at most every `refreshMs` (client-go re-reads every minute), and at once after
 * invalidate(). A read failure keeps the last good token if there is one, so a rotation in progress is survived.
 */
export class FileTokenSource implements TokenSource {
  private cached?: string;
  private readAt = 0;

  constructor(
    readonly path: string,
    private readonly clock: Clock = systemClock,
    private readonly refreshMs = 60_000,
  ) {}

  async token(): Promise<string> {
    const now = this.clock.now();
    if (this.cached !== undefined && now - this.readAt < this.refreshMs) return this.cached;
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      if (this.cached !== undefined) return this.cached;
      throw new Error(`cannot read token file ${this.path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    }
    const token = text.trim();
    if (!token) {
      if (this.cached !== undefined) return this.cached;
      throw new Error(`token file ${this.path} is empty`);
    }
    this.cached = token;
    this.readAt = now;
    return token;
  }

  invalidate(): void {
    this.readAt = Number.NEGATIVE_INFINITY;
  }
}

/** Check and normalise a server URL: http or https, no query, no trailing slash. */
export function normaliseServer(raw: string, where: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`${where}: server ${JSON.stringify(raw)} is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new Error(`${where}: server ${JSON.stringify(raw)} must be an http:// or https:// URL`);
  }
  if (url.search || url.hash) throw new Error(`${where}: server ${JSON.stringify(raw)} must not have a query`);
  if (url.username || url.password) throw new Error(`${where}: server URL must not carry credentials`);
  return url.toString().replace(/\/+$/, '');
}
