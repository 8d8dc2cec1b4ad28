// The CRR executor: watches the active ContainerRecreateRequests labelled for this node, keys work by pod
// ("<namespace>/<podName>"), takes one CRR per pod at a time (the others are marked Pending), and drives it:
// phase Recreating, then per container preStop + StopContainer (one at a time when orderedRecreate), until every
// container is recreated, started and ready (pod status in the node's pod cache) or failed; then Completed.
// A container may be a native sidecar (its status in initContainerStatuses): it is stopped and awaited like a regular
// one, in the CRR's order (kubelet starts it again at once, beside the running regular containers).
// Level-triggered: each round recomputes from the CRR cache, the pod cache and the runtime; a round that waits
// (for the cache to catch up with our own write, for a container, for the unready grace period) always requeues.
// Every status write is conditional on the CRR read; a CRR found finished (the controller completed it on a deadline,
// a gone pod or no response) is never written again.
import {
  CRR_ACTIVE_LABEL,
  CRR_DEFAULT_TERMINATION_GRACE_SECONDS,
  CRR_NODE_NAME_LABEL,
  CRR_POD_UID_LABEL,
  CRR_UNREADY_ACQUIRED_KEY,
} from '../../api/constants.js';
import {
  CONTAINER_RECREATE_REQUESTS,
  crrFinished,
  type ContainerRecreateRequest,
  type ContainerRecreateRequestContainerRecreateState as RecreateState,
  type ContainerRecreateRequestStatus,
} from '../../api/containerrecreaterequest.js';
import { restartPolicyProblem } from '../../api/containerrecreaterequest-restart-policy.js';
import { longRunningStatuses } from '../../api/pod-sidecars.js';
import type { WirePod } from '../../api/wire.js';
import { CriNotFoundError } from '../../cri/errors.js';
import { errorMessage } from '../../util/error-message.js';
import {
  ControllerLoop,
  EventRecorder,
  Informer,
  OwnWriteExpectations,
  patchStatus,
  type KubeClient,
  type KubeMetrics,
  type KubeObject,
  type ListWatcher,
  type ReconcileResult,
} from '../../kube/index.js';
import type { Logger } from '../../observability/logger.js';
import type { Clock } from '../../util/clock.js';
import type { NodePods } from '../node-pods.js';
import { ContainerKiller, type EventSink } from '../podruntime/container-killer.js';
import { LateRuntime } from '../podruntime/late-runtime.js';
import {
  listPodContainers,
  newestByName,
  parseContainerId,
  type ContainerRuntime,
} from '../podruntime/pod-containers.js';
import type { CrrMetrics } from './metrics.js';
import { nextStep, phaseWeight, sameStates, type ReportedContainer } from './recreate-states.js';
import { rfc3339 } from '../../util/time.js';

export const EVENT_SOURCE_CONTAINER_RECREATE = 'kruise-daemon-crr';
const POD_INDEX = 'pod';
/** Poll for the manager's unready-acquired mark (its write also wakes us through the watch). */
const UNREADY_POLL_MS = 1000;
const CACHE_WAIT_MS = 50;

export interface CrrControllerOptions {
  nodeName: string;
  client: KubeClient;
  /** Where the CRR informer lists/watches (default: the client). */
  crrSource?: ListWatcher<ContainerRecreateRequest> | undefined;
  pods: NodePods;
  /** The runtime once connected; rejects if `signal` aborts first. */
  runtime: (signal: AbortSignal) => Promise<ContainerRuntime>;
  clock: Clock;
  logger: Logger;
  metrics: CrrMetrics;
  kubeMetrics?: KubeMetrics;
  /** Pods worked on at once (each may wait a grace period in a preStop hook). */
  workers?: number;
  events?: EventSink & { close?(): Promise<void> | void };
}

export function podKeyOf(crr: ContainerRecreateRequest): string {
  return `${crr.metadata?.namespace ?? ''}/${crr.spec?.podName ?? ''}`;
}

