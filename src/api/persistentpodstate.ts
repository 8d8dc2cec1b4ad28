// PersistentPodState (apps.kruise.io v1alpha1, namespaced): where each pod of a StatefulSet ran, so a
// recreated pod can be pinned back to its node/zone (and get its reserved IP back).

import type { KubeObject } from '../kube/object.js';
import type { ResourceType } from '../kube/resource.js';
import { KRUISE_GROUP, V1ALPHA1 } from './constants.js';
import type { ObjectMeta } from './meta.js';

/** Served as v1alpha1 only (OpenKruise's v1beta1 renames fields and needs a conversion webhook). */
export const PERSISTENT_POD_STATES: ResourceType = {
  group: KRUISE_GROUP,
  version: V1ALPHA1,
  resource: 'persistentpodstates',
  namespaced: true,
  kind: 'PersistentPodState',
};

export type PersistentPodStateRetentionPolicy = 'WhenScaled' | 'WhenDeleted';

export interface TargetReference {
  apiVersion: string;
  kind: string;
  name: string;
}

export interface PersistentPodAnnotation {
  key: string;
}

/** Node label keys (v1alpha1 name `nodeTopologyKeys`; v1beta1 renames it `keys`). */
export interface NodeTopologyTerm {
  nodeTopologyKeys: string[];
}

export interface PreferredTopologyTerm {
  weight: number;
  preference: NodeTopologyTerm;
}

export interface PersistentPodStateSpec {
  targetRef: TargetReference;
  persistentPodAnnotations?: PersistentPodAnnotation[];
  requiredPersistentTopology?: NodeTopologyTerm;
  preferredPersistentTopology?: PreferredTopologyTerm[];
  /** Empty means `WhenScaled`. */
  persistentPodStateRetentionPolicy?: PersistentPodStateRetentionPolicy;
}

export interface PodState {
  nodeName?: string;
  nodeTopologyLabels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface PersistentPodStateStatus {
  observedGeneration: number;
  /** Key = pod name. */
  podStates?: Record<string, PodState>;
}

/** A PersistentPodState as the API serves it (metadata always set). */
export interface PersistentPodState extends KubeObject {
  metadata: ObjectMeta;
  spec: PersistentPodStateSpec;
  status?: PersistentPodStateStatus;
}
