// One way to change a NodePodProbe's spec, for both controllers that do (the PodProbeMarker one adds and removes its
// probes, the NodePodProbe one prunes pods that went): updateFromFresh starting from the cached object when the cache
// is current (no read), else from a fresh read; a conflict is redone from a fresh read, the first at once, later ones
// after a backoff (10 ms doubling, as client-go's RetryOnConflict); past the attempts the conflict is thrown and the
// work queue retries the key with its own backoff. The agent writes only the status (a subresource, though it moves
// the resourceVersion too), so most conflicts are with a status write or another marker's reconcile.
import { NODE_POD_PROBES, type NodePodProbe } from '../../api/nodepodprobe.js';
import type { KubeClient } from '../../kube/client.js';
import { updateFromFresh, type FreshUpdateResult } from '../../kube/fresh-update.js';
import type { BackoffPolicy } from '../../util/backoff.js';
import type { Clock } from '../../util/clock.js';

const CONFLICT_BACKOFF: BackoffPolicy = { initialMs: 10, maxMs: 1000 };

export type NodePodProbeWrite = FreshUpdateResult<NodePodProbe>;

export function writeNodePodProbeSpec(
  client: KubeClient,
  clock: Clock,
  cached: NodePodProbe,
  cacheIsFresh: boolean,
  mutate: (draft: NodePodProbe) => boolean,
): Promise<NodePodProbeWrite> {
  return updateFromFresh(client, NODE_POD_PROBES, cached.metadata.name ?? '', undefined, mutate, {
    start: cacheIsFresh ? cached : undefined,
    conflictBackoff: { clock, policy: CONFLICT_BACKOFF },
  });
}
