// Launch priority released on the node. For each pod of this node that carries the barrier env
// (KRUISE_CONTAINER_BARRIER from ConfigMap `<pod>-barrier`, key `p_<priority>`), the agent creates the ConfigMap
// (owned by the pod), writes the next level's key as soon as every container of the higher levels is ready (the
// runtime or the pod status, whichever tells first), then changes an annotation of the pod so kubelet syncs it at
// once instead of at its 10-15 s retry (docs/adr/0002), and marks the pod completed after the last level.
// Level-triggered: the decision is recomputed from the pod, the ConfigMap and the runtime on every reconcile.
import { isPodActive } from '../../api/pod-active.js';
import { CONTAINER_LAUNCH_PRIORITY_COMPLETED_ANNOTATION } from '../../api/constants.js';
import type { WirePod } from '../../api/wire.js';
import {
  ControllerLoop,
  isAlreadyExists,
  isInvalid,
  isNotFound,
  type InformerHandlers,
  type KubeMetrics,
  type KubeObject,
} from '../../kube/index.js';
import type { Logger } from '../../observability/logger.js';
import type { Clock } from '../../util/clock.js';
import { BARRIER_VALUE, type BarrierApi, type ConfigMapObject } from './barrier-api.js';
import { barrierPlan, hasBarrierEnv, isReleased, presentKeys, type BarrierPlan } from './barrier-plan.js';
import { decide, readinessOf, type RuntimeContainer, type StatusContainer } from './launch-decision.js';
import type { LaunchPriorityMetrics } from './metrics.js';
import type { RuntimePoller } from './runtime-poller.js';

/** Pod annotation the agent changes after each release, so kubelet syncs the pod (value: `<key>@<epoch ms>`). */
export const BARRIER_RELEASED_ANNOTATION = 'apps.kruise.io/container-launch-barrier-released';
/** Event reasons (OpenKruise has none for launch priority). */
export const EVENT_REASON_BARRIER_INVALID = 'LaunchPriorityBarrierInvalid';
export const EVENT_REASON_BARRIER_RECREATED = 'LaunchPriorityBarrierRecreated';
export const EVENT_REASON_BARRIER_OF_EARLIER_POD = 'LaunchPriorityBarrierOfEarlierPod';
/** kubelet's waiting reason while an env source (our key) is missing. */
export const CREATE_CONTAINER_CONFIG_ERROR = 'CreateContainerConfigError';

/** First re-touch of a pod whose released container has not started, then doubling up to the max. */
export const RETOUCH_AFTER_MS = 2000;
export const RETOUCH_MAX_MS = 30_000;
/** After a guarded pod patch failed because the pod changed since the cache saw it: look again this soon. */
export const STALE_POD_RETRY_MS = 200;

/** The node's pods (the shared pod informer, field selector spec.nodeName). */
export interface PodSource {
  addHandlers(handlers: InformerHandlers<WirePod>): () => void;
  get(key: string): WirePod | undefined;
  hasSynced(): boolean;
}

export interface EventSink {
  event(obj: KubeObject, type: 'Normal' | 'Warning', reason: string, message: string): void;
}

export interface LaunchPriorityControllerOptions {
  pods: PodSource;
  api: BarrierApi;
  poller: RuntimePoller;
  events: EventSink;
  clock: Clock;
  logger: Logger;
  metrics: LaunchPriorityMetrics;
  kubeMetrics?: KubeMetrics;
}

/** What the agent remembers about a pod between reconciles (all of it can be rebuilt from the API). */
interface PodTrack {
  uid: string;
  /** The ConfigMap as our last read or write returned it; 'absent' after a 404; undefined: not read yet. */
  barrier?: ConfigMapObject | 'absent' | undefined;
  statusReadySince: Map<string, number>;
  /** When the pod was last touched, and the delay before re-touching it if a released container still waits. */
  lastTouchAt?: number;
  retouchDelayMs: number;
  /** Whether the event saying its barrier is an earlier pod's was sent. */
  waitedForCollector?: boolean;
  /** A touch whose patch met a pod that had changed meanwhile: made again from the newer pod. */
  owedTouch?: { value: string; complete: boolean; reason: TouchReason } | undefined;
}

type TouchReason = 'release' | 'retry' | 'complete';

export class LaunchPriorityController {
  private readonly loop: ControllerLoop;
  private readonly tracks = new Map<string, PodTrack>();
  private readonly keyByUid = new Map<string, string>();
  /** Pods whose unusable barrier envs were reported (once per pod; forgotten when the pod goes). */
  private readonly reportedUids = new Set<string>();
  private removeHandlers: (() => void) | undefined;
  private readonly log: Logger;

