// Exponential backoff: the one rule for every retry delay in the agent and the controller (docs/adr/0004).
// After the n-th failure in a row the delay is initialMs · factor^(n−1), at most maxMs, with up to `jitter` of it
// taken off at random (jitter 0.2: the delay lands in [0.8 d, d]). Jitter is only ever taken off, so maxMs is a
// true maximum and a documented delay is an upper bound; it keeps many clients from retrying in step.

export interface BackoffPolicy {
  /** Delay after the first failure, in ms. */
  initialMs: number;
  /** The delay never grows above this, in ms. */
  maxMs: number;
  /** Growth per failure (default 2). */
  factor?: number;
  /** Fraction taken off at random (default DEFAULT_JITTER); 0 for exact delays. */
  jitter?: number;
}

/** The jitter every retry uses unless it needs exact delays (the work queue's per-key backoff). */
export const DEFAULT_JITTER = 0.2;

/** Throws when the policy cannot give delays: 0 < initialMs <= maxMs, factor >= 1, 0 <= jitter < 1. */
export function checkBackoffPolicy(policy: BackoffPolicy): void {
  const { initialMs, maxMs, factor = 2, jitter = DEFAULT_JITTER } = policy;
  if (!(initialMs > 0) || !(maxMs >= initialMs) || !(factor >= 1)) {
    throw new Error('backoff needs 0 < initialMs <= maxMs and factor >= 1');
  }
  if (!(jitter >= 0 && jitter < 1)) throw new Error('backoff jitter must be in [0, 1)');
}

/** The delay (ms) after `failures` failures in a row (1 or more; less counts as 1). */
export function backoffDelay(policy: BackoffPolicy, failures: number, random: () => number = Math.random): number {
  const { initialMs, maxMs, factor = 2, jitter = DEFAULT_JITTER } = policy;
  // factor ** a big exponent is Infinity, which min() turns into maxMs.
  const nominal = Math.min(maxMs, initialMs * factor ** Math.max(0, failures - 1));
  return Math.round(jitter > 0 ? nominal * (1 - jitter * random()) : nominal);
}

export interface BackoffOptions extends Partial<BackoffPolicy> {
  random?: (() => number) | undefined;
}

/** Counts failures itself: next() gives the delay after one more, reset() after a success (default 1 s → 30 s). */
export class Backoff {
  private count = 0;
  readonly policy: Required<BackoffPolicy>;
  private readonly random: () => number;

  constructor(options: BackoffOptions = {}) {
    this.policy = {
      initialMs: options.initialMs ?? 1000,
      maxMs: options.maxMs ?? 30_000,
      factor: options.factor ?? 2,
      jitter: options.jitter ?? DEFAULT_JITTER,
    };
    checkBackoffPolicy(this.policy);
    this.random = options.random ?? Math.random;
  }

  /** The next delay (ms); each call grows the following one until maxMs. */
  next(): number {
    this.count = Math.min(this.count + 1, 1024);
    return backoffDelay(this.policy, this.count, this.random);
  }

  /** After a success: the next failure waits initialMs again. */
  reset(): void {
    this.count = 0;
  }

  /** Failures counted since the last reset. */
  get failures(): number {
    return this.count;
  }
}
