// An in-memory ListWatcher: a tiny model of a collection with resourceVersions, whose watches the test drives.
import { ApiError } from '../../../../src/kube/errors.js';
import type { ListOptions, WatchOptions } from '../../../../src/kube/client.js';
import type { ListWatcher } from '../../../../src/kube/informer/informer.js';
import { objectKey, type KubeList, type KubeObject } from '../../../../src/kube/object.js';
import type { WatchEvent, WatchStream } from '../../../../src/kube/watch-stream.js';

export class FakeWatch implements WatchStream<KubeObject> {
  private readonly buffer: (WatchEvent | Error | 'end')[] = [];
  private wake?: () => void;
  closed = false;

  constructor(readonly opts: WatchOptions) {
    opts.signal?.addEventListener('abort', () => this.close(), { once: true });
  }

  push(event: WatchEvent): void {
    this.buffer.push(event);
    this.wake?.();
  }

  fail(err: Error): void {
    this.buffer.push(err);
    this.wake?.();
  }

  end(): void {
    this.buffer.push('end');
    this.wake?.();
  }

  close(): void {
    this.closed = true;
    this.end();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<WatchEvent> {
    for (;;) {
      while (this.buffer.length === 0) await new Promise<void>((r) => (this.wake = r));
      const next = this.buffer.shift()!;
      if (next === 'end') return;
      if (next instanceof Error) throw next;
      yield next;
    }
  }
}

export function obj(name: string, rv: number, extra: Partial<KubeObject['metadata']> = {}): KubeObject {
  return { metadata: { name, namespace: 'ns', resourceVersion: String(rv), ...extra } };
}

export class FakeListWatcher implements ListWatcher<KubeObject> {
  readonly objects = new Map<string, KubeObject>();
  rv = 100;
  readonly lists: ListOptions[] = [];
  readonly watches: FakeWatch[] = [];
  /** Errors the next watch() calls throw, in order. */
  watchErrors: Error[] = [];
  listErrors: Error[] = [];

  list(opts: ListOptions): Promise<KubeList<KubeObject>> {
    this.lists.push(opts);
    const err = this.listErrors.shift();
    if (err) return Promise.reject(err);
    return Promise.resolve({
      metadata: { resourceVersion: String(this.rv) },
      items: [...this.objects.values()].map((o) => structuredClone(o)),
    });
  }

  watch(opts: WatchOptions): Promise<WatchStream<KubeObject>> {
    const err = this.watchErrors.shift();
    if (err) return Promise.reject(err);
    const w = new FakeWatch(opts);
    this.watches.push(w);
    return Promise.resolve(w);
  }

  get current(): FakeWatch {
    return this.watches[this.watches.length - 1]!;
  }

  /** Change the collection; returns the event a watch would carry. */
  upsert(name: string, extra: Partial<KubeObject['metadata']> = {}): WatchEvent {
    const existed = this.objects.has(`ns/${name}`);
    const o = obj(name, ++this.rv, extra);
    this.objects.set(objectKey(o), o);
    return { type: existed ? 'MODIFIED' : 'ADDED', object: structuredClone(o) };
  }

  remove(name: string): WatchEvent {
    const o = this.objects.get(`ns/${name}`)!;
    this.objects.delete(`ns/${name}`);
    return { type: 'DELETED', object: { ...o, metadata: { ...o.metadata, resourceVersion: String(++this.rv) } } };
  }
}

export function gone(): ApiError {
  return new ApiError(
    { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' },
    'WATCH',
    '/x',
  );
}

export function serverError(): ApiError {
  return new ApiError({ kind: 'Status', code: 500, reason: 'InternalError', message: 'boom' }, 'WATCH', '/x');
}