  constructor(private readonly options: LaunchPriorityControllerOptions) {
    this.log = options.logger;
    this.loop = new ControllerLoop(
      'launchpriority',
      {
        workers: 4,
        clock: options.clock,
        logger: options.logger,
        kubeMetrics: options.kubeMetrics,
      },
      (key) => this.reconcile(key),
    );
  }

  start(): void {
    const enqueue = (pod: WirePod): void => {
      if (this.interesting(pod)) this.loop.add(podKey(pod));
    };
    this.removeHandlers = this.options.pods.addHandlers({
      onAdd: enqueue,
      onUpdate: (_, pod) => enqueue(pod),
      onDelete: (pod) => {
        if (pod.metadata?.uid) this.reportedUids.delete(pod.metadata.uid);
        if (this.tracks.has(podKey(pod))) this.loop.add(podKey(pod));
      },
    });
    this.loop.start();
  }

  async stop(): Promise<void> {
    this.removeHandlers?.();
    await this.loop.stop();
    this.options.poller.stop();
  }

  /** Called by the runtime poller when a watched pod's containers changed. */
  readonly onRuntimeChange = (podUid: string): void => {
    const key = this.keyByUid.get(podUid);
    if (key) this.loop.add(key);
  };

  /** Pods whose barrier is being released (for tests and figures). */
  trackedPods(): number {
    return this.tracks.size;
  }

  private interesting(pod: WirePod): boolean {
    if (this.tracks.has(podKey(pod))) return true;
    if (!hasBarrierEnv(pod)) return false;
    if (pod.metadata?.annotations?.[CONTAINER_LAUNCH_PRIORITY_COMPLETED_ANNOTATION] !== 'true') return true;
    return blockedOnBarrier(pod, barrierPlan(pod)).length > 0;
  }

  private drop(key: string): void {
    const track = this.tracks.get(key);
    if (!track) return;
    this.tracks.delete(key);
    this.keyByUid.delete(track.uid);
    this.options.poller.unwatch(track.uid);
    this.options.metrics.setPodsWaiting(this.tracks.size);
  }

  private async reconcile(key: string): Promise<{ requeueAfter?: number } | void> {
    const pod = this.options.pods.get(key);
    const uid = pod?.metadata?.uid;
    if (!pod || !uid || !isPodActive(pod) || !hasBarrierEnv(pod)) {
      this.drop(key);
      return;
    }
    let track = this.tracks.get(key);
    if (track && track.uid !== uid) {
      this.drop(key);
      track = undefined;
    }
    const plan = barrierPlan(pod);
    if (!track) {
      track = { uid, statusReadySince: new Map(), retouchDelayMs: RETOUCH_AFTER_MS };
    }
    if (plan.problems.length > 0 && !this.reportedUids.has(uid)) {
      this.reportedUids.add(uid);
      for (const problem of plan.problems) {
        this.options.events.event(pod, 'Warning', EVENT_REASON_BARRIER_INVALID, problem);
      }
      this.log.warn({ pod: key, problems: plan.problems }, 'barrier env ignored for some containers');
    }
    if (plan.levels.length === 0) {
      this.drop(key);
      return;
    }
    const completed = pod.metadata?.annotations?.[CONTAINER_LAUNCH_PRIORITY_COMPLETED_ANNOTATION] === 'true';
    if (completed) return this.afterCompletion(key, pod, plan, track);

    if (!this.tracks.has(key)) {
      this.tracks.set(key, track);
      this.keyByUid.set(uid, key);
      this.options.metrics.setPodsWaiting(this.tracks.size);
    }
    this.options.poller.watch(uid);
    const barrier = await this.barrierOf(pod, plan, track);
    const keys = presentKeys(barrier === 'absent' ? undefined : barrier.data);
    updateStatusReadySince(pod, track, this.options.clock.now());
    const runtime = this.options.poller.view(uid);
    const probed = probedContainers(pod);
    const statusByName = containerStatuses(pod);
    const decision = decide(plan, keys, (name) =>
      readinessOf(name, { probed, status: statusByName, runtime, statusReadySince: track.statusReadySince }),
    );

    if (decision.release) {
      const level = decision.release;
      const newKeys = level.keys.filter((k) => !keys.has(k));
      const allKeys = [...keys].filter((k) => plan.levels.some((l) => l.keys.includes(k))).concat(newKeys);
      try {
        track.barrier = await this.writeKeys(pod, plan, track, barrier, newKeys, allKeys);
      } catch (err) {
        this.options.metrics.released('error');
        throw err;
      }
      const now = this.options.clock.now();
      this.options.metrics.released('ok');
      if (decision.higherReadySinceMs !== undefined) {
        this.options.metrics.observeReleaseDelay((now - decision.higherReadySinceMs) / 1000);
      }
      this.log.debug({ pod: key, priority: level.priority, containers: level.containers }, 'barrier level released');
      if (!(await this.touch(pod, track, `${level.keys[0]}@${now}`, decision.complete, 'release'))) {
        return { requeueAfter: STALE_POD_RETRY_MS };
      }
      track.retouchDelayMs = RETOUCH_AFTER_MS;
      if (decision.complete) {
        this.log.info({ pod: key }, 'every barrier level released; launch priority completed');
        // keep the track until the last level's containers have started (re-touch if they do not)
        return { requeueAfter: RETOUCH_AFTER_MS };
      }
      this.loop.add(key); // the next level may already be ready (e.g. equal readiness from a user-made ConfigMap)
      return;
    }
    if (track.owedTouch) {
      const { value, complete, reason } = track.owedTouch;
      return (await this.touch(pod, track, value, complete, reason)) ? undefined : { requeueAfter: STALE_POD_RETRY_MS };
    }
    if (decision.complete) {
      // every key present (a user-made ConfigMap, or our write landed before a restart): just mark it
      const touched = await this.touch(pod, track, `complete@${this.options.clock.now()}`, true, 'complete');
      return { requeueAfter: touched ? RETOUCH_AFTER_MS : STALE_POD_RETRY_MS };
    }
    return this.retouchIfBlocked(key, pod, plan, track, keys);
  }

