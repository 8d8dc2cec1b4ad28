// What the PodProbeMarker and NodePodProbe controllers both read: the cache indexes they share (pods by node,
// NodePodProbes by the markers with probes in them), which marker a NodePodProbe probe comes from, and which pods
// and nodes count.
import { VIRTUAL_KUBELET_LABEL, VIRTUAL_KUBELET_LABEL_VALUE } from '../../api/constants.js';
import { splitNodeProbeName, type ContainerProbe, type NodePodProbe } from '../../api/nodepodprobe.js';
import type { WireNode, WirePod } from '../../api/wire.js';

/** Index of the pod cache by spec.nodeName. */
export const POD_NODE_INDEX = 'nodeName';
/** Index of the NodePodProbe cache by `<namespace>/<marker>` of the markers with probes in it. */
export const NPP_MARKER_INDEX = 'podProbeMarker';

export const byNodeName = (pod: WirePod): string[] => (pod.spec?.nodeName ? [pod.spec.nodeName] : []);

/** The marker a NodePodProbe probe comes from: its podProbeMarkerName, else the part of its name before `#`. */
export function markerNameOf(probe: ContainerProbe): string {
  if (probe.podProbeMarkerName) return probe.podProbeMarkerName;
  return splitNodeProbeName(probe.name)?.markerName ?? '';
}

/** `<namespace>/<marker>` of every marker with a probe in this NodePodProbe (NPP_MARKER_INDEX). */
export function markerKeysOf(npp: NodePodProbe): string[] {
  const keys = new Set<string>();
  for (const podProbe of npp.spec?.podProbes ?? []) {
    for (const probe of podProbe.probes ?? []) {
      const marker = markerNameOf(probe);
      if (marker) keys.add(`${podProbe.namespace}/${marker}`);
    }
  }
  return [...keys];
}

/** A virtual-kubelet node (label type=virtual-kubelet): no agent runs there. */
export function isVirtualKubelet(node: WireNode | undefined): boolean {
  return node?.metadata?.labels?.[VIRTUAL_KUBELET_LABEL] === VIRTUAL_KUBELET_LABEL_VALUE;
}
