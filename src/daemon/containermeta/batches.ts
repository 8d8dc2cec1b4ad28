// Which containers of a pod to restart for env-from-metadata now, in OpenKruise's batches: the containers whose
// env hash no longer matches the pod's labels/annotations, highest launch priority first (containers without a
// priority go with every batch), the next batch only once every container of the last recorded batch runs again,
// ready and with the new values.
import {
  BARRIER_KEY_PREFIX,
  CONTAINER_LAUNCH_BARRIER_ENV,
  CONTAINER_LAUNCH_ORDERED,
  CONTAINER_LAUNCH_PRIORITY_ANNOTATION,
  CONTAINER_LAUNCH_PRIORITY_ENV,
} from '../../api/constants.js';
import type { InPlaceUpdateContainerBatch } from '../../api/runtime-container-meta.js';
import type { WireContainer, WirePod } from '../../api/wire.js';

/**
 * Launch priority: the injected barrier key p_<n>, else KRUISE_CONTAINER_PRIORITY, else Ordered annotation order.
 * Only a regular container has one: kubelet starts a native sidecar before every regular container, so a sidecar
 * (whatever env it carries) goes with every batch.
 */
export function containerPriority(pod: WirePod, container: WireContainer): number | undefined {
  if (!(pod.spec?.containers ?? []).some((c) => c.name === container.name)) return undefined;
  for (const e of container.env ?? []) {
    if (e.name !== CONTAINER_LAUNCH_BARRIER_ENV) continue;
    const key = e.valueFrom?.configMapKeyRef?.key ?? '';
    if (key.startsWith(BARRIER_KEY_PREFIX)) {
      const n = Number(key.slice(BARRIER_KEY_PREFIX.length));
      if (Number.isSafeInteger(n)) return n;
    }
    break;
  }
  const declared = container.env?.find((e) => e.name === CONTAINER_LAUNCH_PRIORITY_ENV)?.value;
  if (declared !== undefined && /^-?\d+$/.test(declared.trim())) return Number(declared.trim());
  if (pod.metadata?.annotations?.[CONTAINER_LAUNCH_PRIORITY_ANNOTATION] === CONTAINER_LAUNCH_ORDERED) {
    const index = (pod.spec?.containers ?? []).findIndex((c) => c.name === container.name);
    return index < 0 ? undefined : -index;
  }
  return undefined;
}

export interface BatchInputs {
  /** Containers whose env hash differs from the expected one and whose current instance runs. */
  stale: Array<{ name: string; priority?: number | undefined }>;
  /** The last recorded batch (containerBatchesRecord), if any. */
  lastBatch?: InPlaceUpdateContainerBatch | undefined;
  /** When the current update began (InPlaceUpdateReady turned False), ms; older batches belong to earlier updates. */
  updateStartedAtMs: number;
  /** True when the named container runs again, ready, with the expected env hash. */
  isDone: (name: string) => boolean;
  /** Containers in the pod spec. */
  exists: (name: string) => boolean;
}

export type BatchPlan =
  | { kind: 'none' }
  /** The previous batch is not ready yet. */
  | { kind: 'wait'; waitingFor: string[] }
  /** Restart `containers`; `record` says whether this is a new batch to append to containerBatchesRecord. */
  | { kind: 'restart'; containers: string[]; record: boolean };

export function planBatch(input: BatchInputs): BatchPlan {
  if (input.stale.length === 0) return { kind: 'none' };
  const priorities = input.stale.map((s) => s.priority).filter((p): p is number => p !== undefined);
  const top = priorities.length > 0 ? Math.max(...priorities) : undefined;
  const batch = input.stale
    .filter((s) => s.priority === undefined || s.priority === top)
    .map((s) => s.name)
    .sort();
  const lastAt = Date.parse(input.lastBatch?.timestamp ?? '');
  const current = !Number.isNaN(lastAt) && lastAt >= input.updateStartedAtMs - 999;
  const last = current ? (input.lastBatch?.containers ?? []) : [];
  // Resume a recorded batch (the agent stopped before restarting all of it).
  if (last.length > 0 && batch.every((name) => last.includes(name))) {
    return { kind: 'restart', containers: batch, record: false };
  }
  const waitingFor = last.filter((name) => input.exists(name) && !input.isDone(name));
  if (waitingFor.length > 0) return { kind: 'wait', waitingFor };
  return { kind: 'restart', containers: batch, record: true };
}
