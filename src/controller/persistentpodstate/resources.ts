// What the PersistentPodState controller reads and writes: PersistentPodStates (served as v1alpha1, see
// docs/persistent-pod-state.md), apps/v1 StatefulSets, and the pod and node fields it looks at.
import type { PersistentPodState } from '../../api/persistentpodstate.js';
import type { KubeObject } from '../../kube/object.js';
import type { ResourceType } from '../../kube/resource.js';

export const STATEFULSETS: ResourceType = {
  group: 'apps',
  version: 'v1',
  resource: 'statefulsets',
  namespaced: true,
  kind: 'StatefulSet',
};

export type PersistentPodStateObject = PersistentPodState & KubeObject;

/** The apps/v1 StatefulSet fields this controller reads. */
export interface StatefulSetObject extends KubeObject {
  spec?: {
    replicas?: number;
    /** StatefulSetStartOrdinal (Kubernetes 1.27+): pods are numbered from `start`. */
    ordinals?: { start?: number };
  };
}
