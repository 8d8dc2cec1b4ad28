// One way to change a NodePodProbe's spec, for both controllers that do (the PodProbeMarker one adds and removes its
// probes, the NodePodProbe one prunes pods that went): the mutation applied to the cached object and PUT with the
// cache's resourceVersion (no read when the cache is current); on a 409 Conflict, or when the cache may predate our
// own last write, the object is read fresh and the mutation applied again. The first conflict is redone at once,
// later ones after a backoff (10 ms doubling, as client-go's RetryOnConflict); past the attempts the conflict is
// thrown and the work queue retries the key with its own backoff. The agent writes only the status (a subresource,
// though it moves the resourceVersion too), so most conflicts are with a status write or another marker's reconcile.
import { NODE_POD_PROBES, type NodePodProbe } from '../../api/nodepodprobe.js';
import type { KubeClient } from '../../kube/client.js';
import { isConflict, isNotFound } from '../../kube/errors.js';
import { backoffDelay, type BackoffPolicy } from '../../util/backoff.js';
import type { Clock } from '../../util/clock.js';

const ATTEMPTS = 5;
const CONFLICT_BACKOFF: BackoffPolicy = { initialMs: 10, maxMs: 1000 };

export interface NodePodProbeWrite {
  /** The object as stored after the write (or as read, when unchanged); undefined when it does not exist. */
  object?: NodePodProbe;
  written: boolean;
  /** 409 Conflicts met on the way. */
  conflicts: number;
}

export async function writeNodePodProbeSpec(
  client: KubeClient,
  clock: Clock,
  cached: NodePodProbe,
  cacheIsFresh: boolean,
  mutate: (draft: NodePodProbe) => boolean,
): Promise<NodePodProbeWrite> {
  const name = cached.metadata.name ?? '';
  let current: NodePodProbe | undefined = cacheIsFresh ? cached : undefined;
  let conflicts = 0;
  for (let attempt = 1; ; attempt++) {
    if (!current) {
      try {
        current = await client.get<NodePodProbe>(NODE_POD_PROBES, name);
      } catch (err) {
        if (isNotFound(err)) return { written: false, conflicts };
        throw err;
      }
    }
    const draft = structuredClone(current);
    if (!mutate(draft)) return { object: current, written: false, conflicts };
    try {
      const object = await client.update<NodePodProbe>(NODE_POD_PROBES, draft);
      return { object, written: true, conflicts };
    } catch (err) {
      if (isNotFound(err)) return { written: false, conflicts };
      if (!isConflict(err) || attempt >= ATTEMPTS) throw err;
    }
    conflicts++;
    if (conflicts > 1) await clock.sleep(backoffDelay(CONFLICT_BACKOFF, conflicts - 1));
    current = undefined;
  }
}