function isActive(crr: ContainerRecreateRequest): boolean {
  return !crr.metadata?.deletionTimestamp && !crr.status?.completionTime;
}

/** Why the agent cannot execute this CRR (the webhook should have refused it), or undefined. */
export function executionProblem(crr: ContainerRecreateRequest): string | undefined {
  if (!crr.spec || typeof crr.spec.podName !== 'string' || crr.spec.podName === '') return 'spec.podName is empty';
  if (!Array.isArray(crr.spec.containers) || crr.spec.containers.length === 0) return 'spec.containers is empty';
  if (!crr.metadata?.labels?.[CRR_POD_UID_LABEL]) return `label ${CRR_POD_UID_LABEL} is missing`;
  const runtimes = new Set<string>();
  for (const [i, c] of crr.spec.containers.entries()) {
    const parsed = parseContainerId(c.statusContext?.containerID);
    if (!parsed) {
      return `failed to find runtime service: spec.containers[${i}].statusContext.containerID is missing or not <runtime>://<id>`;
    }
    runtimes.add(parsed.runtime);
  }
  if (runtimes.size > 1)
    return `failed to find runtime service: containers of several runtimes (${[...runtimes].join(', ')})`;
  return undefined;
}

export class CrrController {
  readonly informer: Informer<ContainerRecreateRequest>;
  private readonly loop: ControllerLoop;
  private readonly expectations: OwnWriteExpectations;
  private readonly events: EventSink & { close?(): Promise<void> | void };
  private readonly killer: ContainerKiller;
  private readonly arrivals = new Map<string, number>();
  private readonly stopping = new AbortController();
  private removePodHandlers?: () => void;
  private readonly runtime: LateRuntime;

  constructor(private readonly options: CrrControllerOptions) {
    const { nodeName, clock, logger, kubeMetrics } = options;
    this.informer = new Informer<ContainerRecreateRequest>(
      CONTAINER_RECREATE_REQUESTS,
      options.crrSource ?? options.client,
      {
        name: 'crr',
        labelSelector: `${CRR_NODE_NAME_LABEL}=${nodeName},${CRR_ACTIVE_LABEL}=true`,
        clock,
        logger,
        metrics: kubeMetrics,
        indexers: { [POD_INDEX]: (crr) => [podKeyOf(crr)] },
      },
    );
    this.loop = new ControllerLoop(
      'crr',
      {
        workers: options.workers ?? 16,
        clock,
        logger,
        kubeMetrics,
      },
      (key) => this.reconcile(key),
    );
    this.expectations = new OwnWriteExpectations(clock);
    this.expectations.follow(this.informer, uidOf);
    this.events =
      options.events ??
      new EventRecorder(options.client, {
        component: EVENT_SOURCE_CONTAINER_RECREATE,
        host: nodeName,
        clock,
        logger,
        metrics: kubeMetrics,
      });
    this.runtime = new LateRuntime(options.runtime);
    this.killer = new ContainerKiller({ runtime: this.runtime, events: this.events, clock, logger });
  }

