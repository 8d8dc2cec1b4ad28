// The rate limiter of work-queue retries, as client-go's default controller limiter: per-key exponential failure
// backoff (client-go adds an overall token bucket of 10 qps, burst 100, that a node agent's few keys never reach).
import { backoffDelay } from '../../util/backoff.js';

/** base * 2^failures, capped at max (client-go default 5 ms → 1000 s). */
export class ExponentialFailureRateLimiter<K> {
  private readonly failures = new Map<K, number>();

  constructor(
    readonly baseMs = 5,
    readonly maxMs = 1_000_000,
  ) {
    if (!(baseMs > 0) || !(maxMs >= baseMs)) throw new Error('rate limiter needs 0 < baseMs <= maxMs');
  }

  /** How long `key` should wait before its next try; counts a failure. */
  when(key: K): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    // exact delays: the per-key backoff is client-go's, without jitter
    return backoffDelay({ initialMs: this.baseMs, maxMs: this.maxMs, jitter: 0 }, n + 1);
  }

  /** The key succeeded: start its backoff over. */
  forget(key: K): void {
    this.failures.delete(key);
  }

  /** Failures counted for `key` since its last forget(). */
  numRequeues(key: K): number {
    return this.failures.get(key) ?? 0;
  }
}
