// One rule for "does the cache show our own write yet?" (docs/adr/0004).
//
// After a controller writes an object, its informer may still hold the version before the write for a moment; a
// reconcile that acted on that older version would redo or undo the write. So each write is remembered with the
// resourceVersion the server gave it (W), and the cache counts as fresh for that object once
//   - the cached object shows W, or
//   - the informer has delivered W (a later write by someone else may already have replaced it in the cache; the
//     last few versions delivered per object are remembered, so W delivered before the write's response still
//     counts), or
//   - the object is gone (forget), or
//   - the deadline has passed (a relist can skip W altogether; the deadline bounds the wait).
// resourceVersions are compared only for equality: the API defines them as opaque strings.
import type { Clock } from '../util/clock.js';
import type { InformerHandlers } from './informer/informer.js';
import type { KubeObject } from './object.js';

/** How long a write may stay unseen before the cache is trusted anyway. */
export const OWN_WRITE_DEADLINE_MS = 10_000;

/** Versions remembered per object, delivered before our write's response came back. */
const DELIVERED_VERSIONS_KEPT = 8;
/** Observations between sweeps of the objects not delivered for a deadline. */
const SWEEP_EVERY = 1024;

interface PendingWrite {
  resourceVersion: string;
  deadline: number;
}

interface Delivered {
  versions: string[];
  at: number;
}

export class OwnWriteExpectations {
  private readonly pending = new Map<string, PendingWrite>();
  private readonly delivered = new Map<string, Delivered>();
  private observedSinceSweep = 0;

  constructor(
    private readonly clock: Clock,
    private readonly deadlineMs = OWN_WRITE_DEADLINE_MS,
  ) {}

  /** We wrote the object under `key`; the server stored it as `resourceVersion` (nothing to expect if unknown). */
  expect(key: string, resourceVersion: string | undefined): void {
    if (!resourceVersion) return;
    if (this.delivered.get(key)?.versions.includes(resourceVersion)) {
      this.pending.delete(key); // the watch was quicker than the write's response
      return;
    }
    this.pending.set(key, { resourceVersion, deadline: this.clock.now() + this.deadlineMs });
  }

  /** The informer delivered this version of the object under `key`. */
  observe(key: string, resourceVersion: string | undefined): void {
    if (resourceVersion === undefined) return;
    if (this.pending.get(key)?.resourceVersion === resourceVersion) this.pending.delete(key);
    const now = this.clock.now();
    const seen = this.delivered.get(key);
    if (seen) {
      seen.versions.push(resourceVersion);
      if (seen.versions.length > DELIVERED_VERSIONS_KEPT) seen.versions.shift();
      seen.at = now;
    } else {
      this.delivered.set(key, { versions: [resourceVersion], at: now });
    }
    if (++this.observedSinceSweep >= SWEEP_EVERY) this.sweep(now);
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
    this.delivered.delete(key);
  }

  /** Drop what was delivered longer than a deadline ago: a write's response never takes that long. */
  private sweep(now: number): void {
    this.observedSinceSweep = 0;
    for (const [key, seen] of this.delivered) if (now - seen.at > this.deadlineMs) this.delivered.delete(key);
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
