// The launch-priority decision for one pod (pure): which containers are ready, from the runtime or from the pod
// status (whichever tells first), and so which level to release next. A level is released once every container of
// every higher level is ready; levels are released one at a time, highest first.
import { isReleased, type BarrierLevel, type BarrierPlan } from './barrier-plan.js';

/** What the runtime says about a container of the pod (its latest instance). */
export interface RuntimeContainer {
  id: string;
  state: 'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED' | 'CONTAINER_UNKNOWN';
  /** Epoch ms the runtime started it (CRI started_at), or when the agent first saw it running. */
  runningSinceMs?: number | undefined;
}

/** The fields of a container's pod status that matter here (wire JSON). */
export interface StatusContainer {
  name?: unknown;
  ready?: unknown;
  state?: { waiting?: { reason?: unknown; message?: unknown } | null } | null;
}

export interface ContainerReadiness {
  ready: boolean;
  /** Where the answer came from. */
  source: 'runtime' | 'status' | 'none';
  /** Since when it is ready (epoch ms), when known. */
  readySinceMs?: number | undefined;
}

export interface ReadinessInputs {
  /** Containers of the spec that have a readiness or startup probe: the runtime alone cannot say they are ready. */
  probed: ReadonlySet<string>;
  /** The pod status, by container name. */
  status: ReadonlyMap<string, StatusContainer>;
  /** The runtime's view, by container name (absent when not polled or not yet seen). */
  runtime?: ReadonlyMap<string, RuntimeContainer> | undefined;
  /** First time the agent saw `ready: true` in the status, by container name. */
  statusReadySince: ReadonlyMap<string, number>;
}

export function readinessOf(name: string, inputs: ReadinessInputs): ContainerReadiness {
  const rt = inputs.runtime?.get(name);
  // Without probes kubelet reports a running container ready; the runtime says "running" first.
  if (rt?.state === 'CONTAINER_RUNNING' && !inputs.probed.has(name)) {
    return { ready: true, source: 'runtime', readySinceMs: rt.runningSinceMs };
  }
  if (inputs.status.get(name)?.ready === true) {
    // The status can lag a restart: trust it only while the runtime does not show the container stopped.
    if (rt && rt.state !== 'CONTAINER_RUNNING') return { ready: false, source: 'runtime' };
    return { ready: true, source: 'status', readySinceMs: inputs.statusReadySince.get(name) };
  }
  return { ready: false, source: 'none' };
}

export interface LaunchDecision {
  /** The level to release now, if any. */
  release?: BarrierLevel | undefined;
  /** When the levels above `release` became ready (latest of their containers), when known; absent for the top level. */
  higherReadySinceMs?: number | undefined;
  /** True when every level is released (counting `release`). */
  complete: boolean;
  /** Containers of higher levels not ready yet, which the next release waits for. */
  waitingFor: string[];
}

export function decide(
  plan: BarrierPlan,
  keys: ReadonlySet<string>,
  readiness: (container: string) => ContainerReadiness,
): LaunchDecision {
  let higherReady = true;
  let higherReadySinceMs: number | undefined;
  let higherKnown = true;
  const waitingFor: string[] = [];
  let release: BarrierLevel | undefined;
  let releaseIndex = -1;
  for (const [index, level] of plan.levels.entries()) {
    if (!isReleased(level, keys)) {
      if (higherReady) {
        release = level;
        releaseIndex = index;
      }
      break;
    }
    for (const container of level.containers) {
      const r = readiness(container);
      if (!r.ready) {
        higherReady = false;
        waitingFor.push(container);
      } else if (r.readySinceMs === undefined) {
        higherKnown = false;
      } else {
        higherReadySinceMs = Math.max(higherReadySinceMs ?? r.readySinceMs, r.readySinceMs);
      }
    }
  }
  const unreleasedAfter = plan.levels.slice(releaseIndex + 1).some((l) => !isReleased(l, keys));
  const complete = release ? !unreleasedAfter : plan.levels.every((l) => isReleased(l, keys));
  return {
    release,
    higherReadySinceMs: release && releaseIndex > 0 && higherKnown ? higherReadySinceMs : undefined,
    complete,
    waitingFor: release ? [] : waitingFor,
  };
}
