// The status a PersistentPodState should have (pure): for each Ready pod of its StatefulSet that is bound to a
// node, the node's name, the node's values of the topology keys (required ∪ preferred) and the pod's values of the
// persistent annotation keys. An entry stays while its pod is away (deleted, pending, not Ready) so the recreated
// pod can be pinned; it goes when a scale-down removed the ordinal and the pod no longer exists (unless the policy
// is WhenDeleted). The StatefulSet gone or being deleted: no entries.
// Differences from OpenKruise, on purpose: an entry is recomputed from the current node labels and pod annotations
// (OpenKruise compares the annotation keys against the recorded values, so it never settles); a pod whose node is not
// in the cache yet keeps its old entry and the caller looks again; ordinals follow spec.ordinals.start.
import type { PersistentPodStateStatus, PodState, PersistentPodState } from '../../api/persistentpodstate.js';
import type { StatefulSetObject } from './resources.js';
import type { WirePod, WireNode } from '../../api/wire.js';

export interface PodStateInputs {
  pps: PersistentPodState;
  /** The target StatefulSet from the cache; undefined when it does not exist. */
  workload?: StatefulSetObject | undefined;
  /** Pods controlled by the workload (controller ownerReference to its uid). */
  pods: readonly WirePod[];
  /** A pod of the namespace by name (any owner): does a pod of that name still exist? */
  podExists(name: string): boolean;
  node(name: string): WireNode | undefined;
}

export interface PodStateResult {
  status: PersistentPodStateStatus;
  /** Ready pods whose node is not in the cache yet: look again shortly. */
  waitingForNodes: string[];
}

export function topologyKeysOf(pps: PersistentPodState): string[] {
  const keys = new Set(pps.spec?.requiredPersistentTopology?.nodeTopologyKeys ?? []);
  for (const term of pps.spec?.preferredPersistentTopology ?? []) {
    for (const k of term.preference?.nodeTopologyKeys ?? []) keys.add(k);
  }
  return [...keys];
}

export function isPodReady(pod: WirePod): boolean {
  return (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** The ordinal of a StatefulSet pod named `<sts>-<n>`; undefined for any other name. */
export function ordinalOf(stsName: string, podName: string): number | undefined {
  const prefix = `${stsName}-`;
  if (!podName.startsWith(prefix)) return undefined;
  const rest = podName.slice(prefix.length);
  if (!/^(0|[1-9]\d*)$/.test(rest)) return undefined;
  const n = Number(rest);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** Is the ordinal one the StatefulSet keeps at its current size? */
export function ordinalInRange(workload: StatefulSetObject, ordinal: number): boolean {
  const start = workload.spec?.ordinals?.start ?? 0;
  const replicas = workload.spec?.replicas ?? 1;
  return ordinal >= start && ordinal < start + replicas;
}

function pick(source: Readonly<Record<string, string>> | undefined, keys: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of keys) {
    const v = source?.[k];
    if (v !== undefined) out[k] = v;
  }
  return out;
}

export function computePodStates(input: PodStateInputs): PodStateResult {
  const { pps, workload } = input;
  const observedGeneration = pps.metadata?.generation ?? 0;
  if (!workload || workload.metadata?.deletionTimestamp) {
    return { status: { observedGeneration }, waitingForNodes: [] };
  }
  const previous = pps.status?.podStates ?? {};
  const topologyKeys = topologyKeysOf(pps);
  const annotationKeys = (pps.spec?.persistentPodAnnotations ?? []).map((a) => a.key);
  const states: Record<string, PodState> = {};
  const waitingForNodes: string[] = [];
  const recorded = new Set<string>();

  for (const pod of input.pods) {
    const name = pod.metadata?.name;
    const nodeName = pod.spec?.nodeName;
    if (!name || !nodeName || !isPodReady(pod)) continue;
    const node = input.node(nodeName);
    if (!node) {
      waitingForNodes.push(name);
      continue;
    }
    const state: PodState = { nodeName };
    const labels = pick(node.metadata?.labels, topologyKeys);
    if (Object.keys(labels).length > 0) state.nodeTopologyLabels = labels;
    const annotations = pick(pod.metadata?.annotations, annotationKeys);
    if (Object.keys(annotations).length > 0) state.annotations = annotations;
    states[name] = state;
    recorded.add(name);
  }

  const whenScaled = (pps.spec?.persistentPodStateRetentionPolicy ?? 'WhenScaled') !== 'WhenDeleted';
  const stsName = workload.metadata?.name ?? '';
  for (const [name, state] of Object.entries(previous)) {
    if (recorded.has(name)) continue;
    if (whenScaled) {
      const ordinal = ordinalOf(stsName, name);
      if (ordinal !== undefined && !ordinalInRange(workload, ordinal) && !input.podExists(name)) continue;
    }
    states[name] = state;
  }

  const status: PersistentPodStateStatus = { observedGeneration };
  if (Object.keys(states).length > 0) status.podStates = sortedByName(states);
  return { status, waitingForNodes };
}

function sortedByName(states: Record<string, PodState>): Record<string, PodState> {
  const out: Record<string, PodState> = {};
  for (const name of Object.keys(states).sort()) out[name] = states[name]!;
  return out;
}
