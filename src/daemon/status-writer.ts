// Coalesced, rate-limited status writes for one object: request() marks the status dirty; one write runs at a
// time, at most one per minIntervalMs, and the first after a quiet period goes out at once (or after windowMs, to
// gather what comes with it), so a phase change is on the API server within a second while a burst of changes
// becomes one write. A failed write is retried
// with backoff (1 s → 30 s). Whether anything is sent at all is the write function's call (it skips unchanged).
import type { Logger } from '../observability/logger.js';
import { backoffDelay, type BackoffPolicy } from '../util/backoff.js';
import type { Clock, TimerHandle } from '../util/clock.js';
import { errorMessage } from '../util/error-message.js';

export const DEFAULT_STATUS_MIN_INTERVAL_MS = 300;
/** After failed writes: 1 s, doubling, at most 30 s, jittered. */
const STATUS_WRITE_BACKOFF: BackoffPolicy = { initialMs: 1000, maxMs: 30_000 };

export interface StatusWriterOptions {
  clock: Clock;
  logger: Logger;
  /** Performs one write (computes the status from the current state and patches it if it changed). */
  write: () => Promise<void>;
  minIntervalMs?: number | undefined;
  /** The first request after a quiet period waits this long, so the changes made with it share its write (0). */
  windowMs?: number | undefined;
  /** What is written, for the log line of a failed write (e.g. "NodeImage status"). */
  subject?: string | undefined;
}

export class StatusWriter {
  private readonly minIntervalMs: number;
  private timer: TimerHandle | undefined;
  private writing: Promise<void> | undefined;
  private dirty = false;
  private lastWriteAt = -Infinity;
  private failures = 0;
  private stopped = false;

  constructor(private readonly options: StatusWriterOptions) {
    this.minIntervalMs = options.minIntervalMs ?? DEFAULT_STATUS_MIN_INTERVAL_MS;
  }

  /** The status may have changed: write it soon. */
  request(): void {
    if (this.stopped) return;
    this.dirty = true;
    if (this.writing || this.timer) return;
    const window = this.options.windowMs ?? 0;
    this.schedule(Math.max(window, this.lastWriteAt + this.minIntervalMs - this.options.clock.now()));
  }

  /** Write now what is pending (shutdown), then stop taking requests. */
  async close(): Promise<void> {
    this.timer?.cancel();
    this.timer = undefined;
    while (this.writing) await this.writing;
    if (this.dirty) await this.run();
    this.stopped = true;
  }

  /** Stop taking requests without writing what is pending (a write under way is waited for). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
    while (this.writing) await this.writing;
  }

  private schedule(ms: number): void {
    this.timer = this.options.clock.setTimer(() => {
      this.timer = undefined;
      void this.run();
    }, ms);
  }

  private run(): Promise<void> {
    this.dirty = false;
    this.lastWriteAt = this.options.clock.now();
    const writing = this.options
      .write()
      .then(
        () => {
          this.failures = 0;
        },
        (err: unknown) => {
          this.failures++;
          this.dirty = true;
          this.options.logger.warn(
            { err: errorMessage(err), failures: this.failures },
            `${this.options.subject ?? 'status'} write failed; retrying`,
          );
        },
      )
      .finally(() => {
        this.writing = undefined;
        if (this.dirty && !this.stopped && !this.timer) {
          const backoff = this.failures > 0 ? backoffDelay(STATUS_WRITE_BACKOFF, this.failures) : 0;
          const wait = Math.max(backoff, this.lastWriteAt + this.minIntervalMs - this.options.clock.now());
          this.schedule(Math.max(0, wait));
        }
      });
    this.writing = writing;
    return writing;
  }
}
