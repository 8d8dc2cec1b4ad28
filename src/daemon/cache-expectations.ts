// After the agent writes an object, its watch cache may still hold the version before the write for a moment.
// A reconcile that sees that older version must not act on it: it requeues until the cache has moved past it
// (or the wait is over 10 s, the watch may have missed nothing but coalesced). resourceVersions are compared only
// for equality, as the API asks.
import type { KubeObject } from '../kube/object.js';
import type { Clock } from '../util/clock.js';

export const EXPECTATION_TIMEOUT_MS = 10_000;

export class ResourceVersionExpectations {
  private readonly pending = new Map<string, { before: string; at: number }>();

  constructor(private readonly clock: Clock) {}

  /** We have just written `obj` (whose cached resourceVersion was `before`). */
  expect(obj: KubeObject, before: string | undefined): void {
    const uid = obj.metadata?.uid;
    if (uid && before) this.pending.set(uid, { before, at: this.clock.now() });
  }

  /** True when the cached `obj` is not older than our last write of it. */
  satisfied(obj: KubeObject): boolean {
    const uid = obj.metadata?.uid;
    const entry = uid ? this.pending.get(uid) : undefined;
    if (!entry || !uid) return true;
    if (obj.metadata?.resourceVersion !== entry.before || this.clock.now() - entry.at > EXPECTATION_TIMEOUT_MS) {
      this.pending.delete(uid);
      return true;
    }
    return false;
  }

  forget(obj: KubeObject): void {
    if (obj.metadata?.uid) this.pending.delete(obj.metadata.uid);
  }

  get size(): number {
    return this.pending.size;
  }
}
