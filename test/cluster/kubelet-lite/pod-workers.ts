// Per-pod serialised syncs with "latest pending update wins" (pod_workers.go#UpdatePod, #podWorkerLoop,
// #completeWork): an update during a sync runs right after it; after each sync the pod is requeued after the
// retry period (failed) or the resync period (succeeded), both x [1, 1.5) jitter.
import type { Logger } from 'pino';
import { systemClock, type Clock, type TimerHandle } from '../../../src/util/clock.js';
import { jittered } from './timers.js';

export interface WorkResult {
  failed: boolean;
  /** The pod is gone: drop its worker. */
  finished?: boolean;
}

interface Worker {
  running: boolean;
  pending: boolean;
  timer?: TimerHandle;
}

export class PodWorkers {
  private readonly workers = new Map<string, Worker>();
  private stopped = false;
  private readonly idle = new Set<() => void>();

  constructor(
    private readonly syncFn: (uid: string) => Promise<WorkResult>,
    private readonly periods: { retryMs: number; resyncMs: number },
    private readonly logger: Logger,
    private readonly clock: Clock = systemClock,
    private readonly random: () => number = Math.random,
  ) {}

  /** Ask for a sync of this pod now (or right after the one running). */
  update(uid: string): void {
    if (this.stopped) return;
    let w = this.workers.get(uid);
    if (!w) this.workers.set(uid, (w = { running: false, pending: false }));
    if (w.timer) {
      w.timer.cancel();
      w.timer = undefined;
    }
    if (w.running) {
      w.pending = true;
      return;
    }
    void this.run(uid, w);
  }

  has(uid: string): boolean {
    return this.workers.has(uid);
  }

  get size(): number {
    return this.workers.size;
  }

  private async run(uid: string, w: Worker): Promise<void> {
    w.running = true;
    let result: WorkResult = { failed: false };
    do {
      w.pending = false;
      try {
        result = await this.syncFn(uid);
      } catch (err) {
        this.logger.warn({ err, uid }, 'pod sync failed');
        result = { failed: true };
      }
    } while (w.pending && !this.stopped && !result.finished);
    w.running = false;
    if (result.finished || this.stopped) {
      if (this.workers.get(uid) === w) this.workers.delete(uid);
    } else {
      const delay = jittered(result.failed ? this.periods.retryMs : this.periods.resyncMs, this.random);
      w.timer = this.clock.setTimer(() => this.update(uid), delay);
    }
    if (this.stopped && [...this.workers.values()].every((x) => !x.running)) for (const f of this.idle) f();
  }

  /** Stop scheduling; resolves when no sync runs. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const w of this.workers.values()) w.timer?.cancel();
    if ([...this.workers.values()].every((w) => !w.running)) return;
    await new Promise<void>((resolve) => this.idle.add(resolve));
  }
}
