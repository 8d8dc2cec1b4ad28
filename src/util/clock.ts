// Time as a dependency: production code takes a Clock, unit tests pass a FakeClock and advance it.

export interface TimerHandle {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Run `fn` after `ms` milliseconds; the timer never keeps the process alive. */
  setTimer(fn: () => void, ms: number): TimerHandle;
  /** A promise resolved after `ms` milliseconds, or rejected with the signal's reason when aborted. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    const t = setTimeout(fn, Math.max(0, ms));
    t.unref();
    return { cancel: () => clearTimeout(t) };
  },
  sleep(ms, signal) {
    return sleepWith(this, ms, signal);
  },
};

/** sleep() built on a clock's setTimer, so FakeClock and the system clock share it. */
export function sleepWith(clock: Pick<Clock, 'setTimer'>, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      return;
    }
    const onAbort = (): void => {
      timer.cancel();
      reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
    };
    const timer = clock.setTimer(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

interface FakeTimer {
  at: number;
  seq: number;
  fn: () => void;
}

/** A manual clock for unit tests: time moves only when advance() is called; due timers fire in order. */
export class FakeClock implements Clock {
  private current: number;
  private timers: FakeTimer[] = [];
  private seq = 0;

  constructor(start = 1_700_000_000_000) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimer(fn: () => void, ms: number): TimerHandle {
    const timer: FakeTimer = { at: this.current + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.push(timer);
    return {
      cancel: () => {
        this.timers = this.timers.filter((t) => t !== timer);
      },
    };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepWith(this, ms, signal);
  }

  /** Number of timers not yet fired. */
  pendingTimers(): number {
    return this.timers.length;
  }

  /**
   * Move time forward by `ms`, firing every timer that falls due, in time order, and letting promise
   * callbacks run between timers (so async code scheduled by a timer sees the time it was due at).
   */
  async advance(ms: number): Promise<void> {
    const target = this.current + ms;
    for (;;) {
      await flushMicrotasks();
      const due = this.timers.filter((t) => t.at <= target).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.current = Math.max(this.current, due.at);
      due.fn();
    }
    this.current = target;
    await flushMicrotasks();
  }
}

/**
 * Let pending promise callbacks run (a few macrotask turns, enough for chained awaits): FakeClock.advance's step
 * between timers. Tests do not call it: they wait for the condition they assert (test/support/wait.ts).
 */
async function flushMicrotasks(turns = 5): Promise<void> {
  for (let i = 0; i < turns; i++) {
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/**
 * Run `step` every `ms` until `signal` aborts (the step itself is awaited, so runs never overlap): the first run at
 * once when `immediately`, else after one interval.
 */
export async function repeatEvery(
  clock: Pick<Clock, 'sleep'>,
  ms: number,
  signal: AbortSignal,
  step: () => Promise<void>,
  immediately = false,
): Promise<void> {
  let first = immediately;
  while (!signal.aborted) {
    if (!first) {
      try {
        await clock.sleep(ms, signal);
      } catch {
        return;
      }
    }
    first = false;
    await step();
  }
}
