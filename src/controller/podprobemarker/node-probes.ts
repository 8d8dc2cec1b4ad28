// What a PodProbeMarker puts into NodePodProbes, as pure functions: the probes it runs in one pod (named ports of
// httpGet/tcpSocket turned into numbers from the container's ports, as OpenKruise, so the agent needs no pod spec),
// the pods it selects, and the merge of its entries into one node's NodePodProbe spec (its probes added, changed or
// removed; other markers' probes left as they are; a pod entry left without probes dropped).
import { isPodActive } from '../../api/pod-active.js';
import { nodeProbeName, type ContainerProbe, type NodePodProbeSpec, type PodProbe } from '../../api/nodepodprobe.js';
import type { PodProbeMarker } from '../../api/podprobemarker.js';
import { labelSelectorMatches } from '../../api/label-selector.js';
import type { WireContainer, WirePod } from '../../api/wire.js';
import { jsonEqual } from '../../kube/merge-patch.js';
import { markerNameOf } from '../shared/pod-probes.js';

function isInitialized(pod: WirePod): boolean {
  return (pod.status?.conditions ?? []).some((c) => c.type === 'Initialized' && c.status === 'True');
}

/** A pod the marker's probes run in: its labels match, active, scheduled and Initialized (as OpenKruise). */
export function isProbedPod(marker: PodProbeMarker, pod: WirePod): boolean {
  return (
    pod.metadata?.namespace === marker.metadata.namespace &&
    labelSelectorMatches(marker.spec.selector, pod.metadata?.labels ?? {}) &&
    isPodActive(pod) &&
    !!pod.spec?.nodeName &&
    isInitialized(pod)
  );
}

/** A container the probe may name: a regular one or a sidecar (an init container that keeps running). */
function containerOf(pod: WirePod, name: string): WireContainer | undefined {
  return (
    pod.spec?.containers.find((c) => c.name === name) ??
    pod.spec?.initContainers?.find((c) => c.name === name && c.restartPolicy === 'Always')
  );
}

/** The number a probe port names: itself, the container port of that name, or a number written as a string. */
function portNumber(port: number | string, container: WireContainer): number | undefined {
  let value: number | undefined;
  if (typeof port === 'number') value = port;
  else
    value =
      container.ports?.find((p) => p.name === port)?.containerPort ?? (/^\d+$/.test(port) ? Number(port) : undefined);
  return value !== undefined && Number.isInteger(value) && value > 0 && value < 65536 ? value : undefined;
}

/** A probe left out of a pod: the pod lacks its container, or the named port in that container. */
export interface ProbeProblem {
  /** What is wrong, the same for every pod it is wrong in: `probe x: no container c`. */
  what: string;
  pod: string;
}

export interface PodProbes {
  /** The NodePodProbe entry's identity and the marker's probes for it. */
  entry: PodProbe;
  /** Why some probes were left out, for an event on the marker. */
  problems: ProbeProblem[];
}

/**
 * One line for all the problems: each distinct one with how many pods have it and one of them. `key` stays the same
 * while the same problems are there (pods coming and going do not change it), so one event is sent per change.
 */
export function summarizeProblems(problems: readonly ProbeProblem[]): { key: string; message: string } {
  const byWhat = new Map<string, { count: number; pod: string }>();
  for (const p of problems) {
    const seen = byWhat.get(p.what);
    if (seen) seen.count++;
    else byWhat.set(p.what, { count: 1, pod: p.pod });
  }
  const whats = [...byWhat.keys()].sort();
  const parts = whats.map((what) => {
    const { count, pod } = byWhat.get(what)!;
    return `${what} in ${count} pod${count === 1 ? '' : 's'} (e.g. ${pod})`;
  });
  return { key: whats.join('\n'), message: `probes left out: ${parts.join('; ')}` };
}

