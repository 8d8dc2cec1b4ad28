// kubelet's pulls come first: while kubelet pulls an image for a pod on this node, the image puller starts no new
// pre-pull, and a running one that can resume (its pull is under a lease of ours, pull-leases.ts) is paused: its CRI
// call is cancelled when kubelet starts pulling (onStart) and made again once kubelet is done, fetching only what it
// did not have. A pull that cannot resume goes on. So a starting pod does not share the node's bandwidth and disk
// with pre-pulls.
// How the agent knows, with no API request of its own: the node's pods (the agent's shared pod watch) tell which
// containers kubelet has yet to start (no status yet, or waiting with ContainerCreating / PodInitializing), and the
// runtime (CRI ImageStatus, local) which of their images are not on the node: kubelet is pulling those, or about to.
// A container kubelet gave up on for now (ErrImagePull, ImagePullBackOff) does not hold pre-pulls, and no container
// holds them longer than `maxHoldMs` (a pod stuck before its pull, on a volume say).
import type { WirePod } from '../../api/wire.js';
import type { Logger } from '../../observability/logger.js';
import type { Clock, TimerHandle } from '../../util/clock.js';
import { errorMessage } from '../../util/error-message.js';
import { isRecord } from '../../util/is-record.js';
import { WakeList } from '../../util/wake-list.js';
import { SerialRun } from '../../util/serial-run.js';

export const KUBELET_PULL_RECHECK_MS = 1_000;
export const KUBELET_PULL_MAX_HOLD_MS = 10 * 60_000;

/** Waiting reasons of a container kubelet is still preparing (its image may be pulling). */
const PREPARING = new Set(['ContainerCreating', 'PodInitializing']);

/** The pods of this node, as the agent's shared pod watch has them. */
export interface PodSource {
  list(): WirePod[];
  addHandlers(handlers: { onAdd?: () => void; onUpdate?: () => void; onDelete?: () => void }): () => void;
}

export interface KubeletPullsOptions {
  pods: PodSource;
  /** Whether the runtime has the image (CRI ImageStatus). */
  imagePresent: (image: string, signal: AbortSignal) => Promise<boolean>;
  clock: Clock;
  logger: Logger;
  recheckMs?: number;
  maxHoldMs?: number;
}

/** What kubelet is pulling: `namespace/pod: image`. */
export type KubeletPull = string;

