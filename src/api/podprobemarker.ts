// PodProbeMarker (apps.kruise.io v1alpha1, namespaced): custom probes run by the agent inside the selected pods'
// containers, and what their results mark on the pods (a condition, labels, annotations). JSON names as OpenKruise.

import type { KubeObject } from '../kube/object.js';
import type { ResourceType } from '../kube/resource.js';
import { KRUISE_GROUP, V1ALPHA1 } from './constants.js';
import type { LabelSelector, ObjectMeta } from './meta.js';
import type { WireProbe } from './wire.js';

export const POD_PROBE_MARKERS: ResourceType = {
  group: KRUISE_GROUP,
  version: V1ALPHA1,
  resource: 'podprobemarkers',
  namespaced: true,
  kind: 'PodProbeMarker',
};

/** A probe's result: `Unknown` until it has run (or after its container changed). */
export type ProbeState = 'Succeeded' | 'Failed' | 'Unknown';
/** The states a marker policy may name. */
export type MarkerPolicyState = 'Succeeded' | 'Failed';

/** A core/v1 Probe (exec, tcpSocket, httpGet; grpc is refused by admission). */
export type ContainerProbeSpec = WireProbe;

/** What a probe's result marks on the pod while the result is `state`. */
export interface ProbeMarkerPolicy {
  state: MarkerPolicyState;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface PodContainerProbe {
  /** Unique within the pod, across containers and markers. */
  name: string;
  containerName: string;
  probe: ContainerProbeSpec;
  markerPolicy?: ProbeMarkerPolicy[];
  /** The pod condition that mirrors the result (True iff Succeeded). At least one of this and markerPolicy. */
  podConditionType?: string;
}

export interface PodProbeMarkerSpec {
  /** Must select pods (an empty selector is refused). */
  selector: LabelSelector;
  probes: PodContainerProbe[];
}

/** A condition of the marker (ours; OpenKruise's status has none): `ProbesLeftOut`. */
export interface PodProbeMarkerCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

/** True while some node's NodePodProbe could not hold the marker's probes (they are not there; see the message). */
export const PROBES_LEFT_OUT_CONDITION = 'ProbesLeftOut';

export interface PodProbeMarkerStatus {
  observedGeneration: number;
  matchedPods?: number;
  conditions?: PodProbeMarkerCondition[];
}

export interface PodProbeMarker extends KubeObject {
  metadata: ObjectMeta;
  spec: PodProbeMarkerSpec;
  status?: PodProbeMarkerStatus;
}
