// Tests wait for conditions, never for time: poll a predicate until it holds or a deadline passes.

export interface WaitOptions {
  /** Give up after this many milliseconds (default 10 s). */
  timeoutMs?: number;
  /** Poll interval in milliseconds (default 25); 0 polls on every turn of the event loop (for in-process fakes). */
  intervalMs?: number;
  /** Said in the error when the deadline passes. */
  message?: string;
}

/**
 * Poll `probe` until it returns a value that is not undefined/false, and return that value.
 * Errors thrown by the probe count as "not yet"; the last one is reported on timeout.
 */
export async function waitFor<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  options: WaitOptions = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const intervalMs = options.intervalMs ?? 25;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const why = lastError instanceof Error ? `; last error: ${lastError.message}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${options.message ?? 'condition'}${why}`);
    }
    await new Promise((resolve) => (intervalMs === 0 ? setImmediate(resolve) : setTimeout(resolve, intervalMs)));
  }
}

/**
 * waitFor for code driven by in-process fakes (a FakeClock, fake runtimes and API servers): polls on every turn of
 * the event loop, since such a condition holds within a few turns, and names the condition in the timeout error.
 */
export function until<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  condition: string,
  timeoutMs = 5000,
): Promise<T> {
  return waitFor(probe, { intervalMs: 0, timeoutMs, message: condition });
}
