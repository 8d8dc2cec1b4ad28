// What the container meta controller does for a pod, as pure functions of the pod in the cache, its containers in
// the runtime, the env hashes just read from running containers and what this agent remembers of the pod: which
// containers' env to read, what to write into apps.kruise.io/runtime-containers-meta and inplace-update-state, which
// containers to restart for new env-from-metadata values, and when to look again. Native sidecars (init containers
// with restartPolicy Always, status in initContainerStatuses) count as containers here, after the regular ones: their
// meta is recorded and they are restarted for new values like a regular container, never with a launch priority
// (OpenKruise reads containerStatuses only, so it neither records nor restarts them). No I/O, no mutation: the
// controller (controller.ts) reads the runtime, asks for the plan and carries its actions out in order.
import {
  IN_PLACE_UPDATE_READY_CONDITION,
  IN_PLACE_UPDATE_STATE_ANNOTATION,
  KRUISE_GROUP,
  RUNTIME_CONTAINERS_META_ANNOTATION,
  SIDECARSET_HASH_ANNOTATION,
} from '../../api/constants.js';
import {
  expectedEnvHash,
  imageIdBeforeUpdate,
  parseInPlaceUpdateState,
  parseRuntimeContainerMetaSet,
  type InPlaceUpdateState,
  type RuntimeContainerMeta,
} from '../../api/runtime-container-meta.js';
import { longRunningContainers, longRunningStatuses } from '../../api/pod-sidecars.js';
import type { WireContainer, WireContainerStatus, WirePod } from '../../api/wire.js';
import { backoffDelay } from '../../util/backoff.js';
import { rfc3339 } from '../../util/time.js';
import { parseContainerId, type RuntimeContainer } from '../podruntime/pod-containers.js';
import { containerPriority, planBatch } from './batches.js';

/** The retry delay when a container's env cannot be read. */
export const ENV_RETRY_MS = 3000;
/** How soon to look again after a restart, or while the previous batch is not ready. */
export const BATCH_RECHECK_MS = 1000;
/** A container restarted for some values that comes back with other ones (kubelet saw older metadata) is restarted
 * again only after a backoff: 3 s, doubling, at most 10 min (OpenKruise's restarter queue). */
export const RESTART_BACKOFF_MS = 3000;
export const RESTART_BACKOFF_MAX_MS = 600_000;
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

/** The values a container was last restarted for, how many restarts in a row they took, and when the next may come. */
export interface RestartRecord {
  expected: number;
  attempts: number;
  notBeforeMs: number;
}

/** The env hash the pod's metadata asks a container for, and when this agent first saw it. */
export interface NoticedValues {
  expected: number;
  atMs: number;
}

