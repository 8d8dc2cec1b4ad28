// What a pod's probe results mark on it, as pure functions (OpenKruise's NodePodProbe controller, with the
// differences named):
// - each probe state whose marker (in the pod's namespace, not being deleted) names a podConditionType gives that
//   condition: True when Succeeded, False otherwise (Unknown too, as OpenKruise), the probe's message,
//   lastProbeTime and lastTransitionTime; when two probes name one condition type the first state wins (as
//   OpenKruise); a condition whose lastProbeTime is newer than the state's is kept (a stale read never moves a pod
//   back);
// - its markerPolicy: the labels/annotations of the policy matching the state are set, the keys of the other
//   policies removed (Unknown matches none, so all its policies' keys go; OpenKruise removes only the last one's);
// - a state whose marker or probe is gone marks nothing (the marker's own cleanup removes its marks).
import { splitNodeProbeName, type PodProbeStatus } from '../../api/nodepodprobe.js';
import type { PodContainerProbe, PodProbeMarker } from '../../api/podprobemarker.js';
import type { WirePod, WirePodCondition } from '../../api/wire.js';
import { parseTime } from '../../util/time.js';

export interface PodMarks {
  /** The conditions the results ask for, one per type. */
  conditions: WirePodCondition[];
  /** Labels to set (a string) or remove (null). */
  labels: Record<string, string | null>;
  annotations: Record<string, string | null>;
  /** Probes whose condition type an earlier probe already gave: `type` → the probe names, the winner first. */
  conflicts: Map<string, string[]>;
}

/** The marker's probe a NodePodProbe probe name (`<marker>#<probe>`) stands for, if both still exist. */
export function markerProbeOf(
  name: string,
  markerOf: (markerName: string) => PodProbeMarker | undefined,
): PodContainerProbe | undefined {
  const names = splitNodeProbeName(name);
  if (!names) return undefined;
  const marker = markerOf(names.markerName);
  if (!marker || marker.metadata.deletionTimestamp) return undefined;
  return marker.spec.probes.find((p) => p.name === names.probeName);
}

export function marksFor(
  status: PodProbeStatus,
  markerOf: (markerName: string) => PodProbeMarker | undefined,
  now: string,
): PodMarks {
  const marks: PodMarks = { conditions: [], labels: {}, annotations: {}, conflicts: new Map() };
  const givenBy = new Map<string, string>();
  for (const state of status.probeStates ?? []) {
    if (!state.state) continue;
    const probe = markerProbeOf(state.name, markerOf);
    if (!probe) continue;
    const type = probe.podConditionType;
    const winner = type ? givenBy.get(type) : undefined;
    if (type && winner !== undefined) {
      marks.conflicts.set(type, [...(marks.conflicts.get(type) ?? [winner]), state.name]);
    } else if (type) {
      givenBy.set(type, state.name);
      const condition: WirePodCondition = {
        type,
        status: state.state === 'Succeeded' ? 'True' : 'False',
        lastProbeTime: state.lastProbeTime ?? now,
        lastTransitionTime: state.lastTransitionTime ?? state.lastProbeTime ?? now,
      };
      if (state.message) condition.message = state.message;
      marks.conditions.push(condition);
    }
    for (const policy of probe.markerPolicy ?? []) {
      if (policy.state === state.state) continue;
      for (const key of Object.keys(policy.labels ?? {})) if (!(key in marks.labels)) marks.labels[key] = null;
      for (const key of Object.keys(policy.annotations ?? {})) {
        if (!(key in marks.annotations)) marks.annotations[key] = null;
      }
    }
    const matched = (probe.markerPolicy ?? []).find((p) => p.state === state.state);
    Object.assign(marks.labels, matched?.labels ?? {});
    Object.assign(marks.annotations, matched?.annotations ?? {});
  }
  return marks;
}

/**
 * The pod's conditions with the wanted ones set, or undefined when nothing changes. A condition is replaced when its
 * status or message differs (OpenKruise's SetPodConditionIfMsgChanged) and the pod's copy is not newer.
 */
export function conditionsWith(pod: WirePod, wanted: readonly WirePodCondition[]): WirePodCondition[] | undefined {
  const conditions = [...(pod.status?.conditions ?? [])];
  let changed = false;
  for (const want of wanted) {
    const at = conditions.findIndex((c) => c.type === want.type);
    const have = at < 0 ? undefined : conditions[at];
    if (!have) {
      conditions.push(want);
      changed = true;
      continue;
    }
    if (have.status === want.status && (have.message ?? '') === (want.message ?? '')) continue;
    const haveTime = parseTime(have.lastProbeTime);
    const wantTime = parseTime(want.lastProbeTime);
    if (haveTime !== undefined && wantTime !== undefined && haveTime > wantTime) continue;
    // the same status with a new message keeps the time it last changed
    const since =
      have.status === want.status ? (have.lastTransitionTime ?? want.lastTransitionTime) : want.lastTransitionTime;
    conditions[at] = since === undefined ? want : { ...want, lastTransitionTime: since };
    changed = true;
  }
  return changed ? conditions : undefined;
}

/** The merge-patch of metadata that applies the label/annotation marks, or undefined when the pod already shows them. */
export function metadataPatchFor(
  pod: WirePod,
  marks: Pick<PodMarks, 'labels' | 'annotations'>,
): { labels?: Record<string, string | null>; annotations?: Record<string, string | null> } | undefined {
  const labels = changes(pod.metadata?.labels ?? {}, marks.labels);
  const annotations = changes(pod.metadata?.annotations ?? {}, marks.annotations);
  if (!labels && !annotations) return undefined;
  return { ...(labels && { labels }), ...(annotations && { annotations }) };
}

function changes(
  have: Readonly<Record<string, string>>,
  want: Readonly<Record<string, string | null>>,
): Record<string, string | null> | undefined {
  const out: Record<string, string | null> = {};
  let any = false;
  for (const [key, value] of Object.entries(want)) {
    if (value === null ? !Object.hasOwn(have, key) : have[key] === value) continue;
    out[key] = value;
    any = true;
  }
  return any ? out : undefined;
}
