// NodePodProbe (apps.kruise.io v1alpha1, cluster-scoped, one per Node with the Node's name): the custom probes the
// agent on that node runs (written by the controller from the PodProbeMarkers), and their results (written by the
// agent). JSON names as OpenKruise.

import type { KubeObject } from '../kube/object.js';
import type { ResourceType } from '../kube/resource.js';
import { KRUISE_GROUP, POD_PROBE_NAME_SEPARATOR, V1ALPHA1 } from './constants.js';
import type { ObjectMeta, Time } from './meta.js';
import type { ContainerProbeSpec, ProbeState } from './podprobemarker.js';

export const NODE_POD_PROBES: ResourceType = {
  group: KRUISE_GROUP,
  version: V1ALPHA1,
  resource: 'nodepodprobes',
  namespaced: false,
  kind: 'NodePodProbe',
};

/** A marker's probe as named in a NodePodProbe: `<marker>#<probe>`. */
export function nodeProbeName(markerName: string, probeName: string): string {
  return `${markerName}${POD_PROBE_NAME_SEPARATOR}${probeName}`;
}

/** The marker and probe names of a NodePodProbe probe name; undefined for a name without `#`. */
export function splitNodeProbeName(name: string): { markerName: string; probeName: string } | undefined {
  const at = name.indexOf(POD_PROBE_NAME_SEPARATOR);
  return at < 0 ? undefined : { markerName: name.slice(0, at), probeName: name.slice(at + 1) };
}

export interface ContainerProbe {
  /** `<marker name>#<probe name>` for a marker's probe; unique within the pod. */
  name: string;
  containerName: string;
  probe: ContainerProbeSpec;
  /** The PodProbeMarker this probe comes from (in the pod's namespace). */
  podProbeMarkerName?: string;
}

export interface PodProbe {
  name: string;
  namespace: string;
  uid: string;
  /** The pod's IP, the only address tcpSocket/httpGet probes reach (newer OpenKruise only). */
  IP?: string;
  probes?: ContainerProbe[];
}

export interface NodePodProbeSpec {
  podProbes?: PodProbe[];
}

export interface ContainerProbeState {
  /** The ContainerProbe's name. */
  name: string;
  state: ProbeState;
  lastProbeTime?: Time;
  lastTransitionTime?: Time;
  /** The probe's output on success, its error on failure (at most 1,024 characters). */
  message?: string;
}

export interface PodProbeStatus {
  name: string;
  namespace: string;
  uid: string;
  probeStates?: ContainerProbeState[];
}

export interface NodePodProbeStatus {
  podProbeStatuses?: PodProbeStatus[];
}

export interface NodePodProbe extends KubeObject {
  metadata: ObjectMeta;
  spec?: NodePodProbeSpec;
  status?: NodePodProbeStatus;
}