/** What this agent remembers of one pod (forgotten with the pod); the maps are by container name. */
export interface PodRestartMemory {
  /** Runtime ids this agent has stopped: never stopped twice within one run of the agent. */
  stopped: ReadonlySet<string>;
  restarts: ReadonlyMap<string, RestartRecord>;
  noticed: ReadonlyMap<string, NoticedValues>;
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

/** A pod the controller looks at: managed, not being deleted, with containers kubelet reports. */
export function wantsMeta(pod: WirePod): boolean {
  return !pod.metadata?.deletionTimestamp && isManaged(pod) && (pod.status?.containerStatuses ?? []).length > 0;
}

/** A container kubelet reports, its spec and newest runtime instance, and its meta entry as recorded (or new). */
interface ObservedContainer {
  spec: WireContainer;
  instance: RuntimeContainer;
  entry: RuntimeContainerMeta;
}

function observedContainers(pod: WirePod, runtime: ReadonlyMap<string, RuntimeContainer>): ObservedContainer[] {
  const specs = new Map(longRunningContainers(pod).map((c) => [c.name, c]));
  const recorded = parseRuntimeContainerMetaSet(pod.metadata?.annotations?.[RUNTIME_CONTAINERS_META_ANNOTATION]);
  const recordedById = new Map((recorded?.containers ?? []).map((m) => [m.containerID, m]));
  const observed: ObservedContainer[] = [];
  for (const status of longRunningStatuses(pod)) {
    const instance = runtime.get(status.name);
    const spec = specs.get(status.name);
    const parsed = parseContainerId(status.containerID);
    if (!instance || !spec || !parsed) continue;
    const containerID = `${parsed.runtime}://${instance.id}`;
    const entry: RuntimeContainerMeta = structuredClone(recordedById.get(containerID)) ?? {
      name: status.name,
      containerID,
      restartCount: instance.restartCount,
      hashes: { plainHash: instance.plainHash },
    };
    observed.push({ spec, instance, entry });
  }
  return observed;
}

function needsEnvRead({ entry, instance }: ObservedContainer): boolean {
  return !entry.hashes.extractedEnvFromMetadataHash && instance.state === 'running';
}

/** The running containers whose env hash is not recorded yet: their env is read (ExecSync `env`) before the plan. */
export function envToRead(
  pod: WirePod,
  runtime: ReadonlyMap<string, RuntimeContainer>,
): Array<{ spec: WireContainer; instance: RuntimeContainer }> {
  return observedContainers(pod, runtime)
    .filter(needsEnvRead)
    .map(({ spec, instance }) => ({ spec, instance }));
}

export interface MetaPlanInputs {
  /** The pod in the cache (managed, with a uid and container statuses). */
  pod: WirePod;
  /** Newest runtime instance of each container name. */
  runtime: ReadonlyMap<string, RuntimeContainer>;
  /** Env hashes read in this pass from the containers envToRead named, by container name. */
  readEnvHashes: ReadonlyMap<string, number>;
  /** Some env could not be read: look again after ENV_RETRY_MS. */
  envUnread: boolean;
  memory: PodRestartMemory;
  nowMs: number;
  /** How long new values wait for kubelet before a restart (KUBELET_SETTLE_MS). */
  kubeletSettleMs: number;
}

/**
 * kubelet restarts this container itself: the in-place update under way changes its image (OpenKruise's manager
 * recorded the image id it ran before) and the instance kubelet reports still runs that image; kubelet's new instance
 * gets the new env too. The agent then stops nothing (OpenKruise's #1263: both restarted it, the preStop hook ran
 * twice and one run was cut short). Names are not compared: a node's runtime reports any of an image's tags.
 */
export function kubeletRestartsForImage(
  state: InPlaceUpdateState | undefined,
  status: WireContainerStatus | undefined,
): boolean {
  if (!status) return false;
  const before = imageIdBeforeUpdate(state, status.name);
  return before !== undefined && status.imageID === before;
}

export type MetaAction =
  /** The container runs with the values its metadata asks for: drop its restart record and noticed values. */
  | { kind: 'forget'; container: string }
  /** The metadata asks the container for values not seen before: remember them and when they were first seen. */
  | { kind: 'notice'; container: string; expected: number; atMs: number }
  /** The restart of `containers` waits `leftMs` more for kubelet to have their new values. */
  | { kind: 'settle'; containers: string[]; leftMs: number }
  /** Merge these pod annotations (and expect the write in the cache before the next look). */
  | { kind: 'annotate'; annotations: Record<string, string> }
  /** Stop the running instance `runtimeId` (kubelet starts it again with the new values); remember it as stopped and
   * the restart as attempt `attempts` for `expected`, the next not before `backoffMs` from the stop. */
  | { kind: 'restart'; container: string; runtimeId: string; expected: number; attempts: number; backoffMs: number }
  /** Look at the pod again after `afterMs`. */
  | { kind: 'requeue'; afterMs: number };

/** Where the restarts for env-from-metadata stand: what to remember, which containers to restart, when to look again. */
interface RestartDecision {
  /** forget, notice and settle actions: they come before the write. */
  actions: MetaAction[];
  restart: string[];
  stateAnnotation?: string;
  recheckMs?: number | undefined;
}

/** Restarts for env-from-metadata, only while the pod's in-place update is under way (InPlaceUpdateReady False). */
function decideRestarts(input: MetaPlanInputs, entries: RuntimeContainerMeta[]): RestartDecision {
  const { pod, runtime, memory, nowMs } = input;
  const condition = (pod.status?.conditions ?? []).find((c) => c.type === IN_PLACE_UPDATE_READY_CONDITION);
  if (condition?.status !== 'False') return { actions: [], restart: [] };
  const metadata = pod.metadata ?? {};
  const updateState = parseInPlaceUpdateState(metadata.annotations?.[IN_PLACE_UPDATE_STATE_ANNOTATION]);
  const specs = new Map(longRunningContainers(pod).map((c) => [c.name, c]));
  const statuses = longRunningStatuses(pod);
  const byName = new Map(entries.map((m) => [m.name, m]));
  const consistent = (name: string): boolean => {
    const m = byName.get(name);
    const spec = specs.get(name);
    return !!m && !!spec && m.hashes.extractedEnvFromMetadataHash === expectedEnvHash(spec, metadata);
  };
  const actions: MetaAction[] = [];
  const noticed = new Map(memory.noticed);
  const stale: Array<{ name: string; priority?: number | undefined }> = [];
  let recheckMs: number | undefined;
  for (const m of entries) {
    if (consistent(m.name)) {
      actions.push({ kind: 'forget', container: m.name });
      noticed.delete(m.name);
      continue;
    }
    const spec = specs.get(m.name)!;
    const expected = expectedEnvHash(spec, metadata);
    if (noticed.get(m.name)?.expected !== expected) {
      actions.push({ kind: 'notice', container: m.name, expected, atMs: nowMs });
      noticed.set(m.name, { expected, atMs: nowMs });
    }
    const hash = m.hashes.extractedEnvFromMetadataHash ?? 0;
    const instance = runtime.get(m.name);
    if (!(hash > 0 && instance?.state === 'running' && parseContainerId(m.containerID)?.id === instance.id)) continue;
    const status = statuses.find((cs) => cs.name === m.name);
    if (parseContainerId(status?.containerID)?.id === instance.id && kubeletRestartsForImage(updateState, status)) {
      continue;
    }
    if (memory.stopped.has(instance.id)) continue;
    const last = memory.restarts.get(m.name);
    if (last && last.expected === expected && nowMs < last.notBeforeMs) {
      recheckMs = Math.min(recheckMs ?? Number.POSITIVE_INFINITY, last.notBeforeMs - nowMs + 1);
      continue;
    }
    stale.push({ name: m.name, priority: containerPriority(pod, spec) });
  }

  const batches = updateState?.containerBatchesRecord ?? [];
  const batch = planBatch({
    stale,
    lastBatch: batches[batches.length - 1],
    updateStartedAtMs: Date.parse(condition.lastTransitionTime ?? '') || 0,
    exists: (name) => specs.has(name),
    isDone: (name) => {
      const status = statuses.find((s) => s.name === name);
      const instance = runtime.get(name);
      return (
        !!status?.ready && !!instance && parseContainerId(status.containerID)?.id === instance.id && consistent(name)
      );
    },
  });
  if (batch.kind === 'wait') return { actions, restart: [], recheckMs: BATCH_RECHECK_MS };
  if (batch.kind === 'none') return { actions, restart: [], recheckMs };

  const noticedAt = batch.containers.map((name) => noticed.get(name)?.atMs ?? nowMs);
  const settleLeft = Math.max(0, ...noticedAt.map((at) => at + input.kubeletSettleMs - nowMs));
  if (settleLeft > 0) {
    actions.push({ kind: 'settle', containers: batch.containers, leftMs: settleLeft });
    return { actions, restart: [], recheckMs: Math.min(recheckMs ?? Number.POSITIVE_INFINITY, settleLeft) };
  }
  if (!batch.record) return { actions, restart: batch.containers, recheckMs };
  const base = updateState ?? { revision: '', updateTimestamp: rfc3339(nowMs), updateEnvFromMetadata: true };
  const recorded = {
    ...base,
    containerBatchesRecord: [...batches, { timestamp: rfc3339(nowMs), containers: batch.containers }],
  };
  return { actions, restart: batch.containers, stateAnnotation: JSON.stringify(recorded), recheckMs };
}

/** The actions for the pod, in the order they are carried out. */
export function planContainerMeta(input: MetaPlanInputs): MetaAction[] {
  const { pod, runtime, memory } = input;
  const observed = observedContainers(pod, runtime);
  for (const container of observed) {
    const read = input.readEnvHashes.get(container.spec.name);
    if (needsEnvRead(container) && read !== undefined) container.entry.hashes.extractedEnvFromMetadataHash = read;
  }
  const entries = observed.map((o) => o.entry);
  const annotations: Record<string, string> = {};
  const recorded = parseRuntimeContainerMetaSet(pod.metadata?.annotations?.[RUNTIME_CONTAINERS_META_ANNOTATION]);
  const nextJson = JSON.stringify({ containers: entries });
  // nothing to say about a pod none of whose containers are in the runtime yet: no write
  const worthWriting = entries.length > 0 || recorded !== undefined;
  if (worthWriting && nextJson !== JSON.stringify(recorded ?? null)) {
    annotations[RUNTIME_CONTAINERS_META_ANNOTATION] = nextJson;
  }

  const decision = decideRestarts(input, entries);
  if (decision.stateAnnotation !== undefined) annotations[IN_PLACE_UPDATE_STATE_ANNOTATION] = decision.stateAnnotation;
  const actions: MetaAction[] = [...decision.actions];
  if (Object.keys(annotations).length > 0) actions.push({ kind: 'annotate', annotations });
  const specs = new Map(longRunningContainers(pod).map((c) => [c.name, c]));
  for (const name of decision.restart) {
    const expected = expectedEnvHash(specs.get(name)!, pod.metadata ?? {});
    const last = memory.restarts.get(name);
    const attempts = last && last.expected === expected ? last.attempts + 1 : 1;
    const backoffMs = backoffDelay(
      { initialMs: RESTART_BACKOFF_MS, maxMs: RESTART_BACKOFF_MAX_MS, jitter: 0 },
      attempts,
    );
    actions.push({ kind: 'restart', container: name, runtimeId: runtime.get(name)!.id, expected, attempts, backoffMs });
  }
  const afterMs = decision.restart.length > 0 ? BATCH_RECHECK_MS : input.envUnread ? ENV_RETRY_MS : decision.recheckMs;
  if (afterMs) actions.push({ kind: 'requeue', afterMs });
  return actions;
}