  /** After completion: nothing to do unless a container waits on a missing key (ConfigMap deleted, then a restart). */
  private async afterCompletion(
    key: string,
    pod: WirePod,
    plan: BarrierPlan,
    track: PodTrack,
  ): Promise<{ requeueAfter?: number } | void> {
    const stuck = blockedOnBarrier(pod, plan);
    const sinceTouch = track.lastTouchAt === undefined ? Infinity : this.options.clock.now() - track.lastTouchAt;
    if (stuck.length === 0 && sinceTouch >= RETOUCH_AFTER_MS) {
      this.drop(key);
      return;
    }
    if (!this.tracks.has(key)) {
      this.tracks.set(key, track);
      this.keyByUid.set(track.uid, key);
    }
    if (stuck.length === 0) return { requeueAfter: RETOUCH_AFTER_MS - sinceTouch };
    this.options.poller.watch(track.uid); // retouchIfBlocked checks the runtime first
    const allKeys = plan.levels.flatMap((l) => l.keys);
    return this.retouchIfBlocked(key, pod, plan, track, new Set(allKeys), stuck);
  }

  /**
   * A released container that kubelet still reports Waiting CreateContainerConfigError on the barrier
   * RETOUCH_AFTER_MS after the last touch (its sync ran before kubelet's ConfigMap cache had the key, or the
   * ConfigMap was deleted): make sure its key exists (recreating the ConfigMap if needed) and touch the pod
   * again, with a doubling delay.
   */
  private async retouchIfBlocked(
    key: string,
    pod: WirePod,
    plan: BarrierPlan,
    track: PodTrack,
    keys: ReadonlySet<string>,
    stuckFromStatus?: string[],
  ): Promise<{ requeueAfter?: number } | void> {
    const runtime = this.options.poller.view(track.uid);
    // not listed yet (e.g. the agent has just started): a status that says blocked may be older than the start
    // kubelet has made since; the first listing enqueues the pod again
    if (!runtime) return;
    const released = plan.levels.filter((l) => isReleased(l, keys));
    const blockedStatus = new Set(stuckFromStatus ?? blockedOnBarrier(pod, plan));
    const blocked = released
      .flatMap((l) => l.containers)
      // kubelet tried and could not find the key, and the runtime has no instance of it that is created or running
      // (after a restart the exited one stays). Absence alone is no evidence: a busy kubelet may not have made the
      // sandbox yet.
      .filter((c) => blockedStatus.has(c) && !startedOrStarting(runtime.get(c)));
    if (blocked.length === 0) return;
    const now = this.options.clock.now();
    const due = (track.lastTouchAt ?? -Infinity) + track.retouchDelayMs;
    if (now < due) return { requeueAfter: due - now };
    const wanted = released.flatMap((l) => l.keys);
    const current = await this.options.api.observe(namespaceOf(pod), plan.configMapName);
    if (current && ownedByOtherPod(current, track.uid)) throw this.earlierPodsBarrier(pod, plan, track);
    const present = presentKeys(current?.data);
    const missing = wanted.filter((k) => !present.has(k));
    if (!current || missing.length > 0) {
      track.barrier = await this.writeKeys(pod, plan, track, current ?? 'absent', missing, wanted, 'missing');
    } else {
      track.barrier = current;
    }
    this.log.info(
      { pod: key, containers: blocked, keysRestored: missing },
      'released containers still wait; touching the pod again',
    );
    const complete = pod.metadata?.annotations?.[CONTAINER_LAUNCH_PRIORITY_COMPLETED_ANNOTATION] === 'true';
    if (!(await this.touch(pod, track, `${wanted[wanted.length - 1] ?? 'retry'}@${now}`, complete, 'retry'))) {
      return { requeueAfter: STALE_POD_RETRY_MS };
    }
    track.retouchDelayMs = Math.min(track.retouchDelayMs * 2, RETOUCH_MAX_MS);
    return { requeueAfter: track.retouchDelayMs };
  }

