// One rule for "does the cache show our own write yet?" (docs/adr/0004).
//
// After a controller writes an object, its informer may still hold the version before the write for a moment; a
// reconcile that acted on that older version would redo or undo the write. So each write is remembered with the
// resourceVersion the server gave it (W), and the cache counts as fresh for that object once
//   - the cached object shows W, or
//   - the informer has delivered W (a later write by someone else may already have replaced it in the cache), or
//   - the object is gone (forget), or
//   - the deadline has passed (a relist can skip W altogether; the deadline bounds the wait).
// resourceVersions are compared only for equality: the API defines them as opaque strings.
import type { Clock } from '../util/clock.js';
import type { InformerHandlers } from './informer/informer.js';
import type { KubeObject } from './object.js';

/** How long a write may stay unseen before the cache is trusted anyway. */
export const OWN_WRITE_DEADLINE_MS = 10_000;

interface PendingWrite {
  resourceVersion: string;
  deadline: number;
}

export class OwnWriteExpectations {
  private readonly pending = new Map<string, PendingWrite>();

  constructor(
    private readonly clock: Clock,
    private readonly deadlineMs = OWN_WRITE_DEADLINE_MS,
  ) {}

  /** We wrote the object under `key`; the server stored it as `resourceVersion` (nothing to expect if unknown). */
  expect(key: string, resourceVersion: string | undefined): void {
    if (resourceVersion) this.pending.set(key, { resourceVersion, deadline: this.clock.now() + this.deadlineMs });
  }

  /** The informer delivered this version of the object under `key`. */
  observe(key: string, resourceVersion: string | undefined): void {
    if (resourceVersion !== undefined && this.pending.get(key)?.resourceVersion === resourceVersion) {
      this.pending.delete(key);
    }
  }

  /** True when the cached object (at `cachedResourceVersion`) may be acted on: it does not predate our write. */
  isFresh(key: string, cachedResourceVersion: string | undefined): boolean {
    const want = this.pending.get(key);
    if (!want) return true;
    if (cachedResourceVersion === want.resourceVersion || this.clock.now() > want.deadline) {
      this.pending.delete(key);
      return true;
    }
    return false;
  }

  /** The object is gone: nothing more to expect. */
  forget(key: string): void {
    this.pending.delete(key);
  }

  /**
   * Let `informer` tell these expectations what it delivers: every added or updated version is observed, a deleted
   * object is forgotten. Returns a function that stops it.
   */
  follow<T extends KubeObject>(
    informer: { addHandlers(handlers: InformerHandlers<T>): () => void },
    keyOf: (obj: T) => string,
  ): () => void {
    return informer.addHandlers({
      onAdd: (obj) => this.observe(keyOf(obj), obj.metadata?.resourceVersion),
      onUpdate: (_, obj) => this.observe(keyOf(obj), obj.metadata?.resourceVersion),
      onDelete: (obj) => this.forget(keyOf(obj)),
    });
  }

  get size(): number {
    return this.pending.size;
  }
}
