// Runtime container meta and env-from-metadata restarts for the pods on this node. For each managed pod it keeps
// apps.kruise.io/runtime-containers-meta (container ids, restart counts, kubelet's hash, the env hash the running
// container really has, read once per container with ExecSync `env`). While the pod's InPlaceUpdateReady condition
// is False, containers whose env-from-metadata values changed are restarted in launch-priority batches, each batch
// recorded in apps.kruise.io/inplace-update-state containerBatchesRecord before its containers are stopped.
import {
  EVENT_SOURCE_CONTAINER_META,
  IN_PLACE_UPDATE_READY_CONDITION,
  IN_PLACE_UPDATE_STATE_ANNOTATION,
  KRUISE_GROUP,
  RUNTIME_CONTAINERS_META_ANNOTATION,
  SIDECARSET_HASH_ANNOTATION,
} from '../../api/constants.js';
import {
  currentEnvHash,
  envFromMetadata,
  envHash,
  expectedEnvHash,
  parseInPlaceUpdateState,
  parseRuntimeContainerMetaSet,
  type RuntimeContainerMeta,
  type RuntimeContainerMetaSet,
} from '../../api/runtime-container-meta.js';
import type { WireContainer, WirePod } from '../../api/wire.js';
import {
  ControllerLoop,
  CoreResources,
  EventRecorder,
  OwnWriteExpectations,
  type KubeClient,
  type KubeMetrics,
  type KubeObject,
  type ReconcileResult,
} from '../../kube/index.js';
import type { Logger } from '../../observability/logger.js';
import { backoffDelay } from '../../util/backoff.js';
import type { Clock } from '../../util/clock.js';
import type { NodePods } from '../node-pods.js';
import { ContainerKiller, type EventSink } from '../podruntime/container-killer.js';
import {
  listPodContainers,
  newestByName,
  parseContainerId,
  type ContainerRuntime,
  type RuntimeContainer,
} from '../podruntime/pod-containers.js';
import { containerPriority, planBatch } from './batches.js';
import { errorMessage } from '../../util/error-message.js';
import { rfc3339 } from '../../util/time.js';

/** ExecSync `env` deadline (OpenKruise: 3 s) and the retry delay when it fails. */
const ENV_EXEC_TIMEOUT_MS = 3000;
const ENV_RETRY_MS = 3000;
const CACHE_WAIT_MS = 50;
const BATCH_RECHECK_MS = 1000;
const DEFAULT_GRACE_SECONDS = 30;
/** A container restarted for some values that comes back with other ones (kubelet saw older metadata) is restarted
 * again only after a backoff: 3 s, doubling, at most 10 min (OpenKruise's restarter queue). */
const RESTART_BACKOFF_MS = 3000;
const RESTART_BACKOFF_MAX_MS = 600_000;
/**
 * A container is stopped for new env-from-metadata values only once the agent has had them this long. kubelet syncs a
 * pod with the pod object it held when the sync began, after waiting for its next runtime relist (PLEG, every 1 s):
 * a container stopped during that wait is started again from the pod as it was, with the old values, and the second
 * restart then meets kubelet's crash-loop backoff (10 s). Such a sync is the rule, not bad luck: the workload
 * controller sets InPlaceUpdateReady False (a readiness gate, so kubelet syncs the pod) right before it writes the new
 * metadata. Seen on a real kubelet 1.33; OpenKruise's agent stops about 4 s after the change (a 1 s enqueue delay,
 * then its restarter queue's 3 s).
 */
export const KUBELET_SETTLE_MS = 2000;

interface RestartRecord {
  expected: number;
  attempts: number;
  notBefore: number;
}

export interface ContainerMetaControllerOptions {
  nodeName: string;
  /** Writes the pod annotations (merge patch of metadata). */
  client: Pick<KubeClient, 'patch'> & Partial<Pick<KubeClient, 'create'>>;
  pods: NodePods;
  runtime: (signal: AbortSignal) => Promise<ContainerRuntime>;
  clock: Clock;
  logger: Logger;
  kubeMetrics?: KubeMetrics;
  workers?: number;
  events?: EventSink & { close?(): Promise<void> | void };
  /** How long new values wait for kubelet before a restart (default KUBELET_SETTLE_MS). */
  kubeletSettleMs?: number;
}

/** Pods OpenKruise manages meta for (owned by an apps.kruise.io workload, or SidecarSet-injected), and pods that
 * take part in in-place updates (InPlaceUpdateReady readiness gate) or already carry the annotation. */