  /**
   * The barrier ConfigMap as last known; seen once per pod (and after a failed write) through an empty patch. One
   * left by an earlier pod of the same name (not yet garbage-collected) is neither used nor written: its keys are not
   * ours, and the agent removes no key and changes no owner (the node-confinement policy refuses both); the pod is
   * looked at again until the collector has removed it.
   */
  private async barrierOf(pod: WirePod, plan: BarrierPlan, track: PodTrack): Promise<ConfigMapObject | 'absent'> {
    if (track.barrier !== undefined) return track.barrier;
    const found = await this.options.api.observe(namespaceOf(pod), plan.configMapName);
    if (found && ownedByOtherPod(found, track.uid)) throw this.earlierPodsBarrier(pod, plan, track);
    track.barrier = found ?? 'absent';
    return track.barrier;
  }

  /** Reported once per pod: its barrier is an earlier pod's; the error makes the loop look again with backoff. */
  private earlierPodsBarrier(pod: WirePod, plan: BarrierPlan, track: PodTrack): Error {
    track.barrier = undefined;
    if (!track.waitedForCollector) {
      track.waitedForCollector = true;
      this.options.events.event(
        pod,
        'Normal',
        EVENT_REASON_BARRIER_OF_EARLIER_POD,
        `ConfigMap ${plan.configMapName} belongs to an earlier pod of the same name; waiting for the garbage collector to remove it`,
      );
    }
    return new Error(`ConfigMap ${plan.configMapName} belongs to an earlier pod of the same name`);
  }

  /** Write keys: add `newKeys` to the ConfigMap, or create it with `allKeys` when it is missing. */
  private async writeKeys(
    pod: WirePod,
    plan: BarrierPlan,
    track: PodTrack,
    barrier: ConfigMapObject | 'absent',
    newKeys: string[],
    allKeys: string[],
    /** Whether an absent ConfigMap is the first one, or one that existed and was deleted. */
    absentIs: 'first' | 'missing' = 'first',
  ): Promise<ConfigMapObject> {
    const ns = namespaceOf(pod);
    const owner = { name: pod.metadata?.name ?? '', uid: track.uid };
    const create = async (reason: 'first' | 'missing'): Promise<ConfigMapObject> => {
      try {
        const created = await this.options.api.create(ns, plan.configMapName, owner, allKeys);
        if (reason === 'missing') {
          this.options.metrics.barrierRecreated('missing');
          this.options.events.event(
            pod,
            'Normal',
            EVENT_REASON_BARRIER_RECREATED,
            `ConfigMap ${plan.configMapName} was missing; recreated with ${allKeys.join(', ') || 'no keys'}`,
          );
        }
        return created;
      } catch (err) {
        if (isAlreadyExists(err)) track.barrier = undefined; // someone made it meanwhile: read it next time
        throw err;
      }
    };
    if (barrier === 'absent') return create(absentIs);
    if (ownedByOtherPod(barrier, track.uid)) throw this.earlierPodsBarrier(pod, plan, track);
    if (newKeys.length === 0) return barrier;
    try {
      const written = await this.options.api.addKeys(ns, plan.configMapName, newKeys);
      // replaced meanwhile by a barrier of another pod: the keys went there, which is harmless, and are not ours
      if (ownedByOtherPod(written, track.uid)) throw this.earlierPodsBarrier(pod, plan, track);
      return written;
    } catch (err) {
      if (!isNotFound(err)) {
        track.barrier = undefined;
        throw err;
      }
      return create('missing'); // deleted mid-way: recreate it with every key released so far
    }
  }

