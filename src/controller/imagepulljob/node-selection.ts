// Which NodeImages a job targets: `selector.names`, a label selector over NodeImage labels (= Node labels),
// `podSelector` (the nodes of the active pods it matches in the job's namespace), or all NodeImages. From the caches.
import { isPodActive } from '../../api/pod-active.js';
import { labelSelectorMatches } from '../../api/label-selector.js';
import { NAMESPACE_INDEX } from '../../kube/informer/store.js';
import type { Informer } from '../../kube/informer/informer.js';
import type { ImagePullJob } from '../../api/imagepulljob.js';
import type { NodeImage } from '../../api/nodeimage.js';
import type { WirePod } from '../../api/wire.js';

export function selectNodeImages(
  job: ImagePullJob,
  nodeImages: Informer<NodeImage>,
  pods: Informer<WirePod> | undefined,
): NodeImage[] {
  const spec = job.spec ?? {};
  const picked: NodeImage[] = [];
  const add = (name: string): void => {
    const ni = nodeImages.get(name);
    if (ni && !ni.metadata.deletionTimestamp) picked.push(ni);
  };
  if (spec.podSelector) {
    const names = new Set<string>();
    for (const pod of pods?.store.byIndex(NAMESPACE_INDEX, job.metadata.namespace ?? '') ?? []) {
      if (!isPodActive(pod)) continue;
      const node = pod.spec?.nodeName;
      if (node && labelSelectorMatches(spec.podSelector, pod.metadata?.labels ?? {})) names.add(node);
    }
    for (const name of [...names].sort()) add(name);
    return picked;
  }
  if (!spec.selector) {
    return nodeImages.list().filter((ni) => !ni.metadata.deletionTimestamp);
  }
  if (spec.selector.names) {
    for (const name of [...new Set(spec.selector.names)]) add(name);
    return picked;
  }
  return nodeImages
    .list()
    .filter((ni) => !ni.metadata.deletionTimestamp && labelSelectorMatches(spec.selector!, ni.metadata.labels ?? {}));
}

/** Could `nodeImage` be among the job's targets (for event mapping; pods are checked by the pod handler)? */
export function jobMayTarget(job: ImagePullJob, nodeImage: NodeImage): boolean {
  const spec = job.spec ?? {};
  if (spec.podSelector) return true;
  if (!spec.selector) return true;
  if (spec.selector.names) return spec.selector.names.includes(nodeImage.metadata.name ?? '');
  return labelSelectorMatches(spec.selector, nodeImage.metadata.labels ?? {});
}
