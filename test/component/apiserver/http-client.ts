// emulator: the subject under test (the emulator's own component tests)
// Small raw HTTP helpers for the API emulator's component tests: requests that return status and body, and a
// watch reader that collects the events of a stream.
import { waitFor } from '../../support/wait.js';

export interface Reply {
  status: number;
  body: any;
  headers: Headers;
}

export class RawClient {
  constructor(readonly base: string) {}

  async request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
    const init: RequestInit = { method, headers: { 'content-type': 'application/json', ...headers } };
    if (body !== undefined) init.body = typeof body === 'string' ? body : JSON.stringify(body);
    const response = await fetch(this.base + path, init);
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON
    }
    return { status: response.status, body: parsed, headers: response.headers };
  }

  get(path: string, headers?: Record<string, string>): Promise<Reply> {
    return this.request('GET', path, undefined, headers);
  }
  post(path: string, body: unknown): Promise<Reply> {
    return this.request('POST', path, body);
  }
  put(path: string, body: unknown): Promise<Reply> {
    return this.request('PUT', path, body);
  }
  patch(path: string, body: unknown, type = 'merge'): Promise<Reply> {
    return this.request('PATCH', path, body, { 'content-type': `application/${type}-patch+json` });
  }
  delete(path: string, body?: unknown): Promise<Reply> {
    return this.request('DELETE', path, body);
  }

  /** POST that must succeed (201); returns the created object. */
  async create(path: string, body: unknown): Promise<any> {
    const reply = await this.post(path, body);
    if (reply.status !== 201) throw new Error(`create ${path}: ${reply.status} ${JSON.stringify(reply.body)}`);
    return reply.body;
  }

  watch(path: string, headers: Record<string, string> = {}): Promise<WatchReader> {
    return WatchReader.open(this.base + path, headers);
  }
}

export interface WatchEvent {
  type: string;
  object: any;
}

export class WatchReader {
  readonly events: WatchEvent[] = [];
  ended = false;
  status = 0;
  private readonly controller = new AbortController();

  private constructor() {}

  static async open(url: string, headers: Record<string, string>): Promise<WatchReader> {
    const reader = new WatchReader();
    const response = await fetch(url, { headers, signal: reader.controller.signal });
    reader.status = response.status;
    void reader.pump(response);
    return reader;
  }

  private async pump(response: Response): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let nl: number;
        while ((nl = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          if (line.trim()) this.events.push(JSON.parse(line) as WatchEvent);
        }
      }
    } catch {
      // aborted or connection dropped
    }
    this.ended = true;
  }

  /** Events other than BOOKMARK, as [type, name]. */
  summary(): [string, string][] {
    return this.events.filter((e) => e.type !== 'BOOKMARK').map((e) => [e.type, e.object?.metadata?.name]);
  }

  async waitForEvents(count: number, what = `${count} events`): Promise<WatchEvent[]> {
    await waitFor(() => this.events.filter((e) => e.type !== 'BOOKMARK').length >= count, { message: what });
    return this.events.filter((e) => e.type !== 'BOOKMARK');
  }

  async waitForEnd(): Promise<void> {
    await waitFor(() => this.ended, { message: 'the watch stream to end' });
  }

  close(): void {
    this.controller.abort();
  }
}
