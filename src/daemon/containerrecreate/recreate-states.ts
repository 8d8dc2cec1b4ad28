// The per-container state machine of a CRR and the step the agent takes next, as pure functions of the CRR, the
// pod's containers in the runtime and the pod's status in the cache. OpenKruise's rules (reference §1.6.4, §8.3/4)
// with three differences: readiness comes from the pod status the agent watches (not from the manager's snapshot
// annotation); with forceRecreate the state of a container is written (phase Recreating, isKilled) *before* it is
// stopped, so an agent killed mid-CRR never stops the same container twice (without forceRecreate it is written once
// the stop returned, as OpenKruise does: the runtime shows a stopped container as exited or replaced, which no
// restart can mistake); and a container kubelet holds waiting (CrashLoopBackOff after a recent restart, ...) says so
// in its state's message, predicted from the runtime while kubelet's status does not say it yet.
import type {
  ContainerRecreateRequest,
  ContainerRecreateRequestContainerRecreateState as RecreateState,
} from '../../api/containerrecreaterequest.js';
import type { RuntimeContainer } from '../podruntime/pod-containers.js';
import { parseContainerId } from '../podruntime/pod-containers.js';

/** A container of the pod as the pod status (kubelet) reports it. */
export interface ReportedContainer {
  /** Bare runtime id of the instance kubelet reports. */
  id?: string | undefined;
  ready: boolean;
  running: boolean;
  /** kubelet's reason (and message) for a container it has not started (yet). */
  waiting?: { reason: string; message?: string | undefined } | undefined;
}

/** Waiting reasons that are a normal step of a start, not worth a message. */
const ORDINARY_WAITING = new Set(['ContainerCreating', 'PodInitializing']);

/** Why kubelet has not started the container again, when it says so (e.g. CrashLoopBackOff after a recent restart). */
export function waitingMessage(seen: ReportedContainer | undefined): string | undefined {
  const waiting = seen?.waiting;
  if (!waiting || ORDINARY_WAITING.has(waiting.reason)) return undefined;
  return `kubelet has not started the container again: ${waiting.reason}${waiting.message ? ` (${waiting.message})` : ''}`;
}

/** kubelet forgets a container's crash-loop back-off once this long has passed since it last restarted it. */
export const KUBELET_BACKOFF_MEMORY_MS = 10 * 60_000;

/**
 * The crash-loop back-off kubelet will apply to a stopped instance, predicted from the runtime: kubelet keeps a
 * back-off per container, raised each time it restarts the container and forgotten 10 minutes (twice its 5-minute
 * cap) after the last raise, and starts an exited container again only once the back-off has passed since the exit
 * (10 s after one restart, doubling). An instance that is itself a restart (restartCount > 0) made less than 10
 * minutes ago will be held. kubelet says `CrashLoopBackOff` in the pod status only in the sync that ends the wait,
 * so this is the only way to show the reason while it lasts.
 */
export function backOffMessage(stopped: RuntimeContainer, nowMs: number): string | undefined {
  if (stopped.restartCount < 1) return undefined;
  const restartedAgoMs = nowMs - Number(stopped.createdAtNs / 1_000_000n);
  if (restartedAgoMs < 0 || restartedAgoMs >= KUBELET_BACKOFF_MEMORY_MS) return undefined;
  return (
    `waiting for kubelet's crash-loop back-off: kubelet restarted this container ${Math.round(restartedAgoMs / 1000)} s ` +
    `before (restart ${stopped.restartCount}), so it starts it again only 10 s or more after the stop (doubling with ` +
    `each restart within 10 minutes, up to 5 minutes)`
  );
}

export const NOT_FOUND_ON_NODE = 'not found container on Node';

export interface StateInputs {
  crr: ContainerRecreateRequest;
  /** Newest runtime instance of each container name. */
  runtime: Map<string, RuntimeContainer>;
  reported: Map<string, ReportedContainer>;
  nowMs: number;
}

