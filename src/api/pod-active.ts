// Whether a pod still counts (kube's IsPodActive): not Succeeded, not Failed, not being deleted. One rule for every
// reader: CRR admission, ImagePullJob pod selection, launch priority, custom probes.
import type { WirePod } from './wire.js';

export function isPodActive(pod: Pick<WirePod, 'metadata' | 'status'>): boolean {
  const phase = pod.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && !pod.metadata?.deletionTimestamp;
}
