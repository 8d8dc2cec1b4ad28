// Exponential backoff with jitter for retrying something that failed (connecting to the runtime).

export interface BackoffPolicy {
  /** Delay after the first failure, in ms. */
  initialMs: number;
  /** The delay never grows above this, in ms. */
  maxMs: number;
  /** Each delay is spread by ±jitter (0.2 = ±20 %) so many agents do not retry in step. */
  jitter: number;
}

export const RUNTIME_CONNECT_BACKOFF: BackoffPolicy = { initialMs: 1000, maxMs: 30_000, jitter: 0.2 };

/** The delay before attempt `failures + 1`, given how many attempts failed in a row (>= 1). */
export function backoffDelay(policy: BackoffPolicy, failures: number, random: () => number = Math.random): number {
  const exponent = Math.max(0, Math.min(failures - 1, 30));
  const base = Math.min(policy.maxMs, policy.initialMs * 2 ** exponent);
  const spread = 1 - policy.jitter + 2 * policy.jitter * random();
  return Math.round(Math.min(policy.maxMs, base * spread));
}
