// One way to change a NodePodProbe's spec, for both controllers that do (the PodProbeMarker one adds and removes its
// probes, the NodePodProbe one prunes pods that went): the mutation applied to the cached object and PUT with the
// cache's resourceVersion (no read when the cache is current), and on a 409 Conflict, or when the cache may predate
// our own last write, the fresh-read-and-retry of updateFromFresh. A run of conflicts past its attempts throws, and
// the work queue retries the key with its backoff. The agent writes only the status, so a spec conflict is with the
// other controller or another marker's reconcile.
import { NODE_POD_PROBES, type NodePodProbe } from '../../api/nodepodprobe.js';
import type { KubeClient } from '../../kube/client.js';
import { isConflict, isNotFound } from '../../kube/errors.js';
import { updateFromFresh, type FreshUpdateResult } from '../../kube/fresh-update.js';

export async function writeNodePodProbeSpec(
  client: KubeClient,
  cached: NodePodProbe,
  cacheIsFresh: boolean,
  mutate: (draft: NodePodProbe) => boolean,
): Promise<FreshUpdateResult<NodePodProbe> & { conflicted: boolean }> {
  const name = cached.metadata.name ?? '';
  if (cacheIsFresh) {
    const draft = structuredClone(cached);
    if (!mutate(draft)) return { object: cached, written: false, conflicted: false };
    try {
      const object = await client.update<NodePodProbe>(NODE_POD_PROBES, draft);
      return { object, written: true, conflicted: false };
    } catch (err) {
      if (isNotFound(err)) return { written: false, conflicted: false };
      if (!isConflict(err)) throw err;
    }
    return {
      ...(await updateFromFresh<NodePodProbe>(client, NODE_POD_PROBES, name, undefined, mutate)),
      conflicted: true,
    };
  }
  return {
    ...(await updateFromFresh<NodePodProbe>(client, NODE_POD_PROBES, name, undefined, mutate)),
    conflicted: false,
  };
}