/** Every (pod, image) of a container kubelet has yet to start. */
export function imagesKubeletPrepares(pods: readonly WirePod[]): { key: string; pod: string; image: string }[] {
  const out: { key: string; pod: string; image: string }[] = [];
  for (const pod of pods) {
    if (pod.metadata?.deletionTimestamp) continue;
    const phase = pod.status?.phase;
    if (phase !== undefined && phase !== 'Pending' && phase !== 'Running') continue;
    const name = `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
    const uid = pod.metadata?.uid ?? name;
    const groups: [unknown, unknown][] = [
      [pod.spec?.initContainers, pod.status?.initContainerStatuses],
      [pod.spec?.containers, pod.status?.containerStatuses],
    ];
    for (const [containers, statuses] of groups) {
      if (!Array.isArray(containers)) continue;
      const byName = new Map<string, unknown>();
      if (Array.isArray(statuses)) for (const s of statuses) if (isRecord(s)) byName.set(String(s.name), s);
      for (const container of containers) {
        if (!isRecord(container) || typeof container.image !== 'string' || container.image === '') continue;
        const status = byName.get(String(container.name));
        const waiting = isRecord(status) && isRecord(status.state) ? status.state.waiting : undefined;
        const preparing =
          status === undefined ||
          (isRecord(waiting) && typeof waiting.reason === 'string' && PREPARING.has(waiting.reason));
        if (preparing) out.push({ key: `${uid}\u0000${container.image}`, pod: name, image: container.image });
      }
    }
  }
  return out;
}

export class KubeletPulls {
  private held: KubeletPull[] = [];
  /** When each (pod uid, image) was first seen held. */
  private readonly since = new Map<string, number>();
  private readonly expiredWarned = new Set<string>();
  private readonly waiters = new WakeList();
  private readonly startListeners = new Set<() => void>();
  private timer: TimerHandle | undefined;
  private readonly evaluation = new SerialRun(
    () => this.evaluate(),
    () => !this.stopping.signal.aborted,
  );
  private readonly stopping = new AbortController();
  private readonly unsubscribe: () => void;
  private readonly log: Logger;

  constructor(private readonly options: KubeletPullsOptions) {
    this.log = options.logger.child({ component: 'kubelet-pulls' });
    const kick = (): void => this.kick();
    this.unsubscribe = options.pods.addHandlers({ onAdd: kick, onUpdate: kick, onDelete: kick });
    this.kick();
  }

  /** What kubelet is pulling now, as last seen. */
  pulling(): readonly KubeletPull[] {
    return this.held;
  }

  /** Resolves once kubelet is pulling nothing (at once when it is not); rejects when `signal` aborts. */
  async whenClear(signal: AbortSignal): Promise<void> {
    await this.evaluation.idle();
    if (this.held.length === 0) return;
    await this.waiters.wait(signal);
  }

  /** Call `listener` each time kubelet starts pulling after a time it pulled nothing; returns its remover. */
  onStart(listener: () => void): () => void {
    this.startListeners.add(listener);
    return () => this.startListeners.delete(listener);
  }

  stop(): void {
    this.startListeners.clear();
    this.stopping.abort(new Error('stopping'));
    this.unsubscribe();
    this.timer?.cancel();
  }

  private kick(): void {
    this.evaluation.run();
  }

  private async evaluate(): Promise<void> {
    const now = this.options.clock.now();
    const maxHold = this.options.maxHoldMs ?? KUBELET_PULL_MAX_HOLD_MS;
    const candidates = imagesKubeletPrepares(this.options.pods.list());
    const present = new Map<string, boolean>();
    const held: KubeletPull[] = [];
    const seen = new Set<string>();
    for (const { key, pod, image } of candidates) {
      seen.add(key);
      let has = present.get(image);
      if (has === undefined) {
        try {
          has = await this.options.imagePresent(image, this.stopping.signal);
        } catch (err) {
          if (this.stopping.signal.aborted) return;
          // cannot tell: do not hold pre-pulls on a guess
          this.log.debug({ image, err: errorMessage(err) }, 'cannot tell whether the image is on the node');
          has = true;
        }
        present.set(image, has);
      }
      if (has) continue;
      const first = this.since.get(key) ?? now;
      this.since.set(key, first);
      if (now - first > maxHold) {
        if (!this.expiredWarned.has(key)) {
          this.expiredWarned.add(key);
          this.log.warn(
            { pod, image, minutes: Math.round(maxHold / 60_000) },
            'kubelet has not pulled this image for its pod in this long; pre-pulls no longer wait for it',
          );
        }
        continue;
      }
      held.push(`${pod}: ${image}`);
    }
    for (const key of [...this.since.keys()]) if (!seen.has(key)) this.since.delete(key);
    for (const key of [...this.expiredWarned]) if (!seen.has(key)) this.expiredWarned.delete(key);
    const before = this.held.length;
    this.held = [...new Set(held)];
    if (before === 0 && this.held.length > 0) {
      this.log.info(
        { pulling: this.held },
        'kubelet is pulling images for pods of this node; new pre-pulls wait, resumable ones pause',
      );
      for (const listener of [...this.startListeners]) listener();
    }
    this.timer?.cancel();
    this.timer = undefined;
    if (this.held.length > 0) {
      // kubelet's pull ends with no pod event until the container starts: look at the runtime again soon
      this.timer = this.options.clock.setTimer(() => this.kick(), this.options.recheckMs ?? KUBELET_PULL_RECHECK_MS);
      return;
    }
    if (before > 0) this.log.info('kubelet pulls nothing for this node now; pre-pulls go on');
    this.waiters.wakeAll();
  }
}
