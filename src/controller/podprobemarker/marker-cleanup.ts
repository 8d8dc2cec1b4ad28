// What a deleted PodProbeMarker takes back from a pod, as pure functions: the labels and annotations of its marker
// policies where the pod still shows the policy's value (a key the user set to something else stays), and the
// conditions its probes wrote, except one a readinessGate of the pod names (removing it would make the pod
// unready for good; it stays at its last value, as OpenKruise leaves every mark). OpenKruise removes nothing.
import type { PodProbeMarker } from '../../api/podprobemarker.js';
import type { WirePod, WirePodCondition } from '../../api/wire.js';
import type { MetadataPatch } from '../shared/pod-marks-write.js';

export function cleanupPatchFor(marker: PodProbeMarker, pod: WirePod): MetadataPatch | undefined {
  const labels: Record<string, null> = {};
  const annotations: Record<string, null> = {};
  const podLabels = pod.metadata?.labels ?? {};
  const podAnnotations = pod.metadata?.annotations ?? {};
  for (const probe of marker.spec.probes) {
    for (const policy of probe.markerPolicy ?? []) {
      for (const [k, v] of Object.entries(policy.labels ?? {})) if (podLabels[k] === v) labels[k] = null;
      for (const [k, v] of Object.entries(policy.annotations ?? {})) if (podAnnotations[k] === v) annotations[k] = null;
    }
  }
  const patch: MetadataPatch = {};
  if (Object.keys(labels).length > 0) patch.labels = labels;
  if (Object.keys(annotations).length > 0) patch.annotations = annotations;
  return patch.labels || patch.annotations ? patch : undefined;
}

/** The pod's conditions without the marker's (readiness-gated ones kept), or undefined when none is there. */
export function conditionsWithout(marker: PodProbeMarker, pod: WirePod): WirePodCondition[] | undefined {
  const gated = new Set((pod.spec?.readinessGates ?? []).map((g) => g.conditionType));
  const types = new Set(
    marker.spec.probes.map((p) => p.podConditionType).filter((t): t is string => !!t && !gated.has(t)),
  );
  const conditions = pod.status?.conditions ?? [];
  const kept = conditions.filter((c) => !types.has(c.type));
  return kept.length === conditions.length ? undefined : kept;
}
