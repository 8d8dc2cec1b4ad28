// Runtime container meta and env-from-metadata restarts for the pods on this node. For each managed pod it keeps
// apps.kruise.io/runtime-containers-meta (container ids, restart counts, kubelet's hash, the env hash the running
// container really has, read once per container with ExecSync `env`). While the pod's InPlaceUpdateReady condition
// is False, containers whose env-from-metadata values changed are restarted in launch-priority batches, each batch
// recorded in apps.kruise.io/inplace-update-state containerBatchesRecord before its containers are stopped.
// A reconcile observes (the cache, the runtime, the env of containers not read yet), asks meta-plan.ts for the
// actions, and carries them out in order: what to remember, the annotation write, the restarts, when to look again.
import { EVENT_SOURCE_CONTAINER_META, IN_PLACE_UPDATE_READY_CONDITION } from '../../api/constants.js';
import { currentEnvHash, envFromMetadata, envHash } from '../../api/runtime-container-meta.js';
import { longRunningContainers, longRunningStatuses } from '../../api/pod-sidecars.js';
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
import type { Clock } from '../../util/clock.js';
import { errorMessage } from '../../util/error-message.js';
import type { NodePods } from '../node-pods.js';
import { ContainerKiller, type EventSink } from '../podruntime/container-killer.js';
import { LateRuntime } from '../podruntime/late-runtime.js';
import {
  listPodContainers,
  newestByName,
  type ContainerRuntime,
  type RuntimeContainer,
} from '../podruntime/pod-containers.js';
import {
  envToRead,
  KUBELET_SETTLE_MS,
  planContainerMeta,
  wantsMeta,
  type MetaAction,
  type NoticedValues,
  type RestartRecord,
} from './meta-plan.js';

/** ExecSync `env` deadline (OpenKruise: 3 s). */
const ENV_EXEC_TIMEOUT_MS = 3000;
const CACHE_WAIT_MS = 50;
const DEFAULT_GRACE_SECONDS = 30;

/** What this agent remembers of one pod (see PodRestartMemory in meta-plan.ts); dropped with the pod. */
interface PodMemory {
  stopped: Set<string>;
  restarts: Map<string, RestartRecord>;
  noticed: Map<string, NoticedValues>;
}

const nothingRemembered = (): PodMemory => ({ stopped: new Set(), restarts: new Map(), noticed: new Map() });

export interface ContainerMetaControllerOptions {
  nodeName: string;
  /** Writes the pod annotations (merge patch of metadata). */
  client: Pick<KubeClient, 'patch'> & Partial<Pick<KubeClient, 'create'>>;
  pods: NodePods;
  runtime: (signal: AbortSignal) => Promise<ContainerRuntime>;
  clock: Clock;
  logger: Logger;
  kubeMetrics?: KubeMetrics;
  events?: EventSink & { close?(): Promise<void> | void };
  /** How long new values wait for kubelet before a restart (default KUBELET_SETTLE_MS). */
  kubeletSettleMs?: number | undefined;
}

