// Crash-loop backoff per container instance key (kuberuntime_manager.go#doBackOff with client-go
// flowcontrol.Backoff): the first restart is immediate; each later one waits base, 2 x base, ... up to max,
// measured from the exited container's finishedAt; an entry not updated for `resetMs` is forgotten.
import type { KubeletTimers } from './timers.js';

interface Entry {
  backoffMs: number;
  lastUpdate: number;
}

export class CrashBackoff {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly timers: Pick<KubeletTimers, 'backoffBaseMs' | 'backoffMaxMs' | 'backoffResetMs'>,
    private readonly now: () => number = Date.now,
  ) {}

  /** Still backing off at `now` for an instance that finished at `finishedAt`? Returns the delay when it is. */
  inBackoffSince(key: string, finishedAt: number): number | undefined {
    const entry = this.live(key);
    if (!entry) return undefined;
    return this.now() - finishedAt < entry.backoffMs ? entry.backoffMs : undefined;
  }

  /** Still backing off, counted from the last next() (image pulls: IsInBackOffSinceUpdate)? */
  inBackoffSinceUpdate(key: string): number | undefined {
    const entry = this.live(key);
    if (!entry) return undefined;
    return this.now() - entry.lastUpdate < entry.backoffMs ? entry.backoffMs : undefined;
  }

  /** Record a restart: the next one waits longer (Backoff.Next). */
  next(key: string): void {
    const entry = this.live(key);
    if (!entry) {
      this.entries.set(key, { backoffMs: this.timers.backoffBaseMs, lastUpdate: this.now() });
      return;
    }
    entry.backoffMs = Math.min(entry.backoffMs * 2, this.timers.backoffMaxMs);
    entry.lastUpdate = this.now();
  }

  /** Forget the keys of a pod that is gone (keys contain `_<uid>_` or start with `<uid>_`). */
  forgetPod(uid: string): void {
    for (const key of this.entries.keys()) {
      if (key.includes(`_${uid}_`) || key.startsWith(`${uid}_`)) this.entries.delete(key);
    }
  }

  private live(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry && this.now() - entry.lastUpdate > this.timers.backoffResetMs) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }
}
