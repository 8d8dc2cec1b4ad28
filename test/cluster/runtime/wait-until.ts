// Polling with a deadline for the cluster tooling (daemons coming up, processes going away).
// `failFast` lets a caller stop waiting at once when the thing waited for can no longer happen (its process died).
import { setTimeout as delay } from 'node:timers/promises';
import { ClusterError, errorMessage } from './errors.js';

export interface WaitUntilOptions {
  timeoutMs: number;
  /** What is awaited, for the timeout message. */
  what: string;
  intervalMs?: number;
  /** Returns a reason to give up now, or undefined to keep waiting. */
  failFast?: () => string | undefined | Promise<string | undefined>;
}

/** Poll `probe` until it returns true; a throwing probe counts as "not yet". */
export async function waitUntil(probe: () => boolean | Promise<boolean>, options: WaitUntilOptions): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      if (await probe()) return;
    } catch (err) {
      lastError = err;
    }
    const reason = await options.failFast?.();
    if (reason !== undefined) throw new ClusterError(`gave up waiting for ${options.what}: ${reason}`);
    if (Date.now() >= deadline) {
      const why = lastError === undefined ? '' : ` (last error: ${errorMessage(lastError)})`;
      throw new ClusterError(`timed out after ${options.timeoutMs} ms waiting for ${options.what}${why}`);
    }
    await delay(options.intervalMs ?? 25);
  }
}
