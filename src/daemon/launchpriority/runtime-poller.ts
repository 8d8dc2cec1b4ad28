// The runtime's view of the pods still waiting on a barrier: while at least one pod is watched, poll CRI
// ListContainers (containerd 1.6 has no container event stream) and hand each pod's containers, by the labels
// kubelet puts on them (io.kubernetes.pod.uid, io.kubernetes.container.name), to the controller when they change.
// Nothing is polled once every pod has completed, so the steady state costs nothing.
import type { Logger } from '../../observability/logger.js';
import { backoffDelay } from '../../util/backoff.js';
import type { Clock, TimerHandle } from '../../util/clock.js';
import type { RuntimeContainer } from './launch-decision.js';
import { errorMessage } from '../../util/error-message.js';

export const POD_UID_LABEL = 'io.kubernetes.pod.uid';
export const CONTAINER_NAME_LABEL = 'io.kubernetes.container.name';

/** One container as CRI ListContainers reports it (the fields used here). */
export interface ListedContainer {
  id: string;
  state: string;
  /** CRI created_at in nanoseconds (decimal string). */
  createdAtNs: string;
  attempt: number;
  labels: Record<string, string>;
}

export interface ContainerSource {
  /** ListContainers, optionally only those with these labels. */
  list(labelSelector?: Record<string, string>): Promise<ListedContainer[]>;
  /** CRI started_at of a container (epoch ms), or undefined when unknown. */
  startedAtMs(id: string): Promise<number | undefined>;
}

export interface RuntimePollerOptions {
  source: () => Promise<ContainerSource>;
  clock: Clock;
  logger: Logger;
  /** Called with a pod uid whose containers changed (started, stopped, appeared). */
  onChange: (podUid: string) => void;
  /** Poll period while pods are watched (default 50 ms). */
  intervalMs?: number;
  /** With at most this many pods watched, one filtered call per pod; above, one unfiltered call (default 4). */
  perPodCallsUpTo?: number;
}

export const DEFAULT_POLL_INTERVAL_MS = 50;
const KNOWN_STATES = new Set(['CONTAINER_CREATED', 'CONTAINER_RUNNING', 'CONTAINER_EXITED', 'CONTAINER_UNKNOWN']);

export class RuntimePoller {
  private readonly watched = new Set<string>();
  private readonly views = new Map<string, Map<string, RuntimeContainer>>();
  /** started_at per running container id (fetched once per id). */
  private readonly runningSince = new Map<string, number>();
  private timer: TimerHandle | undefined;
  private polling = false;
  private stopped = false;
  private readonly intervalMs: number;
  private failures = 0;

  constructor(private readonly options: RuntimePollerOptions) {
    this.intervalMs = options.intervalMs ?? DEFAULT_POLL_INTERVAL_MS;
  }

  /** Start watching a pod (idempotent); the first poll comes at once. */
  watch(podUid: string): void {
    if (this.stopped || this.watched.has(podUid)) return;
    this.watched.add(podUid);
    this.schedule(0);
  }

  unwatch(podUid: string): void {
    this.watched.delete(podUid);
    this.views.delete(podUid);
  }

  watchedCount(): number {
    return this.watched.size;
  }

  /** The latest view of a watched pod's containers by name; undefined before the first poll answered. */
  view(podUid: string): ReadonlyMap<string, RuntimeContainer> | undefined {
    return this.views.get(podUid);
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
    this.watched.clear();
    this.views.clear();
  }

  private schedule(ms: number): void {
    if (this.stopped || this.polling || this.timer || this.watched.size === 0) return;
    this.timer = this.options.clock.setTimer(() => {
      this.timer = undefined;
      void this.poll();
    }, ms);
  }

  private async poll(): Promise<void> {
    if (this.stopped || this.watched.size === 0) return;
    this.polling = true;
    let ok = true;
    try {
      const source = await this.options.source();
      const uids = [...this.watched];
      const listed =
        uids.length <= (this.options.perPodCallsUpTo ?? 4)
          ? (await Promise.all(uids.map((uid) => source.list({ [POD_UID_LABEL]: uid })))).flat()
          : await source.list();
      await this.absorb(source, uids, listed);
      this.failures = 0;
    } catch (err) {
      ok = false;
      this.failures++;
      const log = this.failures === 1 ? this.options.logger.warn : this.options.logger.debug;
      log.call(
        this.options.logger,
        { err: errorMessage(err) },
        'listing containers failed; the pod status still counts',
      );
    } finally {
      this.polling = false;
    }
    // back off while the runtime fails (the pod status path keeps working meanwhile): twice the interval, doubling,
    // at most 5 s, jittered
    const failedBackoff = { initialMs: Math.min(2 * this.intervalMs, 5000), maxMs: 5000 };
    this.schedule(ok ? this.intervalMs : backoffDelay(failedBackoff, this.failures));
  }

  private async absorb(source: ContainerSource, uids: string[], listed: ListedContainer[]): Promise<void> {
    const latest = new Map<string, Map<string, ListedContainer>>();
    for (const c of listed) {
      const uid = c.labels[POD_UID_LABEL];
      const name = c.labels[CONTAINER_NAME_LABEL];
      if (!uid || !name || !this.watched.has(uid)) continue;
      let byName = latest.get(uid);
      if (!byName) latest.set(uid, (byName = new Map<string, ListedContainer>()));
      const seen = byName.get(name);
      if (!seen || newer(c, seen)) byName.set(name, c);
    }
    // start times of containers newly seen running, fetched at once (one ContainerStatus each, never again)
    const fresh = [...latest.values()]
      .flatMap((byName) => [...byName.values()])
      .filter((c) => c.state === 'CONTAINER_RUNNING' && !this.runningSince.has(c.id));
    const started = await Promise.all(fresh.map((c) => source.startedAtMs(c.id).catch(() => undefined)));
    fresh.forEach((c, i) => this.runningSince.set(c.id, started[i] ?? this.options.clock.now()));
    const live = new Set<string>();
    for (const uid of uids) {
      if (!this.watched.has(uid)) continue; // unwatched while listing
      const next = new Map<string, RuntimeContainer>();
      for (const [name, c] of latest.get(uid) ?? []) {
        const state = (KNOWN_STATES.has(c.state) ? c.state : 'CONTAINER_UNKNOWN') as RuntimeContainer['state'];
        const entry: RuntimeContainer = { id: c.id, state };
        if (state === 'CONTAINER_RUNNING') {
          live.add(c.id);
          entry.runningSinceMs = this.runningSince.get(c.id);
        }
        next.set(name, entry);
      }
      const before = this.views.get(uid);
      this.views.set(uid, next);
      if (!before || !sameView(before, next)) this.options.onChange(uid);
    }
    for (const id of this.runningSince.keys()) if (!live.has(id)) this.runningSince.delete(id);
  }
}

function newer(a: ListedContainer, b: ListedContainer): boolean {
  if (a.attempt !== b.attempt) return a.attempt > b.attempt;
  try {
    return BigInt(a.createdAtNs || '0') > BigInt(b.createdAtNs || '0');
  } catch {
    return false;
  }
}

function sameView(a: ReadonlyMap<string, RuntimeContainer>, b: ReadonlyMap<string, RuntimeContainer>): boolean {
  if (a.size !== b.size) return false;
  for (const [name, x] of a) {
    const y = b.get(name);
    if (!y || y.id !== x.id || y.state !== x.state) return false;
  }
  return true;
}