  start(): void {
    const { informer, loop } = this;
    informer.addHandlers({
      onAdd: (crr) => {
        if (crr.metadata?.uid) this.arrivals.set(crr.metadata.uid, this.options.clock.now());
        if (isActive(crr)) loop.add(podKeyOf(crr));
      },
      onUpdate: (_, crr) => {
        if (isActive(crr)) loop.add(podKeyOf(crr));
      },
      onDelete: (crr) => {
        if (crr.metadata?.uid) this.arrivals.delete(crr.metadata.uid);
      },
    });
    const onPod = (pod: WirePod): void => {
      const key = `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
      if (informer.store.byIndex(POD_INDEX, key).length > 0) loop.add(key);
    };
    this.removePodHandlers = this.options.pods.addHandlers({
      onAdd: onPod,
      onUpdate: (_, p) => onPod(p),
      onDelete: onPod,
    });
    informer.start();
    loop.start();
  }

  async stop(): Promise<void> {
    this.stopping.abort(new Error('the CRR controller is stopping'));
    this.removePodHandlers?.();
    await this.loop.stop();
    await this.informer.stop();
    await this.events.close?.();
  }

  /** Liveness: throws until the CRR watch has synced. */
  checkSynced(): void {
    if (!this.informer.hasSynced()) throw new Error('the ContainerRecreateRequest informer has not synced yet');
  }

  /** One round for the CRRs of one pod. */
  async reconcile(podKey: string): Promise<ReconcileResult | void> {
    const { pods, clock, logger } = this.options;
    if (!this.informer.hasSynced() || !pods.hasSynced()) return { requeueAfter: 200 };
    const crrs = this.informer.store.byIndex(POD_INDEX, podKey).filter(isActive);
    if (crrs.length === 0) return;
    if (crrs.some((c) => !this.expectations.isFresh(uidOf(c), c.metadata?.resourceVersion)))
      return { requeueAfter: CACHE_WAIT_MS };
    crrs.sort(
      (a, b) =>
        phaseWeight(a.status?.phase) - phaseWeight(b.status?.phase) ||
        (a.metadata?.creationTimestamp ?? '').localeCompare(b.metadata?.creationTimestamp ?? '') ||
        (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''),
    );
    const [picked, ...others] = crrs as [ContainerRecreateRequest, ...ContainerRecreateRequest[]];
    for (const other of others) {
      if (!other.status?.phase) await this.writeStatus(other, { phase: 'Pending' });
    }
    const log = logger.child({ crr: `${picked.metadata?.namespace}/${picked.metadata?.name}`, pod: podKey });

    const pod = pods.get(podKey);
    const podUid = picked.metadata?.labels?.[CRR_POD_UID_LABEL] ?? '';
    const problem = executionProblem(picked) ?? restartProblem(picked, pod);
    if (problem) {
      log.warn({ problem }, 'cannot execute this ContainerRecreateRequest; completing it');
      this.options.metrics.completed.inc({ result: 'invalid' });
      await this.writeStatus(picked, { phase: 'Completed', completionTime: rfc3339(clock.now()), message: problem });
      return;
    }

    const unreadyGrace = picked.spec.strategy?.unreadyGracePeriodSeconds;
    if (unreadyGrace !== undefined && unreadyGrace !== null) {
      const acquired = picked.metadata?.annotations?.[CRR_UNREADY_ACQUIRED_KEY];
      if (!acquired) {
        if (picked.status?.phase !== 'Recreating') await this.writeStatus(picked, { phase: 'Recreating' });
        return { requeueAfter: UNREADY_POLL_MS };
      }
      const at = Date.parse(acquired);
      if (Number.isNaN(at)) {
        await this.writeStatus(picked, {
          phase: 'Completed',
          completionTime: rfc3339(clock.now()),
          message: `failed to parse unready time ${JSON.stringify(acquired)} in annotation ${CRR_UNREADY_ACQUIRED_KEY}`,
        });
        return;
      }
      const left = at + unreadyGrace * 1000 - clock.now();
      if (left > 0) {
        if (picked.status?.phase !== 'Recreating') await this.writeStatus(picked, { phase: 'Recreating' });
        return { requeueAfter: left + 100 };
      }
    }

    await this.runtime.ready(this.stopping.signal);
    // start times matter only for instances that replaced the one the CRR was made for
    const contextIds = new Map(
      picked.spec.containers.map((c) => [c.name, parseContainerId(c.statusContext?.containerID)?.id]),
    );
    const containers = await listPodContainers(
      this.runtime,
      podUid,
      (c) => contextIds.has(c.name) && contextIds.get(c.name) !== c.id,
    );
    const step = nextStep({
      crr: picked,
      runtime: newestByName(containers),
      reported: reportedContainers(pod, podUid),
      nowMs: clock.now(),
    });

    if (step.kind === 'complete') {
      const failed = step.states.some((s) => s.phase === 'Failed');
      this.options.metrics.completed.inc({ result: failed ? 'failed' : 'succeeded' });
      log.info({ failed }, 'ContainerRecreateRequest completed');
      await this.writeStatus(picked, {
        phase: 'Completed',
        completionTime: rfc3339(clock.now()),
        message: '',
        containerRecreateStates: step.states,
      });
      return;
    }
    if (step.kind === 'wait') {
      if (picked.status?.phase !== 'Recreating' || !sameStates(picked.status?.containerRecreateStates, step.states)) {
        await this.writeStatus(picked, { phase: 'Recreating', containerRecreateStates: step.states });
      }
      return step.recheckMs ? { requeueAfter: step.recheckMs } : undefined;
    }

    // kill. The CRR's phase Recreating is written before the preStop hook begins, so a long hook shows as progress and
    // is never taken for an absent agent. The container stays Pending through its hook and stop and is Recreating,
    // isKilled once the stop returned, as OpenKruise records it (isKilled: the container was stopped). A restarted
    // agent tells from the runtime whether the stop happened (the instance exited or was replaced); a hook cut by the
    // agent's death runs again (at least once, as kubelet's hooks). With forceRecreate the runtime cannot tell (a
    // restart before the CRR counts for nothing), so there the record is written before the stop, and an agent killed
    // between the stop and its record never stops the new instance.
    const spec = picked.spec.containers.find((c) => c.name === step.container)!;
    const grace = picked.spec.strategy?.terminationGracePeriodSeconds ?? CRR_DEFAULT_TERMINATION_GRACE_SECONDS;
    const recordFirst = picked.spec.strategy?.forceRecreate === true;
    const current = await this.writeStatus(picked, {
      phase: 'Recreating',
      containerRecreateStates: recordFirst ? step.states : step.before,
    });
    if (crrFinished(current.status)) {
      log.info({ container: step.container }, 'ContainerRecreateRequest completed meanwhile; not stopping');
      return;
    }
    const uid = picked.metadata?.uid ?? '';
    const arrival = this.arrivals.get(uid);
    if (arrival !== undefined) {
      this.options.metrics.reactionSeconds.observe((clock.now() - arrival) / 1000);
      this.arrivals.delete(uid);
    }
    log.info(
      {
        container: step.container,
        containerId: step.runtimeId,
        sinceArrivalMs: arrival === undefined ? undefined : clock.now() - arrival,
      },
      'stopping container',
    );
    let states = step.states;
    try {
      await this.killer.kill({
        pod: pod ?? podReference(picked, podUid),
        podIP: pod?.status?.podIP,
        containerId: step.runtimeId,
        containerName: step.container,
        preStop: spec.preStop,
        ports: spec.ports,
        gracePeriodSeconds: grace,
        message: `Stopping container ${step.container} by ContainerRecreateRequest ${picked.metadata?.name}`,
      });
      this.options.metrics.containersStopped.inc({ result: 'ok' });
    } catch (err) {
      if (err instanceof CriNotFoundError) {
        // kubelet removed this instance meanwhile (RestartAllContainers removes every container of the pod before
        // it starts them again; so does a pod being deleted): it no longer runs, and the next round sees it replaced
        // or gone. Not a failure, and never a second stop of the instance that replaces it. containerd 1.7 and 2.x and
        // CRI-O 1.36 answer a stop of a removed container with success (CRI: StopContainer is idempotent); this is for
        // a runtime that answers NotFound.
        this.options.metrics.containersStopped.inc({ result: 'gone' });
        log.info({ container: step.container, containerId: step.runtimeId }, 'container removed before the stop');
      } else {
        this.options.metrics.containersStopped.inc({ result: 'error' });
        const message = `kill container error: ${errorMessage(err)}`;
        log.warn({ container: step.container, err: message }, 'could not stop container');
        states = step.states.map((s) => (s.name === step.container ? { name: s.name, phase: 'Failed', message } : s));
      }
    }
    await this.recordStop(
      current,
      step.container,
      states.find((s) => s.name === step.container)!,
    );
    return { requeueAfter: CACHE_WAIT_MS };
  }

  /**
   * The stopped container's state once its stop returned, also on a CRR finished meanwhile (its deadline passed
   * during the preStop hook): only that container's entry changes, and never one already Succeeded or Failed; the
   * CRR's phase, completion time and message are left as they are. Conditional on what was read, as every write.
   */
  private async recordStop(crr: ContainerRecreateRequest, container: string, state: RecreateState): Promise<void> {
    const result = await patchStatus(client(this.options), CONTAINER_RECREATE_REQUESTS, crr, (draft) => {
      const states = draft.status?.containerRecreateStates ?? [];
      const i = states.findIndex((s) => s.name === container);
      const prev = states[i];
      if (!prev || prev.phase === 'Succeeded' || prev.phase === 'Failed') return;
      states[i] = state;
      draft.status = { ...(draft.status ?? { phase: 'Recreating' }), containerRecreateStates: states };
    });
    if (result.patched) this.expectations.expect(uidOf(crr), result.object.metadata?.resourceVersion);
  }

  /**
   * Merge-patch these status fields (whole containerRecreateStates array), conditional on `crr`'s resourceVersion,
   * and expect the cache to catch up. After a conflict the fresh CRR is written only if it is not finished: the
   * result is then that finished CRR, unchanged.
   */
  private async writeStatus(
    crr: ContainerRecreateRequest,
    fields: Partial<ContainerRecreateRequestStatus>,
  ): Promise<ContainerRecreateRequest> {
    const result = await patchStatus(client(this.options), CONTAINER_RECREATE_REQUESTS, crr, (draft) => {
      if (crrFinished(draft.status)) return;
      draft.status = { ...(draft.status ?? { phase: '' }), ...fields };
      if (draft.status.message === '') delete draft.status.message;
    });
    if (result.patched) this.expectations.expect(uidOf(crr), result.object.metadata?.resourceVersion);
    return result.object;
  }
}

function uidOf(crr: ContainerRecreateRequest): string {
  return crr.metadata?.uid ?? '';
}

function client(options: CrrControllerOptions): KubeClient {
  return options.client;
}

/** Why kubelet would not start a container of the CRR again (restartPolicy), from the cached pod if it is the CRR's. */
function restartProblem(crr: ContainerRecreateRequest, pod: WirePod | undefined): string | undefined {
  if (!pod || pod.metadata?.uid !== crr.metadata?.labels?.[CRR_POD_UID_LABEL]) return undefined;
  for (const c of crr.spec.containers) {
    const problem = restartPolicyProblem(pod, c.name);
    if (problem) return problem;
  }
  return undefined;
}

/**
 * The pod's containers as kubelet reports them (regular ones in containerStatuses, native sidecars in
 * initContainerStatuses), if the cached pod is the CRR's (same uid).
 */
export function reportedContainers(pod: WirePod | undefined, podUid: string): Map<string, ReportedContainer> {
  const reported = new Map<string, ReportedContainer>();
  if (!pod || pod.metadata?.uid !== podUid) return reported;
  for (const cs of longRunningStatuses(pod)) {
    reported.set(cs.name, {
      id: parseContainerId(cs.containerID)?.id,
      ready: cs.ready === true,
      running: cs.state?.running !== undefined && cs.state.running !== null,
      waiting: cs.state?.waiting?.reason
        ? { reason: cs.state.waiting.reason, message: cs.state.waiting.message }
        : undefined,
    });
  }
  return reported;
}

function podReference(crr: ContainerRecreateRequest, uid: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { namespace: crr.metadata?.namespace, name: crr.spec.podName, uid },
  };
}
