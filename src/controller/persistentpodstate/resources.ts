// The apps/v1 StatefulSets the PersistentPodState controller reads (PersistentPodStates are in src/api, pods and
// nodes in api/wire.ts).
import type { KubeObject } from '../../kube/object.js';
import type { ResourceType } from '../../kube/resource.js';

export const STATEFULSETS: ResourceType = {
  group: 'apps',
  version: 'v1',
  resource: 'statefulsets',
  namespaced: true,
  kind: 'StatefulSet',
};

/** The apps/v1 StatefulSet fields this controller reads. */
export interface StatefulSetObject extends KubeObject {
  spec?: {
    replicas?: number;
    /** StatefulSetStartOrdinal (Kubernetes 1.27+): pods are numbered from `start`. */
    ordinals?: { start?: number };
  };
}
