// Our own writes the caches have not shown yet. After writing an object the controller remembers the
// resourceVersion it got back; a reconcile that depends on that object asks `satisfied()` and requeues shortly
// when the cache is still older (level-triggered: never act on a cache that does not yet show our own write).
// resourceVersions are compared as integers when both are (etcd revisions, the emulator's counter); otherwise only
// equality satisfies. An expectation older than `timeoutMs` is dropped so a lost event cannot wedge a key.
import type { Clock } from '../../util/clock.js';

interface Expected {
  rv: string;
  at: number;
}

export class ResourceVersionExpectations {
  private readonly expected = new Map<string, Expected>();

  constructor(
    private readonly clock: Clock,
    private readonly timeoutMs = 30_000,
  ) {}

  expect(key: string, resourceVersion: string | undefined): void {
    if (resourceVersion) this.expected.set(key, { rv: resourceVersion, at: this.clock.now() });
  }

  /** True when the cached object is at least as new as our last write of it (or nothing is expected). */
  satisfied(key: string, cachedResourceVersion: string | undefined): boolean {
    const want = this.expected.get(key);
    if (!want) return true;
    if (cachedResourceVersion !== undefined && isAtLeast(cachedResourceVersion, want.rv)) {
      this.expected.delete(key);
      return true;
    }
    if (this.clock.now() - want.at > this.timeoutMs) {
      this.expected.delete(key);
      return true;
    }
    return false;
  }

  /** The object is gone: nothing more to expect. */
  forget(key: string): void {
    this.expected.delete(key);
  }

  get size(): number {
    return this.expected.size;
  }
}

function isAtLeast(have: string, want: string): boolean {
  if (have === want) return true;
  if (/^\d+$/.test(have) && /^\d+$/.test(want)) return BigInt(have) >= BigInt(want);
  return false;
}