  /**
   * Annotate the pod (kubelet syncs it on the change). False when the pod is gone or changed since the cache saw it:
   * the patch is guarded by the pod's uid (and, on a pod without annotations, its resourceVersion), and the real API
   * server answers a failed guard with a bare 422 Invalid (no details); the touch is then owed, made again once the
   * watch has brought the newer pod (or dropped with the pod when it is going).
   */
  private async touch(
    pod: WirePod,
    track: PodTrack,
    value: string,
    complete: boolean,
    reason: TouchReason,
  ): Promise<boolean> {
    const annotations: Record<string, string> = { [BARRIER_RELEASED_ANNOTATION]: value };
    if (complete) annotations[CONTAINER_LAUNCH_PRIORITY_COMPLETED_ANNOTATION] = BARRIER_VALUE;
    const hasAnnotations = pod.metadata?.annotations !== undefined;
    try {
      await this.options.api.annotatePod(
        namespaceOf(pod),
        pod.metadata?.name ?? '',
        track.uid,
        annotations,
        hasAnnotations ? undefined : (pod.metadata?.resourceVersion ?? ''),
      );
    } catch (err) {
      if (isNotFound(err)) return false; // deleted meanwhile: the watch will tell
      if (isInvalid(err)) {
        this.log.debug({ pod: podKey(pod), reason }, 'the pod changed since the cache saw it; touching it again');
        track.owedTouch = { value, complete, reason };
        return false;
      }
      throw err; // a transient error: retried with backoff
    }
    track.owedTouch = undefined;
    track.lastTouchAt = this.options.clock.now();
    this.options.metrics.touched(reason);
    return true;
  }
}

/** A runtime instance kubelet has created or started (an exited one is what a blocked restart leaves). */
function startedOrStarting(container: RuntimeContainer | undefined): boolean {
  return container?.state === 'CONTAINER_CREATED' || container?.state === 'CONTAINER_RUNNING';
}

export function podKey(pod: KubeObject): string {
  return `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
}

function namespaceOf(pod: WirePod): string {
  return pod.metadata?.namespace ?? 'default';
}

function ownedByOtherPod(cm: ConfigMapObject, uid: string): boolean {
  const podOwners = (cm.metadata?.ownerReferences ?? []).filter((o) => o.kind === 'Pod' && o.apiVersion === 'v1');
  return podOwners.length > 0 && !podOwners.some((o) => o.uid === uid);
}

function containerStatuses(pod: WirePod): Map<string, StatusContainer> {
  const map = new Map<string, StatusContainer>();
  const list: unknown = pod.status?.containerStatuses;
  if (!Array.isArray(list)) return map;
  for (const s of list as StatusContainer[]) if (typeof s?.name === 'string') map.set(s.name, s);
  return map;
}

/**
 * Containers whose readiness only kubelet can tell: a readiness or startup probe, or a postStart hook (kubelet runs
 * it before it goes on, and reports the container ready only after it; a sidecar's hook often waits for it to serve).
 */
function probedContainers(pod: WirePod): Set<string> {
  const probed = new Set<string>();
  for (const c of Array.isArray(pod.spec?.containers) ? pod.spec.containers : []) {
    if (c && typeof c.name === 'string' && (c.readinessProbe || c.startupProbe || c.lifecycle?.postStart)) {
      probed.add(c.name);
    }
  }
  return probed;
}

function updateStatusReadySince(pod: WirePod, track: PodTrack, now: number): void {
  for (const [name, s] of containerStatuses(pod)) {
    if (s.ready === true) {
      if (!track.statusReadySince.has(name)) track.statusReadySince.set(name, now);
    } else {
      track.statusReadySince.delete(name);
    }
  }
}

/** Gated containers the pod status shows waiting on a missing ConfigMap key of the barrier. */
function blockedOnBarrier(pod: WirePod, plan: BarrierPlan): string[] {
  const gated = new Set(plan.levels.flatMap((l) => l.containers));
  const blocked: string[] = [];
  for (const [name, s] of containerStatuses(pod)) {
    const waiting = s.state?.waiting;
    if (!gated.has(name) || !waiting || waiting.reason !== CREATE_CONTAINER_CONFIG_ERROR) continue;
    const message = typeof waiting.message === 'string' ? waiting.message : '';
    if (message === '' || message.includes(plan.configMapName)) blocked.push(name);
  }
  return blocked;
}
