// A small in-process queue for the emulator's controllers: keyed jobs (a key queued twice runs once), run one at
// a time soon after they are queued; a job that hits a write conflict is queued again.
import type { Logger } from '../../../../src/observability/logger.js';
import { ApiError } from '../errors.js';

const MAX_RETRIES = 20;

export class WorkQueue {
  private readonly jobs = new Map<string, () => Promise<void>>();
  private readonly retries = new Map<string, number>();
  private running = false;
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly logger: Logger) {}

  enqueue(key: string, job: () => Promise<void>): void {
    this.jobs.set(key, job);
    if (!this.running) {
      this.running = true;
      setImmediate(() => void this.drain());
    }
  }

  /** Resolves once no job is queued or running. */
  idle(): Promise<void> {
    if (!this.running && this.jobs.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private async drain(): Promise<void> {
    for (;;) {
      const next = this.jobs.entries().next();
      if (next.done) break;
      const [key, job] = next.value;
      this.jobs.delete(key);
      try {
        await job();
        this.retries.delete(key);
      } catch (err) {
        this.onError(key, job, err);
      }
    }
    this.running = false;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  private onError(key: string, job: () => Promise<void>, err: unknown): void {
    if (err instanceof ApiError && err.code === 404) return;
    const attempts = (this.retries.get(key) ?? 0) + 1;
    if (err instanceof ApiError && err.code === 409 && attempts < MAX_RETRIES) {
      this.retries.set(key, attempts);
      if (!this.jobs.has(key)) this.jobs.set(key, job);
      return;
    }
    this.retries.delete(key);
    this.logger.warn({ err, job: key }, 'emulator controller job failed');
  }
}
