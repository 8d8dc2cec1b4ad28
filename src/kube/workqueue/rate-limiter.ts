// Rate limiters for work-queue retries, as client-go's: per-key exponential failure backoff, an overall token bucket,
// and the larger of several.
import { backoffDelay } from '../../util/backoff.js';
import type { Clock } from '../../util/clock.js';

export interface RateLimiter<K> {
  /** How long `key` should wait before its next try; counts a failure. */
  when(key: K): number;
  /** The key succeeded: start its backoff over. */
  forget(key: K): void;
  /** Failures counted for `key` since its last forget(). */
  numRequeues(key: K): number;
}

/** base * 2^failures, capped at max (client-go default 5 ms → 1000 s). */
export class ExponentialFailureRateLimiter<K> implements RateLimiter<K> {
  private readonly failures = new Map<K, number>();

  constructor(
    readonly baseMs = 5,
    readonly maxMs = 1_000_000,
  ) {
    if (!(baseMs > 0) || !(maxMs >= baseMs)) throw new Error('rate limiter needs 0 < baseMs <= maxMs');
  }

  when(key: K): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    // exact delays: the per-key backoff is client-go's, without jitter
    return backoffDelay({ initialMs: this.baseMs, maxMs: this.maxMs, jitter: 0 }, n + 1);
  }

  forget(key: K): void {
    this.failures.delete(key);
  }

  numRequeues(key: K): number {
    return this.failures.get(key) ?? 0;
  }
}

/** An overall limit for all keys: `qps` tokens a second, at most `burst` saved up. */
export class TokenBucketRateLimiter<K> implements RateLimiter<K> {
  private tokens: number;
  private last: number;

  constructor(
    private readonly clock: Clock,
    readonly qps = 10,
    readonly burst = 100,
  ) {
    if (!(qps > 0) || !(burst >= 1)) throw new Error('token bucket needs qps > 0 and burst >= 1');
    this.tokens = burst;
    this.last = clock.now();
  }

  when(_key: K): number {
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens / this.qps) * 1000);
  }

  forget(_key: K): void {
    // the bucket is not per key
  }

  numRequeues(_key: K): number {
    return 0;
  }
}

export class MaxOfRateLimiter<K> implements RateLimiter<K> {
  private readonly limiters: RateLimiter<K>[];

  constructor(...limiters: RateLimiter<K>[]) {
    if (limiters.length === 0) throw new Error('MaxOfRateLimiter needs at least one limiter');
    this.limiters = limiters;
  }

  when(key: K): number {
    return Math.max(...this.limiters.map((l) => l.when(key)));
  }

  forget(key: K): void {
    for (const l of this.limiters) l.forget(key);
  }

  numRequeues(key: K): number {
    return Math.max(...this.limiters.map((l) => l.numRequeues(key)));
  }
}

export interface ControllerRateLimiterOptions {
  baseMs?: number;
  maxMs?: number;
  /** Overall retry rate limit; absent: none. client-go's default controller limiter uses 10 qps, burst 100. */
  bucket?: { qps: number; burst: number };
}

/** Per-key exponential backoff (5 ms → 1000 s), optionally combined with an overall token bucket. */
export function controllerRateLimiter<K>(clock: Clock, options: ControllerRateLimiterOptions = {}): RateLimiter<K> {
  const perKey = new ExponentialFailureRateLimiter<K>(options.baseMs ?? 5, options.maxMs ?? 1_000_000);
  if (!options.bucket) return perKey;
  return new MaxOfRateLimiter<K>(
    perKey,
    new TokenBucketRateLimiter<K>(clock, options.bucket.qps, options.bucket.burst),
  );
}
