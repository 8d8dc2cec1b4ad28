// Auto-generation (pure): the PersistentPodState a StatefulSet's annotations ask for. `kruise.io/auto-generate-
// persistent-pod-state: "true"` with `kruise.io/required-persistent-topology` and/or `kruise.io/preferred-persistent-
// topology` (comma lists of node label keys; preferred at weight 100) and optionally `kruise.io/persistent-pod-
// annotations` → a PPS named as the StatefulSet, controlled by it (ownerReference, so it goes with it).
// Differences from OpenKruise: annotations that would make an invalid PPS (a bad label key) generate nothing and
// say why; a PPS of that name the StatefulSet does not control is never overwritten or deleted.
import {
  AUTO_GENERATE_PERSISTENT_POD_STATE_ANNOTATION,
  PERSISTENT_POD_ANNOTATIONS_ANNOTATION,
  PREFERRED_PERSISTENT_TOPOLOGY_ANNOTATION,
  REQUIRED_PERSISTENT_TOPOLOGY_ANNOTATION,
} from '../../api/constants.js';
import { formatFieldErrors } from '../../api/field-errors.js';
import type { PersistentPodStateSpec, PersistentPodState } from '../../api/persistentpodstate.js';
import { validatePersistentPodState } from '../../api/persistentpodstate-validation.js';
import type { OwnerReference } from '../../kube/object.js';
import type { StatefulSetObject } from './resources.js';

export const GENERATED_PREFERRED_WEIGHT = 100;

/** The annotations that decide generation (a change of any of them regenerates). */
export const GENERATION_ANNOTATIONS = [
  AUTO_GENERATE_PERSISTENT_POD_STATE_ANNOTATION,
  REQUIRED_PERSISTENT_TOPOLOGY_ANNOTATION,
  PREFERRED_PERSISTENT_TOPOLOGY_ANNOTATION,
  PERSISTENT_POD_ANNOTATIONS_ANNOTATION,
] as const;

export type GenerationPlan =
  /** Auto-generation on: the PPS should exist with this spec. */
  | { kind: 'ensure'; spec: PersistentPodStateSpec; ownerReference: OwnerReference }
  /** Auto-generation off: a PPS this StatefulSet controls should not exist. */
  | { kind: 'remove' }
  /** On, but nothing valid to generate: leave things as they are and say why. */
  | { kind: 'invalid'; message: string };

export function splitList(value: string | undefined): string[] {
  if (!value) return [];
  return value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

export function planGeneration(sts: StatefulSetObject): GenerationPlan {
  const annotations = sts.metadata?.annotations ?? {};
  if (annotations[AUTO_GENERATE_PERSISTENT_POD_STATE_ANNOTATION] !== 'true') return { kind: 'remove' };
  const name = sts.metadata?.name ?? '';
  const uid = sts.metadata?.uid ?? '';
  const required = splitList(annotations[REQUIRED_PERSISTENT_TOPOLOGY_ANNOTATION]);
  const preferred = splitList(annotations[PREFERRED_PERSISTENT_TOPOLOGY_ANNOTATION]);
  const podAnnotations = splitList(annotations[PERSISTENT_POD_ANNOTATIONS_ANNOTATION]);
  if (required.length === 0 && preferred.length === 0) {
    return {
      kind: 'invalid',
      message: `${AUTO_GENERATE_PERSISTENT_POD_STATE_ANNOTATION} is "true" but neither ${REQUIRED_PERSISTENT_TOPOLOGY_ANNOTATION} nor ${PREFERRED_PERSISTENT_TOPOLOGY_ANNOTATION} names a node label key`,
    };
  }
  const spec: PersistentPodStateSpec = { targetRef: { apiVersion: 'apps/v1', kind: 'StatefulSet', name } };
  if (required.length > 0) spec.requiredPersistentTopology = { nodeTopologyKeys: required };
  if (preferred.length > 0) {
    spec.preferredPersistentTopology = [
      { weight: GENERATED_PREFERRED_WEIGHT, preference: { nodeTopologyKeys: preferred } },
    ];
  }
  if (podAnnotations.length > 0) spec.persistentPodAnnotations = podAnnotations.map((key) => ({ key }));
  const errors = validatePersistentPodState({ metadata: { name }, spec });
  if (errors.length > 0) {
    return {
      kind: 'invalid',
      message: `the StatefulSet's annotations make an invalid PersistentPodState: ${formatFieldErrors(errors)}`,
    };
  }
  return {
    kind: 'ensure',
    spec,
    ownerReference: { apiVersion: 'apps/v1', kind: 'StatefulSet', name, uid, controller: true },
  };
}

/** Is this PPS controlled by the StatefulSet with this uid? */
export function controlledBy(pps: PersistentPodState, uid: string | undefined): boolean {
  return !!uid && (pps.metadata?.ownerReferences ?? []).some((r) => r.controller === true && r.uid === uid);
}

/** The generated object to create. */
export function generatedObject(
  sts: StatefulSetObject,
  plan: Extract<GenerationPlan, { kind: 'ensure' }>,
): PersistentPodState {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'PersistentPodState',
    metadata: { name: sts.metadata?.name, namespace: sts.metadata?.namespace, ownerReferences: [plan.ownerReference] },
    spec: plan.spec,
  };
}

/** Bring a generated PPS's spec to the plan; false when it already matches. */
export function applyGeneratedSpec(draft: PersistentPodState, spec: PersistentPodStateSpec): boolean {
  const have = JSON.stringify(normalizedSpec(draft.spec));
  const want = JSON.stringify(normalizedSpec(spec));
  if (have === want) return false;
  // keep a retention policy the user set on the generated object; everything else follows the annotations
  const policy = draft.spec?.persistentPodStateRetentionPolicy;
  draft.spec = { ...spec, ...(policy && { persistentPodStateRetentionPolicy: policy }) };
  return true;
}

function normalizedSpec(spec: PersistentPodStateSpec | undefined): unknown {
  return {
    targetRef: spec?.targetRef ?? null,
    required: spec?.requiredPersistentTopology?.nodeTopologyKeys ?? [],
    preferred: (spec?.preferredPersistentTopology ?? []).map((t) => [t.weight, t.preference?.nodeTopologyKeys ?? []]),
    annotations: (spec?.persistentPodAnnotations ?? []).map((a) => a.key),
  };
}
