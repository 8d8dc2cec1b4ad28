// What the PersistentPodState e2e test and its benchmark share: the StatefulSet they run, the shapes of what they
// read back, and small readers. Nothing here starts anything.
import { isNotFound } from '../../../src/kube/errors.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { PERSISTENT_POD_STATES, type PersistentPodState } from '../../../src/api/persistentpodstate.js';
import { STATEFULSETS } from '../../../src/controller/persistentpodstate/resources.js';

export const SLEEP_FOREVER = ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1; done'];
export const HOSTNAME_LABEL = 'kubernetes.io/hostname';
/** What the PPS pod webhook puts on a pod it pinned (the PPS name). */
export const INJECTED_ANNOTATION = 'kruise.io/injected-persistent-pod-state';
/** The StatefulSet annotations that make kruise-controller generate a PPS requiring the recorded node. */
export const PIN_TO_NODE_ANNOTATIONS: Readonly<Record<string, string>> = {
  'kruise.io/auto-generate-persistent-pod-state': 'true',
  'kruise.io/required-persistent-topology': HOSTNAME_LABEL,
};

export interface PodObject extends KubeObject {
  spec?: {
    nodeName?: string;
    nodeSelector?: Record<string, string>;
    affinity?: Record<string, unknown>;
  } & Record<string, unknown>;
  status?: { phase?: string; podIP?: string; conditions?: { type: string; status: string }[] };
}

export interface PodTemplate {
  metadata?: KubeObject['metadata'];
  spec: Record<string, unknown>;
}

export interface StatefulSetObject extends KubeObject {
  spec?: { replicas?: number; template?: PodTemplate } & Record<string, unknown>;
  status?: { observedGeneration?: number; currentRevision?: string; updateRevision?: string };
}

export interface StatefulSetOptions {
  namespace: string;
  name: string;
  replicas: number;
  image: string;
  /** On the StatefulSet (the PPS annotations). */
  annotations: Record<string, string>;
  /** On its pod template. */
  podAnnotations?: Record<string, string>;
  /** Merged into the pod template's spec (nodeSelector, affinity, ...). */
  podSpec?: Record<string, unknown>;
  /** `OnDelete`: a template change reaches only pods deleted afterwards (default RollingUpdate). */
  updateStrategy?: 'OnDelete' | 'RollingUpdate';
}

export function statefulSetManifest(o: StatefulSetOptions): StatefulSetObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: o.name, namespace: o.namespace, annotations: o.annotations },
    spec: {
      replicas: o.replicas,
      serviceName: o.name,
      selector: { matchLabels: { app: o.name } },
      ...(o.updateStrategy ? { updateStrategy: { type: o.updateStrategy } } : {}),
      template: {
        metadata: { labels: { app: o.name }, annotations: o.podAnnotations ?? {} },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [{ name: 'main', image: o.image, command: SLEEP_FOREVER }],
          ...o.podSpec,
        },
      },
    },
  };
}

export function isReady(pod: PodObject | undefined): boolean {
  return !!pod?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
}

export async function getOrUndefined<T extends KubeObject>(get: () => Promise<T>): Promise<T | undefined> {
  try {
    return await get();
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

export { PERSISTENT_POD_STATES, STATEFULSETS, type PersistentPodState };
