// A Transport that answers from a handler and records what was sent: the REST client's wire without a network.
import { PassThrough, Readable } from 'node:stream';
import type { HttpRequest, HttpResponse, HttpStream, Transport } from '../../../../src/kube/transport.js';

export interface Answer {
  status: number;
  body?: unknown;
}

export type Handler = (req: HttpRequest) => Answer | Promise<Answer>;

export class FakeTransport implements Transport {
  readonly sent: HttpRequest[] = [];
  /** Open watch bodies; write lines into them, end() them. */
  readonly streams: PassThrough[] = [];

  constructor(public handler: Handler = () => ({ status: 200, body: {} })) {}

  async request(req: HttpRequest): Promise<HttpResponse> {
    this.sent.push(req);
    const a = await this.handler(req);
    return { status: a.status, headers: {}, body: typeof a.body === 'string' ? a.body : JSON.stringify(a.body ?? {}) };
  }

  async stream(req: HttpRequest): Promise<HttpStream> {
    this.sent.push(req);
    const a = await this.handler(req);
    if (a.status !== 200) {
      const text = typeof a.body === 'string' ? a.body : JSON.stringify(a.body ?? {});
      return { status: a.status, headers: {}, body: Readable.from([Buffer.from(text)]) };
    }
    const body = new PassThrough();
    this.streams.push(body);
    return { status: 200, headers: {}, body };
  }

  close(): void {}

  last(): HttpRequest {
    return this.sent[this.sent.length - 1]!;
  }
}

export function status(code: number, reason: string, message = reason): Answer {
  return { status: code, body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message } };
}