/** The state every spec container is in now (terminal states are kept). */
export function currentStates(input: StateInputs): RecreateState[] {
  const { crr, runtime, reported, nowMs } = input;
  const previous = new Map((crr.status?.containerRecreateStates ?? []).map((s) => [s.name, s]));
  const force = crr.spec.strategy?.forceRecreate === true;
  const minStartedMs = Math.max(0, crr.spec.strategy?.minStartedSeconds ?? 0) * 1000;
  return crr.spec.containers.map((c): RecreateState => {
    const prev = previous.get(c.name);
    const killed = prev?.isKilled === true ? { isKilled: true } : {};
    if (prev && (prev.phase === 'Succeeded' || prev.phase === 'Failed')) return prev;
    const current = runtime.get(c.name);
    if (!current) return { name: c.name, phase: 'Pending', ...killed, message: NOT_FOUND_ON_NODE };
    if (current.state === 'exited') {
      const message = waitingMessage(reported.get(c.name)) ?? backOffMessage(current, nowMs);
      return { name: c.name, phase: 'Recreating', ...killed, ...(message ? { message } : {}) };
    }
    if (force && !prev?.isKilled) return { name: c.name, phase: 'Pending' };
    const context = c.statusContext;
    const contextId = parseContainerId(context?.containerID)?.id;
    const restarted =
      context !== undefined && (current.id !== contextId || current.restartCount > (context.restartCount ?? 0));
    if (restarted) {
      const seen = reported.get(c.name);
      const startedLongEnough =
        current.state === 'running' && current.startedAtMs !== undefined && nowMs - current.startedAtMs > minStartedMs;
      if (seen && seen.id === current.id && seen.ready && seen.running && startedLongEnough) {
        return { name: c.name, phase: 'Succeeded', ...killed };
      }
      return { name: c.name, phase: 'Recreating', ...killed };
    }
    return { name: c.name, phase: 'Pending', ...killed };
  });
}

export type NextStep =
  /**
   * Stop `container`: `before` is the states as they are (it Pending), `states` what to record for the stop
   * (Recreating + isKilled): once the stop returned, or before it with forceRecreate.
   */
  | { kind: 'kill'; container: string; runtimeId: string; before: RecreateState[]; states: RecreateState[] }
  /** Write `states` and complete the CRR. */
  | { kind: 'complete'; states: RecreateState[] }
  /** Write `states` if they differ from the CRR's; then look again after `recheckMs`. */
  | { kind: 'wait'; states: RecreateState[]; recheckMs?: number | undefined };

/** How often the agent looks again at a CRR that waits for a container (besides pod events). */
export const RECHECK_MS = 2000;

export function nextStep(input: StateInputs): NextStep {
  const states = currentStates(input);
  const strategy = input.crr.spec.strategy ?? {};
  const ignoreFailures = strategy.failurePolicy === 'Ignore';
  let completed = 0;
  let recheckMs: number | undefined;
  for (let i = 0; i < states.length; i++) {
    const state = states[i]!;
    if (state.phase === 'Succeeded') {
      completed++;
      continue;
    }
    if (state.phase === 'Failed') {
      completed++;
      if (ignoreFailures) continue;
      return { kind: 'complete', states };
    }
    if (state.phase === 'Recreating') {
      recheckMs = RECHECK_MS;
      const current = input.runtime.get(state.name);
      const minStartedMs = Math.max(0, strategy.minStartedSeconds ?? 0) * 1000;
      if (current?.startedAtMs !== undefined && minStartedMs > 0) {
        const left = current.startedAtMs + minStartedMs - input.nowMs + 1;
        if (left > 0) recheckMs = Math.min(recheckMs, left);
      }
      if (strategy.orderedRecreate) break;
      continue;
    }
    // Pending
    const current = input.runtime.get(state.name);
    if (!current) {
      recheckMs = RECHECK_MS;
      break;
    }
    const next = states.slice();
    next[i] = { name: state.name, phase: 'Recreating', isKilled: true };
    return { kind: 'kill', container: state.name, runtimeId: current.id, before: states, states: next };
  }
  if (completed === states.length) return { kind: 'complete', states };
  return { kind: 'wait', states, recheckMs };
}

/** Order in which CRRs of one pod are taken: Completed, Recreating, Pending, new; then oldest first. */
export function phaseWeight(phase: string | undefined): number {
  switch (phase) {
    case 'Completed':
      return 1;
    case 'Recreating':
      return 2;
    case 'Pending':
      return 3;
    default:
      return 4;
  }
}

export function sameStates(a: RecreateState[] | undefined, b: RecreateState[]): boolean {
  const norm = (s: RecreateState): string => JSON.stringify([s.name, s.phase, s.message ?? '', s.isKilled === true]);
  return (a ?? []).length === b.length && (a ?? []).every((s, i) => norm(s) === norm(b[i]!));
}
