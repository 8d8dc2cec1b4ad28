// Re-injection at pod creation (pure; reference §4.4): a StatefulSet pod whose name has an entry in its
// PersistentPodState gets the recorded node's values of the required keys as spec.nodeSelector, and one preferred
// node-affinity term per preferred term (operator In, the recorded value), and the annotation
// `kruise.io/injected-persistent-pod-state: <pps>`.
// Differences from OpenKruise, on purpose: a term already on the pod is not appended again and a term with no
// recorded key is not appended at all (OpenKruise appends both); a nodeSelector value the pod already has for the same
// key is kept, with a warning (the pod template's own constraint wins over the recorded one); a pod created already
// bound to a node (spec.nodeName) is left alone (a selector it does not match would make kubelet reject it).
import { INJECTED_PERSISTENT_POD_STATE_ANNOTATION } from '../../../api/constants.js';
import type { PersistentPodState } from '../../../api/persistentpodstate.js';
import { MAX_PREFERRED_WEIGHT, MIN_PREFERRED_WEIGHT } from '../../../api/persistentpodstate-validation.js';
import { isRecord } from '../../../util/is-record.js';

type Json = Record<string, unknown>;

export interface InjectionResult {
  /** The pod with the terms; undefined when nothing was injected. */
  pod?: Json;
  warnings: string[];
}

interface MatchExpression {
  key: string;
  operator: string;
  values: string[];
}

interface PreferredTerm {
  weight: number;
  preference: { matchExpressions: MatchExpression[] };
}

function stringMap(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isRecord(value)) return out;
  for (const [k, v] of Object.entries(value)) if (typeof v === 'string') out[k] = v;
  return out;
}

/** Same term: same weight and the same expressions (order-insensitive). */
function termSignature(term: unknown): string {
  if (!isRecord(term) || !isRecord(term.preference)) return JSON.stringify(term);
  const exprs = Array.isArray(term.preference.matchExpressions) ? term.preference.matchExpressions : [];
  const normalized = exprs
    .map((e) =>
      isRecord(e)
        ? JSON.stringify([
            e.key,
            e.operator,
            Array.isArray(e.values) ? [...(e.values as unknown[])].map(String).sort() : [],
          ])
        : JSON.stringify(e),
    )
    .sort();
  const fields = Array.isArray(term.preference.matchFields) ? term.preference.matchFields : [];
  return JSON.stringify([term.weight, normalized, fields]);
}

export function injectPersistentPodState(pod: Json, pps: PersistentPodState): InjectionResult {
  const warnings: string[] = [];
  const metadata = isRecord(pod.metadata) ? pod.metadata : {};
  const spec = isRecord(pod.spec) ? pod.spec : undefined;
  const podName = typeof metadata.name === 'string' ? metadata.name : '';
  if (!spec || !podName) return { warnings };
  if (typeof spec.nodeName === 'string' && spec.nodeName !== '') return { warnings };
  const state = pps.status?.podStates?.[podName];
  const recorded = state?.nodeTopologyLabels;
  if (!recorded || Object.keys(recorded).length === 0) return { warnings };

  const nodeSelector = stringMap(spec.nodeSelector);
  let selectorChanged = false;
  for (const key of pps.spec?.requiredPersistentTopology?.nodeTopologyKeys ?? []) {
    const value = recorded[key];
    if (value === undefined) continue;
    const have = nodeSelector[key];
    if (have === value) continue;
    if (have !== undefined) {
      warnings.push(
        `PersistentPodState ${pps.metadata?.name ?? ''}: spec.nodeSelector[${key}] is ${JSON.stringify(have)} in the pod, the recorded node has ${JSON.stringify(value)}; the pod's value is kept`,
      );
      continue;
    }
    nodeSelector[key] = value;
    selectorChanged = true;
  }

  const wanted: PreferredTerm[] = [];
  for (const [i, term] of (pps.spec?.preferredPersistentTopology ?? []).entries()) {
    const w = term.weight;
    if (!Number.isInteger(w) || w < MIN_PREFERRED_WEIGHT || w > MAX_PREFERRED_WEIGHT) {
      // a PPS that got past admission with a bad weight: the API server would refuse the pod with that term
      warnings.push(
        `PersistentPodState ${pps.metadata?.name ?? ''}: spec.preferredPersistentTopology[${i}].weight ${JSON.stringify(w)} is not in [${MIN_PREFERRED_WEIGHT}, ${MAX_PREFERRED_WEIGHT}]; that term is not injected`,
      );
      continue;
    }
    const matchExpressions = (term.preference?.nodeTopologyKeys ?? [])
      .filter((key) => recorded[key] !== undefined)
      .map((key) => ({ key, operator: 'In', values: [recorded[key]!] }));
    if (matchExpressions.length > 0) wanted.push({ weight: term.weight, preference: { matchExpressions } });
  }
  const affinity = isRecord(spec.affinity) ? spec.affinity : {};
  const nodeAffinity = isRecord(affinity.nodeAffinity) ? affinity.nodeAffinity : {};
  const existing = Array.isArray(nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution)
    ? (nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution as unknown[])
    : [];
  const present = new Set(existing.map(termSignature));
  const added = wanted.filter((t) => {
    const sig = termSignature(t);
    if (present.has(sig)) return false;
    present.add(sig);
    return true;
  });

  // Nothing new (a reinvocation, or a template already carrying the terms): the pod is left as it came.
  if (!selectorChanged && added.length === 0) return { warnings };
  const newSpec: Json = { ...spec };
  if (selectorChanged) newSpec.nodeSelector = nodeSelector;
  if (added.length > 0) {
    newSpec.affinity = {
      ...affinity,
      nodeAffinity: { ...nodeAffinity, preferredDuringSchedulingIgnoredDuringExecution: [...existing, ...added] },
    };
  }
  const annotations = {
    ...stringMap(metadata.annotations),
    [INJECTED_PERSISTENT_POD_STATE_ANNOTATION]: pps.metadata?.name ?? '',
  };
  return { pod: { ...pod, metadata: { ...metadata, annotations }, spec: newSpec }, warnings };
}