/** What a pod event must change for the meta to need another look. */
function signature(pod: WirePod): string {
  return JSON.stringify([
    pod.metadata?.labels ?? {},
    pod.metadata?.annotations ?? {},
    longRunningStatuses(pod).map((c) => [c.name, c.containerID ?? '', c.ready]),
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
  /** Per pod uid: the runtime ids this agent stopped, the restarts it made, the new values it noticed. */
  private readonly memory = new Map<string, PodMemory>();
  private readonly runtime: LateRuntime;
  private removeHandlers?: () => void;

  constructor(private readonly options: ContainerMetaControllerOptions) {
    this.loop = new ControllerLoop(
      'containermeta',
      {
        workers: 4,
        clock: options.clock,
        logger: options.logger,
        kubeMetrics: options.kubeMetrics,
      },
      (key) => this.reconcile(key),
    );
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
    this.runtime = new LateRuntime(options.runtime);
    this.killer = new ContainerKiller({
      runtime: this.runtime,
      events: this.events,
      clock: options.clock,
      logger: options.logger,
    });
  }

  start(): void {
    const enqueue = (pod: WirePod): void => {
      if (wantsMeta(pod)) this.loop.add(keyOf(pod));
    };
    const unfollow = this.expectations.follow(this.options.pods, uidOf);
    const removePodHandlers = this.options.pods.addHandlers({
      onAdd: enqueue,
      onUpdate: (old, pod) => {
        if (signature(old) !== signature(pod)) enqueue(pod);
      },
      onDelete: (pod) => {
        this.memory.delete(pod.metadata?.uid ?? '');
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

  /** Observe the pod (the cache, its containers in the runtime, their env where not recorded yet), plan, carry out. */
  async reconcile(key: string): Promise<ReconcileResult | void> {
    const { pods, clock } = this.options;
    if (!pods.hasSynced()) return { requeueAfter: 200 };
    const pod = pods.get(key);
    if (!pod || !wantsMeta(pod) || !pod.metadata?.uid) return;
    if (!this.expectations.isFresh(uidOf(pod), pod.metadata.resourceVersion)) return { requeueAfter: CACHE_WAIT_MS };
    await this.runtime.ready(this.stopping.signal);
    const log = this.options.logger.child({ pod: key });

    const runtime = newestByName(await listPodContainers(this.runtime, pod.metadata.uid));
    const readEnvHashes = new Map<string, number>();
    let envUnread = false;
    for (const { spec, instance } of envToRead(pod, runtime)) {
      try {
        readEnvHashes.set(spec.name, await this.runningEnvHash(spec, instance));
      } catch (err) {
        envUnread = true;
        log.warn({ container: spec.name, err: errorMessage(err) }, 'cannot read env');
      }
    }
    const actions = planContainerMeta({
      pod,
      runtime,
      readEnvHashes,
      envUnread,
      memory: this.memory.get(pod.metadata.uid) ?? nothingRemembered(),
      nowMs: clock.now(),
      kubeletSettleMs: this.options.kubeletSettleMs ?? KUBELET_SETTLE_MS,
    });
    return this.carryOut(pod, actions, log);
  }

  private async carryOut(pod: WirePod, actions: MetaAction[], log: Logger): Promise<ReconcileResult | void> {
    const uid = pod.metadata?.uid ?? '';
    let result: ReconcileResult | undefined;
    for (const action of actions) {
      switch (action.kind) {
        case 'forget': {
          const memory = this.memory.get(uid);
          memory?.restarts.delete(action.container);
          memory?.noticed.delete(action.container);
          break;
        }
        case 'notice':
          this.memoryOf(uid).noticed.set(action.container, { expected: action.expected, atMs: action.atMs });
          break;
        case 'settle':
          log.debug(
            { containers: action.containers, settleLeft: action.leftMs },
            'letting kubelet see the new metadata first',
          );
          break;
        case 'annotate': {
          const patched = await this.options.client.patch<WirePod & KubeObject>(
            CoreResources.pods,
            pod.metadata?.name ?? '',
            { metadata: { annotations: action.annotations } },
            { type: 'merge', namespace: pod.metadata?.namespace },
          );
          this.expectations.expect(uid, patched.metadata?.resourceVersion);
          break;
        }
        case 'restart':
          await this.restart(pod, action, log);
          break;
        case 'requeue':
          result = { requeueAfter: action.afterMs };
          break;
      }
    }
    return result;
  }

  private memoryOf(uid: string): PodMemory {
    let memory = this.memory.get(uid);
    if (!memory) this.memory.set(uid, (memory = nothingRemembered()));
    return memory;
  }

  private async restart(pod: WirePod, action: Extract<MetaAction, { kind: 'restart' }>, log: Logger): Promise<void> {
    const { container, runtimeId, expected, attempts } = action;
    const spec = longRunningContainers(pod).find((c) => c.name === container);
    const memory = this.memoryOf(pod.metadata?.uid ?? '');
    memory.stopped.add(runtimeId);
    if (attempts > 1) {
      log.warn({ container, attempts }, 'container came back with old env-from-metadata values; restarting again');
    }
    memory.restarts.set(container, { expected, attempts, notBeforeMs: this.options.clock.now() + action.backoffMs });
    log.info({ container, containerId: runtimeId }, 'restarting container: its env from pod metadata changed');
    await this.killer.kill({
      pod,
      podIP: pod.status?.podIP,
      containerId: runtimeId,
      containerName: container,
      preStop: spec?.lifecycle?.preStop,
      ports: spec?.ports,
      gracePeriodSeconds: pod.spec?.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS,
      message: `Stopping containerID ${runtimeId} by container meta restarter`,
    });
  }

  /** The env hash of what the container was started with; no exec when no env comes from metadata. */
  private async runningEnvHash(spec: WireContainer, rc: RuntimeContainer): Promise<number> {
    if (envFromMetadata(spec).length === 0) return envHash([]);
    const res = await this.runtime.execSync(
      { container_id: rc.id, cmd: ['env'], timeout: ENV_EXEC_TIMEOUT_MS / 1000 },
      { timeoutMs: ENV_EXEC_TIMEOUT_MS + 2000 },
    );
    if (res.exit_code !== 0) throw new Error(`env exited with ${res.exit_code}`);
    return currentEnvHash(spec, res.stdout.toString('utf8'));
  }
}
