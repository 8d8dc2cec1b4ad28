// A node-wide cap on runs at once (image pulls, probe runs), and the rule that one key is never run twice at once
// (for pulls the image reference: a version bump or a restart of a tag waits for the pull it replaces to let go).
// Waiters are served in arrival order, skipping those whose key is still busy.

export type ReleaseSlot = () => void;

interface Waiter {
  reference: string;
  grant: (release: ReleaseSlot) => void;
}

export class RunSlots {
  private readonly busy = new Set<string>();
  private waiters: Waiter[] = [];
  private used = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`the cap on runs at once must be a whole number >= 1, got ${capacity}`);
    }
  }

  /** Runs holding a slot now. */
  get inUse(): number {
    return this.used;
  }

  /**
   * Resolves with a release function once a slot is free and `reference` is not running; rejects with the
   * signal's reason if aborted first. Call the release exactly once (extra calls are ignored).
   */
  acquire(reference: string, signal?: AbortSignal): Promise<ReleaseSlot> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(abortReason(signal));
        return;
      }
      const waiter: Waiter = {
        reference,
        grant: (release) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(release);
        },
      };
      const onAbort = (): void => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(abortReason(signal));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
      this.dispatch();
    });
  }

  private dispatch(): void {
    for (let i = 0; i < this.waiters.length && this.used < this.capacity;) {
      const waiter = this.waiters[i]!;
      if (this.busy.has(waiter.reference)) {
        i++;
        continue;
      }
      this.waiters.splice(i, 1);
      this.used++;
      this.busy.add(waiter.reference);
      let released = false;
      waiter.grant(() => {
        if (released) return;
        released = true;
        this.used--;
        this.busy.delete(waiter.reference);
        this.dispatch();
      });
    }
  }
}

function abortReason(signal: AbortSignal | undefined): Error {
  return signal?.reason instanceof Error ? signal.reason : new Error('aborted');
}
