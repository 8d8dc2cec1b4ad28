// The agent's side of IP reservations. The plugin decides at ADD/DEL; this controller owns the lifecycle between
// calls, for every network under the data dir:
// - expiry on time: a timer at the earliest expiresAt frees due reservations under the store lock (the plugin
//   also expires lazily, so either may do it; the store lock makes that safe);
// - GC: addresses held by sandboxes the runtime no longer lists are released (a reservation is kept if the pod
//   asked for one). The sandbox list is taken BEFORE the lock, and only entries allocated more than `gcGraceMs`
//   before that list are considered, so an ADD still in flight (its sandbox not yet listed) is never touched;
// - reporting: gauges of held/reserved addresses, counters and pod Events from the notes the plugin leaves in the
//   store (drained under the lock).
// The store directory is watched (inotify), so a change is seen within milliseconds; the timers make it work
// without the watch too.
import { readdirSync, existsSync, mkdirSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { collect, expire } from '../../cni/allocator.js';
import { MINUTE_MS } from '../../cni/config.js';
import type { NetworkState, Note, PodIdentity } from '../../cni/state.js';
import { readState, storePaths, update, type StorePaths } from '../../cni/store.js';
import type { Logger } from '../../observability/logger.js';
import type { Clock, TimerHandle } from '../../util/clock.js';
import type { IpamMetrics } from './metrics.js';

export const REASON_IP_REUSED = 'IPReused';
const MAX_TIMER_MS = 3_600_000;
export const REASON_INVALID_DURATION = 'InvalidReservedIPDuration';

export interface SandboxLister {
  listPodSandbox(request: Record<string, never>): Promise<{ items: ReadonlyArray<{ id: string }> }>;
}

export interface PodEventSink {
  event(pod: PodIdentity, type: 'Normal' | 'Warning', reason: string, message: string): void;
}

export interface IpReservationOptions {
  dataDir: string;
  clock: Clock;
  logger: Logger;
  metrics: IpamMetrics;
  runtime: () => Promise<SandboxLister>;
  events?: PodEventSink;
  gcIntervalMs: number;
  gcGraceMs: number;
  /** Watch the store with inotify (default true; unit tests drive sync() themselves). */
  watch?: boolean;
}

export interface NetworkSummary {
  network: string;
  held: number;
  reserved: number;
}

export class IpReservationController {
  private chain: Promise<unknown> = Promise.resolve();
  private expiryTimer: TimerHandle | undefined;
  private expiryAt: number | undefined;
  private gcTimer: TimerHandle | undefined;
  private watchers = new Map<string, FSWatcher>();
  private stopped = false;
  private kickPending = false;

  constructor(private readonly o: IpReservationOptions) {}

  start(): void {
    mkdirSync(this.o.dataDir, { recursive: true, mode: 0o700 });
    if (this.o.watch !== false) this.watchDir(this.o.dataDir);
    this.kick();
    this.scheduleGc(this.o.gcIntervalMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.expiryTimer?.cancel();
    this.gcTimer?.cancel();
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
    await this.chain.catch(() => undefined);
  }

  /** Run `fn` after everything queued before it (one store pass at a time). */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.chain.then(fn, fn);
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** Ask for a sync soon; coalesces bursts of changes into one pass. */
  kick(): void {
    if (this.kickPending || this.stopped) return;
    this.kickPending = true;
    void this.serial(async () => {
      this.kickPending = false;
      await this.syncNow();
    }).catch((err: unknown) => this.o.logger.error({ err }, 'ipam sync failed'));
  }

  /** Every network directory under the data dir (a new one may not have its state.json yet). */
  private networkDirs(): string[] {
    try {
      return readdirSync(this.o.dataDir, { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => d.name)
        .sort();
    } catch {
      return [];
    }
  }

  /** The networks that have a store. */
  networks(): string[] {
    return this.networkDirs().filter((n) => existsSync(join(this.o.dataDir, n, 'state.json')));
  }

  /** One pass over every network: expire due reservations, drain notes, update gauges, arm the expiry timer. */
  sync(): Promise<NetworkSummary[]> {
    return this.serial(() => this.syncNow());
  }

  private async syncNow(): Promise<NetworkSummary[]> {
    if (this.stopped) return [];
    const out: NetworkSummary[] = [];
    let earliest: number | undefined;
    // watch every network directory, also one whose first state.json is still being written
    if (this.o.watch !== false) for (const network of this.networkDirs()) this.watchDir(join(this.o.dataDir, network));
    for (const network of this.networks()) {
      const paths = storePaths(this.o.dataDir, network);
      let state: NetworkState;
      try {
        state = readState(paths);
        const now = this.o.clock.now();
        const due = Object.values(state.entries).some((e) => e.kind === 'reserved' && e.expiresAt <= now);
        if (due || state.notes.length > 0) state = await this.drain(network, paths);
      } catch (err) {
        this.o.logger.error({ err, network }, 'cannot read the IPAM store');
        continue;
      }
      let held = 0;
      let reserved = 0;
      for (const e of Object.values(state.entries)) {
        if (e.kind === 'held') held++;
        else {
          reserved++;
          if (earliest === undefined || e.expiresAt < earliest) earliest = e.expiresAt;
        }
      }
      this.o.metrics.allocated.set({ network }, held);
      this.o.metrics.reserved.set({ network }, reserved);
      out.push({ network, held, reserved });
    }
    this.armExpiry(earliest);
    return out;
  }

  /** Under the lock: expire what is due and take the notes; then report them. */
  private async drain(network: string, paths: StorePaths): Promise<NetworkState> {
    const { state, notes } = await update(
      paths,
      (ms) => this.o.clock.sleep(ms),
      (s) => {
        expire(s, this.o.clock.now());
        const taken = s.notes.splice(0);
        return { changed: true, value: { state: s, notes: taken } };
      },
    );
    for (const note of notes) this.report(network, note);
    return state;
  }

  private report(network: string, note: Note): void {
    const pod = note.pod;
    const who = pod ? `${pod.namespace}/${pod.name}` : undefined;
    switch (note.kind) {
      case 'reused':
        this.o.metrics.reused.inc({ network });
        this.o.logger.info({ network, pod: who, ip: note.ip }, 'reserved IP handed back to its pod');
        if (pod) {
          this.o.events?.event(
            pod,
            'Normal',
            REASON_IP_REUSED,
            `Pod got its reserved IP ${note.ip ?? '?'} back on network ${network} (${note.detail ?? 'reserved earlier'})`,
          );
        }
        break;
      case 'expired':
        this.o.metrics.expired.inc({ network });
        this.o.logger.info({ network, pod: who, ip: note.ip }, 'IP reservation expired');
        break;
      case 'superseded':
        this.o.metrics.superseded.inc({ network });
        this.o.logger.info({ network, pod: who, ip: note.ip, detail: note.detail }, 'IP reservation freed early');
        break;
      case 'invalid-duration':
        this.o.metrics.invalidDurations.inc({ network });
        this.o.logger.warn({ network, pod: who, value: note.detail }, 'malformed reserved-ip-duration');
        if (pod) {
          this.o.events?.event(
            pod,
            'Warning',
            REASON_INVALID_DURATION,
            `io.kubernetes.cri/reserved-ip-duration=${JSON.stringify(note.detail ?? '')} is not a whole number of minutes (1-525600): the pod IP is not reserved`,
          );
        }
        break;
      case 'no-pod-identity':
        this.o.logger.warn(
          { network, sandbox: note.containerId },
          'reserved-ip-duration without a pod name in CNI_ARGS',
        );
        break;
    }
  }

  private armExpiry(at: number | undefined): void {
    if (at === this.expiryAt) return;
    this.expiryTimer?.cancel();
    this.expiryTimer = undefined;
    this.expiryAt = at;
    if (at === undefined || this.stopped) return;
    // a long reservation (up to a year) is re-armed hourly: timers beyond 2^31-1 ms would fire at once
    this.expiryTimer = this.o.clock.setTimer(
      () => {
        this.expiryAt = undefined;
        this.kick();
      },
      Math.min(MAX_TIMER_MS, Math.max(0, at - this.o.clock.now())),
    );
  }

  private scheduleGc(ms: number): void {
    if (this.stopped) return;
    this.gcTimer = this.o.clock.setTimer(() => {
      this.collectGarbage()
        .catch((err: unknown) => this.o.logger.warn({ err }, 'ipam GC failed; retrying at the next interval'))
        .finally(() => this.scheduleGc(this.o.gcIntervalMs));
    }, ms);
  }

  /** Release addresses of sandboxes the runtime no longer has; returns how many were released. */
  async collectGarbage(): Promise<number> {
    const runtime = await this.o.runtime();
    const listedAt = this.o.clock.now();
    const { items } = await runtime.listPodSandbox({});
    const live = new Set(items.map((s) => s.id));
    return this.serial(async () => {
      let total = 0;
      for (const network of this.networks()) {
        const paths = storePaths(this.o.dataDir, network);
        const released = await update(
          paths,
          (ms) => this.o.clock.sleep(ms),
          (s) => {
            const out = collect(
              s,
              (a) => live.has(a.containerId),
              MINUTE_MS,
              this.o.clock.now(),
              listedAt - this.o.gcGraceMs,
            );
            return { changed: out.length > 0, value: out };
          },
        );
        for (const r of released) {
          this.o.logger.info(
            { network, ip: r.ip, reserved: r.reserved },
            'released the IP of a sandbox the runtime no longer has',
          );
        }
        if (released.length) this.o.metrics.gcReleased.inc({ network }, released.length);
        total += released.length;
      }
      await this.syncNow();
      return total;
    });
  }

  private watchDir(dir: string): void {
    if (this.watchers.has(dir)) return;
    try {
      const w = watch(dir, { persistent: false }, () => this.kick());
      w.on('error', () => {
        w.close();
        this.watchers.delete(dir);
      });
      this.watchers.set(dir, w);
    } catch (err) {
      this.o.logger.warn({ err, dir }, 'cannot watch the IPAM store; changes are seen at the next timer');
    }
  }
}