export function isManaged(pod: WirePod): boolean {
  const meta = pod.metadata;
  if (meta?.annotations?.[RUNTIME_CONTAINERS_META_ANNOTATION] !== undefined) return true;
  if (meta?.annotations?.[SIDECARSET_HASH_ANNOTATION] !== undefined) return true;
  if ((meta?.ownerReferences ?? []).some((o) => o.controller && o.apiVersion.startsWith(`${KRUISE_GROUP}/`)))
    return true;
  return (pod.spec?.readinessGates ?? []).some((g) => g.conditionType === IN_PLACE_UPDATE_READY_CONDITION);
}

/** What a pod event must change for the meta to need another look. */
function signature(pod: WirePod): string {
  return JSON.stringify([
    pod.metadata?.labels ?? {},
    pod.metadata?.annotations ?? {},
    (pod.status?.containerStatuses ?? []).map((c) => [c.name, c.containerID ?? '', c.ready]),
    (pod.status?.conditions ?? []).find((c) => c.type === IN_PLACE_UPDATE_READY_CONDITION)?.status ?? '',
    pod.metadata?.deletionTimestamp ?? '',
  ]);
}

function uidOf(pod: WirePod): string {
  return pod.metadata?.uid ?? '';
}

function keyOf(pod: WirePod): string {
  return `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
}

export class ContainerMetaController {
  private readonly loop: ControllerLoop;
  private readonly expectations: OwnWriteExpectations;
  private readonly events: EventSink & { close?(): Promise<void> | void };
  private readonly killer: ContainerKiller;
  private readonly stopping = new AbortController();
  /** Per pod uid, runtime ids this agent has stopped (never stopped twice within one run; after a restart of the
   * agent the runtime shows them exited). Dropped with the pod. */
  private readonly stopped = new Map<string, Set<string>>();
  /** Per pod uid and container name: the values it was last restarted for, and when it may be restarted again. */
  private readonly restarts = new Map<string, RestartRecord>();
  /** Per pod uid and container name: the env hash the pod's metadata asks for, when this agent first saw it. */
  private readonly noticed = new Map<string, { expected: number; atMs: number }>();
  private runtimeHandle?: ContainerRuntime;
  private removeHandlers?: () => void;

  constructor(private readonly options: ContainerMetaControllerOptions) {
    this.loop = new ControllerLoop({
      name: 'containermeta',
      workers: options.workers ?? 4,
      clock: options.clock,
      logger: options.logger,
      kubeMetrics: options.kubeMetrics,
      reconcile: (key) => this.reconcile(key),
    });
    this.expectations = new OwnWriteExpectations(options.clock);
    this.events =
      options.events ??
      new EventRecorder(options.client as KubeClient, {
        component: EVENT_SOURCE_CONTAINER_META,
        host: options.nodeName,
        clock: options.clock,
        logger: options.logger,
        metrics: options.kubeMetrics,
      });
    const runtime: ContainerRuntime = {
      listContainers: (...a) => this.rt().listContainers(...a),
      containerStatus: (...a) => this.rt().containerStatus(...a),
      stopContainer: (...a) => this.rt().stopContainer(...a),
      execSync: (...a) => this.rt().execSync(...a),
    };
    this.killer = new ContainerKiller({ runtime, events: this.events, clock: options.clock, logger: options.logger });
  }

  private rt(): ContainerRuntime {
    if (!this.runtimeHandle) throw new Error('the container runtime is not connected yet');
    return this.runtimeHandle;
  }

  start(): void {
    const enqueue = (pod: WirePod): void => {
      if (!pod.metadata?.deletionTimestamp && isManaged(pod) && (pod.status?.containerStatuses ?? []).length > 0) {
        this.loop.add(keyOf(pod));
      }
    };
    const unfollow = this.expectations.follow(this.options.pods, uidOf);
    const removePodHandlers = this.options.pods.addHandlers({
      onAdd: enqueue,
      onUpdate: (old, pod) => {
        if (signature(old) !== signature(pod)) enqueue(pod);
      },
      onDelete: (pod) => {
        this.stopped.delete(pod.metadata?.uid ?? '');
        const prefix = `${pod.metadata?.uid ?? ''}/`;
        for (const byContainer of [this.restarts, this.noticed]) {
          for (const key of byContainer.keys()) if (key.startsWith(prefix)) byContainer.delete(key);
        }
      },
    });
    this.removeHandlers = () => {
      unfollow();
      removePodHandlers();
    };
    this.loop.start();
  }

  async stop(): Promise<void> {
    this.stopping.abort(new Error('the container meta controller is stopping'));
    this.removeHandlers?.();
    await this.loop.stop();
    await this.events.close?.();
  }

  async reconcile(key: string): Promise<ReconcileResult | void> {
    const { pods, clock } = this.options;
    if (!pods.hasSynced()) return { requeueAfter: 200 };
    const pod = pods.get(key);
    if (!pod || pod.metadata?.deletionTimestamp || !isManaged(pod)) return;
    const statuses = pod.status?.containerStatuses ?? [];
    if (statuses.length === 0 || !pod.metadata?.uid) return;
    if (!this.expectations.isFresh(uidOf(pod), pod.metadata.resourceVersion)) return { requeueAfter: CACHE_WAIT_MS };
    this.runtimeHandle ??= await this.options.runtime(this.stopping.signal);
    const log = this.options.logger.child({ pod: key });

    const runtime = newestByName(await listPodContainers(this.rt(), pod.metadata.uid));
    const specs = new Map((pod.spec?.containers ?? []).map((c) => [c.name, c]));
    const oldSet = parseRuntimeContainerMetaSet(pod.metadata.annotations?.[RUNTIME_CONTAINERS_META_ANNOTATION]);
    const oldById = new Map((oldSet?.containers ?? []).map((m) => [m.containerID, m]));
    const next: RuntimeContainerMeta[] = [];
    let retryEnv = false;
    for (const cs of statuses) {
      const rc = runtime.get(cs.name);
      const spec = specs.get(cs.name);
      const parsed = parseContainerId(cs.containerID);
      if (!rc || !spec || !parsed) continue;
      const containerID = `${parsed.runtime}://${rc.id}`;
      const entry: RuntimeContainerMeta = structuredClone(oldById.get(containerID)) ?? {
        name: cs.name,
        containerID,
        restartCount: rc.restartCount,
        hashes: { plainHash: rc.plainHash },
      };
      if (!entry.hashes.extractedEnvFromMetadataHash && rc.state === 'running') {
        try {
          entry.hashes.extractedEnvFromMetadataHash = await this.runningEnvHash(spec, rc);
        } catch (err) {
          retryEnv = true;
          log.warn({ container: cs.name, err: errorMessage(err) }, 'cannot read env');
        }
      }
      next.push(entry);
    }
    const nextSet: RuntimeContainerMetaSet = { containers: next };
    const annotations: Record<string, string> = {};
    const nextJson = JSON.stringify(nextSet);
    // nothing to say about a pod none of whose containers are in the runtime yet: no write
    const worthWriting = next.length > 0 || oldSet !== undefined;
    if (worthWriting && nextJson !== JSON.stringify(oldSet ?? null)) {
      annotations[RUNTIME_CONTAINERS_META_ANNOTATION] = nextJson;
    }

    // env-from-metadata restarts, only while the pod's in-place update is under way
    const condition = (pod.status?.conditions ?? []).find((c) => c.type === IN_PLACE_UPDATE_READY_CONDITION);
    let toRestart: string[] = [];
    let recheck: number | undefined;
    if (condition?.status === 'False') {
      const entries = new Map(next.map((m) => [m.name, m]));
      const consistent = (name: string): boolean => {
        const m = entries.get(name);
        const spec = specs.get(name);
        return !!m && !!spec && m.hashes.extractedEnvFromMetadataHash === expectedEnvHash(spec, pod.metadata ?? {});
      };
      const now = clock.now();
      const stale = next
        .filter((m) => {
          const hash = m.hashes.extractedEnvFromMetadataHash ?? 0;
          const rc = runtime.get(m.name);
          const restartKey = `${pod.metadata?.uid}/${m.name}`;
          if (consistent(m.name)) {
            this.restarts.delete(restartKey);
            this.noticed.delete(restartKey);
            return false;
          }
          const expected = expectedEnvHash(specs.get(m.name)!, pod.metadata ?? {});
          if (this.noticed.get(restartKey)?.expected !== expected)
            this.noticed.set(restartKey, { expected, atMs: now });
          if (!(hash > 0 && rc?.state === 'running' && parseContainerId(m.containerID)?.id === rc.id)) return false;
          if (this.stopped.get(pod.metadata?.uid ?? '')?.has(rc.id)) return false;
          const last = this.restarts.get(restartKey);
          if (last && last.expected === expected && now < last.notBefore) {
            recheck = Math.min(recheck ?? Number.POSITIVE_INFINITY, last.notBefore - now + 1);
            return false;
          }
          return true;
        })
        .map((m) => ({ name: m.name, priority: containerPriority(pod, specs.get(m.name)!) }));
      const state = parseInPlaceUpdateState(pod.metadata.annotations?.[IN_PLACE_UPDATE_STATE_ANNOTATION]);
      const batches = state?.containerBatchesRecord ?? [];
      const plan = planBatch({
        stale,
        lastBatch: batches[batches.length - 1],
        updateStartedAtMs: Date.parse(condition.lastTransitionTime ?? '') || 0,
        exists: (name) => specs.has(name),
        isDone: (name) => {
          const cs = statuses.find((s) => s.name === name);
          const rc = runtime.get(name);
          return !!cs?.ready && !!rc && parseContainerId(cs.containerID)?.id === rc.id && consistent(name);
        },
      });
      if (plan.kind === 'wait') recheck = BATCH_RECHECK_MS;
      if (plan.kind === 'restart') {
        const settleLeft = this.settleLeft(pod.metadata.uid, plan.containers, now);
        if (settleLeft > 0) {
          log.debug({ containers: plan.containers, settleLeft }, 'letting kubelet see the new metadata first');
          recheck = Math.min(recheck ?? Number.POSITIVE_INFINITY, settleLeft);
        } else {
          toRestart = plan.containers;
          if (plan.record) {
            const base = state ?? { revision: '', updateTimestamp: rfc3339(now), updateEnvFromMetadata: true };
            const recorded = {
              ...base,
              containerBatchesRecord: [...batches, { timestamp: rfc3339(now), containers: plan.containers }],
            };
            annotations[IN_PLACE_UPDATE_STATE_ANNOTATION] = JSON.stringify(recorded);
          }
        }
      }
    }

    if (Object.keys(annotations).length > 0) {
      const patched = await this.options.client.patch<WirePod & KubeObject>(
        CoreResources.pods,
        pod.metadata.name!,
        { metadata: { annotations } },
        { type: 'merge', namespace: pod.metadata.namespace },
      );
      this.expectations.expect(pod.metadata.uid, patched.metadata?.resourceVersion);
    }

    for (const name of toRestart) {
      const rc = runtime.get(name)!;
      const spec = specs.get(name)!;
      let stoppedOfPod = this.stopped.get(pod.metadata.uid);
      if (!stoppedOfPod) this.stopped.set(pod.metadata.uid, (stoppedOfPod = new Set()));
      stoppedOfPod.add(rc.id);
      const restartKey = `${pod.metadata.uid}/${name}`;
      const expected = expectedEnvHash(spec, pod.metadata);
      const last = this.restarts.get(restartKey);
      const attempts = last && last.expected === expected ? last.attempts + 1 : 1;
      if (attempts > 1) {
        log.warn(
          { container: name, attempts },
          'container came back with old env-from-metadata values; restarting again',
        );
      }
      const backoff = backoffDelay({ initialMs: RESTART_BACKOFF_MS, maxMs: RESTART_BACKOFF_MAX_MS }, attempts);
      this.restarts.set(restartKey, { expected, attempts, notBefore: clock.now() + backoff });
      log.info({ container: name, containerId: rc.id }, 'restarting container: its env from pod metadata changed');
      await this.killer.kill({
        pod,
        podIP: pod.status?.podIP,
        containerId: rc.id,
        containerName: name,
        preStop: spec.lifecycle?.preStop,
        ports: spec.ports,
        gracePeriodSeconds: pod.spec?.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS,
        message: `Stopping containerID ${rc.id} by container meta restarter`,
      });
    }
    if (toRestart.length > 0) return { requeueAfter: BATCH_RECHECK_MS };
    if (retryEnv) return { requeueAfter: ENV_RETRY_MS };
    return recheck ? { requeueAfter: recheck } : undefined;
  }

  /** How long the restart of these containers still waits for kubelet to have their new values (0: none). */
  private settleLeft(podUid: string, containers: string[], now: number): number {
    const noticedAt = containers.map((name) => this.noticed.get(`${podUid}/${name}`)?.atMs ?? now);
    const settle = this.options.kubeletSettleMs ?? KUBELET_SETTLE_MS;
    return Math.max(0, ...noticedAt.map((at) => at + settle - now));
  }

  /** The env hash of what the container was started with; no exec when no env comes from metadata. */
  private async runningEnvHash(spec: WireContainer, rc: RuntimeContainer): Promise<number> {
    if (envFromMetadata(spec).length === 0) return envHash([]);
    const res = await this.rt().execSync(
      { container_id: rc.id, cmd: ['env'], timeout: ENV_EXEC_TIMEOUT_MS / 1000 },
      { timeoutMs: ENV_EXEC_TIMEOUT_MS + 2000 },
    );
    if (res.exit_code !== 0) throw new Error(`env exited with ${res.exit_code}`);
    return currentEnvHash(spec, res.stdout.toString('utf8'));
  }
}
