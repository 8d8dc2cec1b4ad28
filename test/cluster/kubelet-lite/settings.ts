// What one kubelet-lite node needs to know about its host, fixed at start.
import type { KubeletTimers } from './timers.js';

export interface NodeSettings {
  nodeName: string;
  /** cgroupfs parent of this cluster's pods (POD_CGROUP_PARENT); each pod gets <parent>/pod<uid>. */
  podCgroupParent: string;
  /** Parent of pod log directories (<dir>/<namespace>_<name>_<uid>). */
  podLogDir: string;
  /** Pod volumes live in <stateDir>/pods/<uid>/volumes. */
  stateDir: string;
  /** The node's addresses (status.hostIP). */
  hostIPs: string[];
  timers: KubeletTimers;
}
