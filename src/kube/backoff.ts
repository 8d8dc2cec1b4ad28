// Jittered exponential backoff for reconnecting watches and retrying requests (default 1 s → 30 s).

export interface BackoffOptions {
  initialMs?: number;
  maxMs?: number;
  factor?: number;
  /** Fraction taken off at random (0.2: a delay lands in [0.8 d, d]), so many clients do not retry in step. */
  jitter?: number;
  random?: () => number;
}

export class Backoff {
  private attempts = 0;
  readonly initialMs: number;
  readonly maxMs: number;
  private readonly factor: number;
  private readonly jitter: number;
  private readonly random: () => number;

  constructor(options: BackoffOptions = {}) {
    this.initialMs = options.initialMs ?? 1000;
    this.maxMs = options.maxMs ?? 30_000;
    this.factor = options.factor ?? 2;
    this.jitter = options.jitter ?? 0.2;
    this.random = options.random ?? Math.random;
    if (!(this.initialMs > 0) || !(this.maxMs >= this.initialMs) || !(this.factor >= 1)) {
      throw new Error('backoff needs 0 < initialMs <= maxMs and factor >= 1');
    }
    if (!(this.jitter >= 0 && this.jitter < 1)) throw new Error('backoff jitter must be in [0, 1)');
  }

  /** The next delay (ms); each call grows the following one until maxMs. */
  next(): number {
    const base = Math.min(this.maxMs, this.initialMs * this.factor ** this.attempts);
    this.attempts = Math.min(this.attempts + 1, 64);
    return Math.round(base * (1 - this.jitter * this.random()));
  }

  /** After a success: the next failure waits initialMs again. */
  reset(): void {
    this.attempts = 0;
  }

  get failures(): number {
    return this.attempts;
  }
}