/** The marker's probes for one pod, as the agent gets them. */
export function podProbesFor(marker: PodProbeMarker, pod: WirePod): PodProbes {
  const markerName = marker.metadata.name ?? '';
  const podName = `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
  const probes: ContainerProbe[] = [];
  const problems: ProbeProblem[] = [];
  for (const spec of marker.spec.probes) {
    const container = containerOf(pod, spec.containerName);
    if (!container) {
      problems.push({ what: `probe ${spec.name}: no container ${spec.containerName}`, pod: podName });
      continue;
    }
    const probe = structuredClone(spec.probe);
    let portMissing: string | undefined;
    for (const action of [probe.httpGet, probe.tcpSocket]) {
      if (!action) continue;
      const port = portNumber(action.port, container);
      if (port === undefined) portMissing = String(action.port);
      else action.port = port;
    }
    if (portMissing !== undefined) {
      problems.push({
        what: `probe ${spec.name}: no port ${JSON.stringify(portMissing)} in container ${spec.containerName}`,
        pod: podName,
      });
      continue;
    }
    probes.push({
      name: nodeProbeName(markerName, spec.name),
      containerName: spec.containerName,
      probe,
      podProbeMarkerName: markerName,
    });
  }
  const entry: PodProbe = {
    name: pod.metadata?.name ?? '',
    namespace: pod.metadata?.namespace ?? '',
    uid: pod.metadata?.uid ?? '',
    probes,
  };
  if (pod.status?.podIP) entry.IP = pod.status.podIP;
  return { entry, problems };
}

/**
 * Put the marker's entries for one node into `spec` (edited in place): every probe of the marker (in its namespace)
 * that is not wanted goes, wanted ones are added or replaced, pod IPs follow the pods. Returns whether it changed.
 * `wanted` holds the marker's entries for the pods on this node, by pod uid; an empty map removes the marker.
 */
export function mergeMarkerProbes(
  spec: NodePodProbeSpec,
  namespace: string,
  markerName: string,
  wanted: ReadonlyMap<string, PodProbe>,
): boolean {
  const before = structuredClone(spec.podProbes ?? []);
  const placed = new Set<string>();
  const result: PodProbe[] = [];
  for (const entry of before) {
    if (entry.namespace !== namespace) {
      result.push(entry);
      continue;
    }
    const want = wanted.get(entry.uid);
    const wantedHere = want && want.name === entry.name && !placed.has(entry.uid);
    const others = (entry.probes ?? []).filter((p) => markerNameOf(p) !== markerName);
    if (!wantedHere) {
      if (others.length > 0) result.push({ ...entry, probes: others });
      continue;
    }
    placed.add(entry.uid);
    const probes = [...(entry.probes ?? [])].filter((p) => markerNameOf(p) !== markerName || wantsProbe(want, p.name));
    for (const probe of want.probes ?? []) {
      const at = probes.findIndex((p) => p.name === probe.name);
      if (at < 0) probes.push(probe);
      else probes[at] = probe;
    }
    if (probes.length === 0) continue;
    const next: PodProbe = { ...entry, probes };
    if (want.IP && want.IP !== entry.IP) next.IP = want.IP;
    result.push(next);
  }
  for (const [uid, want] of wanted) {
    if (!placed.has(uid) && (want.probes ?? []).length > 0) result.push(structuredClone(want));
  }
  if (jsonEqual(result, before)) return false;
  if (result.length > 0) spec.podProbes = result;
  else delete spec.podProbes;
  return true;
}

function wantsProbe(want: PodProbe, name: string): boolean {
  return (want.probes ?? []).some((p) => p.name === name);
}

/** Take the probes of the markers `keys` names (`<namespace>/<name>`) out of `spec`; returns whether it changed. */
export function removeMarkers(spec: NodePodProbeSpec, keys: ReadonlySet<string> | undefined): boolean {
  if (!keys || keys.size === 0 || !spec.podProbes) return false;
  let changed = false;
  const result: PodProbe[] = [];
  for (const entry of spec.podProbes) {
    const probes = (entry.probes ?? []).filter((p) => !keys.has(`${entry.namespace}/${markerNameOf(p)}`));
    if (probes.length !== (entry.probes ?? []).length) changed = true;
    if (probes.length > 0) result.push(probes.length === (entry.probes ?? []).length ? entry : { ...entry, probes });
  }
  if (!changed) return false;
  if (result.length > 0) spec.podProbes = result;
  else delete spec.podProbes;
  return true;
}
