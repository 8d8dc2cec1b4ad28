// A pod's containers as the runtime sees them: CRI ListContainers by the pod-uid label, newest first (so the first
// container of a name is its current instance, as kubelet's FindContainerStatusByName), with the restart count and
// hash kubelet wrote on each, and the start time of the newest instance of each name from CRI ContainerStatus.
import type { CriClient } from '../../cri/client.js';
import {
  CONTAINER_HASH_ANNOTATION,
  CONTAINER_NAME_LABEL,
  CONTAINER_RESTART_COUNT_ANNOTATION,
  POD_UID_LABEL,
} from './labels.js';

/** The CRI calls the agent's container controllers make (the real CriClient, or a fake in unit tests). */
export type ContainerRuntime = Pick<CriClient, 'listContainers' | 'containerStatus' | 'stopContainer' | 'execSync'>;

export type RuntimeContainerState = 'created' | 'running' | 'exited' | 'unknown';

export interface RuntimeContainer {
  /** Bare runtime id (no `containerd://`). */
  id: string;
  name: string;
  state: RuntimeContainerState;
  /** Nanoseconds since the epoch, as the runtime reports them. */
  createdAtNs: bigint;
  /** Milliseconds since the epoch; undefined unless started (only read for the newest instance of each name). */
  startedAtMs?: number;
  restartCount: number;
  /** kubelet's container hash (annotation io.kubernetes.container.hash, hex) as a number; 0 when absent. */
  plainHash: number;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

const STATES: Record<string, RuntimeContainerState> = {
  CONTAINER_CREATED: 'created',
  CONTAINER_RUNNING: 'running',
  CONTAINER_EXITED: 'exited',
  CONTAINER_UNKNOWN: 'unknown',
};

function stateOf(value: string | number): RuntimeContainerState {
  if (typeof value === 'number') return (['created', 'running', 'exited', 'unknown'] as const)[value] ?? 'unknown';
  return STATES[value] ?? 'unknown';
}

function nanos(value: string | number | undefined): bigint {
  try {
    return BigInt(value ?? 0);
  } catch {
    return 0n;
  }
}

export function restartCountOf(annotations: Record<string, string>): number {
  const n = Number(annotations[CONTAINER_RESTART_COUNT_ANNOTATION]);
  return Number.isSafeInteger(n) && n >= 0 ? n : 0;
}

export function plainHashOf(annotations: Record<string, string>): number {
  const raw = annotations[CONTAINER_HASH_ANNOTATION];
  if (raw === undefined || !/^[0-9a-fA-F]{1,16}$/.test(raw)) return 0;
  const n = Number.parseInt(raw, 16);
  return Number.isSafeInteger(n) ? n : 0;
}

/** `containerd://abc` → { runtime: 'containerd', id: 'abc' }; undefined when malformed. */
export function parseContainerId(value: string | undefined): { runtime: string; id: string } | undefined {
  const match = /^([a-zA-Z0-9_.-]+):\/\/([^/\s]+)$/.exec(value ?? '');
  return match ? { runtime: match[1]!, id: match[2]! } : undefined;
}

/**
 * The pod's containers in the runtime, newest first. Start times are read (one ContainerStatus call each) for the
 * newest instance of every name, or only of those `needsStartTime` picks.
 */
export async function listPodContainers(
  runtime: Pick<ContainerRuntime, 'listContainers' | 'containerStatus'>,
  podUid: string,
  needsStartTime?: (container: RuntimeContainer) => boolean,
): Promise<RuntimeContainer[]> {
  const { containers } = await runtime.listContainers({ filter: { label_selector: { [POD_UID_LABEL]: podUid } } });
  const all: RuntimeContainer[] = containers.map((c) => ({
    id: c.id,
    name: c.labels[CONTAINER_NAME_LABEL] ?? c.metadata?.name ?? '',
    state: stateOf(c.state),
    createdAtNs: nanos(c.created_at),
    restartCount: restartCountOf(c.annotations),
    plainHash: plainHashOf(c.annotations),
    labels: c.labels,
    annotations: c.annotations,
  }));
  all.sort((a, b) => (a.createdAtNs === b.createdAtNs ? 0 : a.createdAtNs > b.createdAtNs ? -1 : 1));
  const seen = new Set<string>();
  await Promise.all(
    all.map(async (c) => {
      if (seen.has(c.name)) return;
      seen.add(c.name);
      if (needsStartTime && !needsStartTime(c)) return;
      if (c.state === 'created') return;
      try {
        const { status } = await runtime.containerStatus({ container_id: c.id });
        const started = nanos(status?.started_at);
        if (started > 0n) c.startedAtMs = Number(started / 1_000_000n);
        if (status) c.state = stateOf(status.state);
      } catch {
        // gone between the list and the status call: its state from the list stands
      }
    }),
  );
  return all;
}

/** The current (newest) instance of each container name. */
export function newestByName(containers: RuntimeContainer[]): Map<string, RuntimeContainer> {
  const byName = new Map<string, RuntimeContainer>();
  for (const c of containers) if (!byName.has(c.name)) byName.set(c.name, c);
  return byName;
}
