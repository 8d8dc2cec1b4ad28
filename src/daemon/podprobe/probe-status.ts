// The NodePodProbe status the agent writes (pure): one entry per pod and probe still in the spec, in spec order,
// with the worker's result (lastTransitionTime kept from the object while the state is the same) or, for a probe
// with no result yet, the entry the object already has. Entries of pods and probes no longer in the spec are dropped.
import type { ContainerProbeState, NodePodProbeStatus, PodProbeStatus } from '../../api/nodepodprobe.js';
import { isRecord } from '../../util/is-record.js';
import type { ProbeResult } from './probe-worker.js';
import { statusKey, type ProbeTarget } from './probe-spec.js';

/** The object's probe states by (pod uid, probe name); malformed entries are ignored. */
export function previousStates(status: NodePodProbeStatus | undefined): Map<string, ContainerProbeState> {
  const states = new Map<string, ContainerProbeState>();
  const pods: unknown = status?.podProbeStatuses;
  if (!Array.isArray(pods)) return states;
  for (const pod of pods) {
    if (!isRecord(pod) || typeof pod.uid !== 'string' || !Array.isArray(pod.probeStates)) continue;
    for (const state of pod.probeStates) {
      if (isRecord(state) && typeof state.name === 'string' && typeof state.state === 'string') {
        states.set(statusKey(pod.uid, state.name), state as unknown as ContainerProbeState);
      }
    }
  }
  return states;
}

export function buildNodePodProbeStatus(
  targets: readonly ProbeTarget[],
  previous: NodePodProbeStatus | undefined,
  resultOf: (target: ProbeTarget) => ProbeResult | undefined,
): NodePodProbeStatus {
  const before = previousStates(previous);
  const pods = new Map<string, PodProbeStatus>();
  for (const target of targets) {
    const key = statusKey(target.podUid, target.probeName);
    const result = resultOf(target);
    const prev = before.get(key);
    let state: ContainerProbeState | undefined;
    if (result) {
      state = {
        name: target.probeName,
        state: result.state,
        lastProbeTime: result.lastProbeTime,
        lastTransitionTime:
          prev?.state === result.state && prev.lastTransitionTime ? prev.lastTransitionTime : result.changedAt,
        ...(result.message !== '' && { message: result.message }),
      };
    } else if (prev) {
      state = prev;
    }
    if (!state) continue;
    let pod = pods.get(target.podUid);
    if (!pod) {
      pod = { name: target.podName, namespace: target.podNamespace, uid: target.podUid, probeStates: [] };
      pods.set(target.podUid, pod);
    }
    pod.probeStates!.push(state);
  }
  return pods.size > 0 ? { podProbeStatuses: [...pods.values()] } : {};
}
