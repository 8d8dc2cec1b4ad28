// The two writes that mark a pod with probe results, each conditional on the pod as read (its resourceVersion) and
// sent only when it changes something: labels/annotations as a merge patch of metadata (pods: patch), conditions as
// a merge patch of status (pods/status: patch). On a 409 Conflict the pod is read again and the change recomputed
// from it, so a write never undoes someone else's newer one.
import type { WirePod, WirePodCondition } from '../../api/wire.js';
import type { KubeClient } from '../../kube/client.js';
import { isConflict, isNotFound } from '../../kube/errors.js';
import { CoreResources } from '../../kube/resource.js';
import { patchStatus } from '../../kube/status-patch.js';

const ATTEMPTS = 5;

export type MetadataPatch = { labels?: Record<string, string | null>; annotations?: Record<string, string | null> };

export interface PodWrite {
  /** The pod after the write (or as read when nothing was sent); undefined when it is gone. */
  pod?: WirePod;
  written: boolean;
}

/** Merge-patch the metadata `patchOf` asks for (undefined: nothing to do). */
export async function patchPodMetadata(
  client: KubeClient,
  pod: WirePod,
  patchOf: (pod: WirePod) => MetadataPatch | undefined,
): Promise<PodWrite> {
  const name = pod.metadata?.name ?? '';
  const namespace = pod.metadata?.namespace;
  let current = pod;
  for (let attempt = 1; ; attempt++) {
    const patch = patchOf(current);
    if (!patch) return { pod: current, written: false };
    const body = { metadata: { ...patch, resourceVersion: current.metadata?.resourceVersion } };
    try {
      const stored = await client.patch<WirePod>(CoreResources.pods, name, body, { type: 'merge', namespace });
      return { pod: stored, written: true };
    } catch (err) {
      if (isNotFound(err)) return { written: false };
      if (!isConflict(err) || attempt >= ATTEMPTS) throw err;
    }
    try {
      current = await client.get<WirePod>(CoreResources.pods, name, { namespace });
    } catch (err) {
      if (isNotFound(err)) return { written: false };
      throw err;
    }
  }
}

/** Merge-patch the conditions `conditionsOf` returns for the pod (undefined: nothing to do). */
export async function patchPodConditions(
  client: KubeClient,
  pod: WirePod,
  conditionsOf: (pod: WirePod) => WirePodCondition[] | undefined,
): Promise<PodWrite> {
  try {
    const result = await patchStatus(client, CoreResources.pods, pod, (draft) => {
      const conditions = conditionsOf(draft);
      if (conditions) (draft.status ??= {}).conditions = conditions;
    });
    return { pod: result.object, written: result.patched };
  } catch (err) {
    if (isNotFound(err)) return { written: false };
    throw err;
  }
}
