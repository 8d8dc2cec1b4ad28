// A work queue with client-go's semantics: a key waiting is held once (dedupe); a key being processed is never handed
// out again until done() (an add meanwhile marks it dirty and re-queues it after); delayed adds; rate-limited re-adds
// with per-key backoff and forget(); shutdown that stops accepting and lets in-flight work drain.
import { systemClock, type Clock, type TimerHandle } from '../../util/clock.js';
import type { KubeMetrics } from '../metrics.js';
import { ExponentialFailureRateLimiter } from './rate-limiter.js';

export interface WorkQueueOptions {
  /** For metrics and logs. */
  name: string;
  clock?: Clock;
  metrics?: KubeMetrics | undefined;
}

interface Delayed {
  at: number;
  timer: TimerHandle;
}

export class WorkQueue<K = string> {
  readonly name: string;
  private readonly clock: Clock;
  private readonly rateLimiter = new ExponentialFailureRateLimiter<K>();
  private readonly metrics?: KubeMetrics | undefined;
  /** Keys ready, in order. */
  private queue: K[] = [];
  /** Keys that need processing (queued, or added again while processing). */
  private readonly dirty = new Set<K>();
  /** Keys handed out by get() and not yet done(). */
  private readonly processing = new Set<K>();
  private readonly delayed = new Map<K, Delayed>();
  private readonly getters: ((key: K | undefined) => void)[] = [];
  private drainWaiters: (() => void)[] = [];
  private shuttingDown = false;

  constructor(options: WorkQueueOptions) {
    this.name = options.name;
    this.clock = options.clock ?? systemClock;
    this.metrics = options.metrics;
  }

  /** Queue `key` unless it is already waiting; ignored after shutdown. */
  add(key: K): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.metrics?.queueAdds.inc({ name: this.name });
    this.dirty.add(key);
    if (this.processing.has(key)) return;
    this.queue.push(key);
    this.handOut();
  }

  /** Queue `key` after `ms`; a key already waiting for later is moved to the earlier time. */
  addAfter(key: K, ms: number): void {
    if (this.shuttingDown) return;
    if (!(ms > 0)) {
      this.add(key);
      return;
    }
    const at = this.clock.now() + ms;
    const known = this.delayed.get(key);
    if (known && known.at <= at) return;
    known?.timer.cancel();
    const timer = this.clock.setTimer(() => {
      if (this.delayed.get(key)?.timer === timer) this.delayed.delete(key);
      this.add(key);
    }, ms);
    this.delayed.set(key, { at, timer });
  }

  /** Queue `key` after its rate limiter's backoff (a failed attempt). */
  addRateLimited(key: K): void {
    if (this.shuttingDown) return;
    this.metrics?.queueRetries.inc({ name: this.name });
    this.addAfter(key, this.rateLimiter.when(key));
  }

  /** `key` succeeded: its backoff starts over. */
  forget(key: K): void {
    this.rateLimiter.forget(key);
  }

  numRequeues(key: K): number {
    return this.rateLimiter.numRequeues(key);
  }

  /**
   * The next key to process, waiting for one if needed. After shutdown the keys still queued are handed out
   * (drain); then it answers undefined: the worker should stop.
   */
  get(): Promise<K | undefined> {
    const key = this.take();
    if (key !== undefined) return Promise.resolve(key);
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.getters.push(resolve));
  }

  /** Processing of `key` finished; if it was added meanwhile it is queued again now. */
  done(key: K): void {
    if (!this.processing.delete(key)) return;
    if (this.dirty.has(key)) {
      this.queue.push(key);
      this.handOut();
    }
    this.checkDrained();
    this.updateDepth();
  }

  /** Keys ready to be handed out. */
  len(): number {
    return this.queue.length;
  }

  /** Keys waiting for a delayed add. */
  delayedLen(): number {
    return this.delayed.size;
  }

  inFlight(): number {
    return this.processing.size;
  }

  /** Stop accepting keys and drop delayed ones; idle workers get undefined; queued keys are still handed out. */
  shutDown(): void {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    for (const d of this.delayed.values()) d.timer.cancel();
    this.delayed.clear();
    if (this.queue.length === 0) {
      for (const g of this.getters.splice(0)) g(undefined);
    }
    this.checkDrained();
  }

  /** shutDown(), then resolve when every queued and in-flight key has been processed and done(). */
  shutDownWithDrain(): Promise<void> {
    this.shutDown();
    if (this.drained()) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  private take(): K | undefined {
    if (this.queue.length === 0) return undefined;
    const key = this.queue.shift() as K;
    this.processing.add(key);
    this.dirty.delete(key);
    this.updateDepth();
    return key;
  }

  private handOut(): void {
    while (this.getters.length > 0 && this.queue.length > 0) {
      const getter = this.getters.shift() as (key: K | undefined) => void;
      getter(this.take());
    }
    if (this.shuttingDown && this.queue.length === 0) {
      for (const g of this.getters.splice(0)) g(undefined);
    }
    this.updateDepth();
  }

  private drained(): boolean {
    return this.shuttingDown && this.queue.length === 0 && this.processing.size === 0;
  }

  private checkDrained(): void {
    if (!this.drained()) return;
    for (const g of this.getters.splice(0)) g(undefined);
    for (const w of this.drainWaiters.splice(0)) w();
  }

  private updateDepth(): void {
    this.metrics?.queueDepth.set({ name: this.name }, this.queue.length);
  }
}
