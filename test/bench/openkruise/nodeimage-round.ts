// One pull round through the agent of a node: the NodeImage spec emptied and the empty status seen, the images
// removed through CRI, a watch opened, the spec written; the time from that write to the status `done` says.
import type { NodeImageSpec, NodeImageStatus } from '../../../src/api/nodeimage.js';
import type { CriClient } from '../../../src/cri/client.js';
import type { KubeClient } from '../../../src/kube/client.js';
import { removeImages, setNodeImageSpec, waitForStatus, watchStatusUntil } from '../../support/nodeimages.js';

/** The agent has seen the empty spec: nothing desired, no image status left. */
export function emptyStatus(status: NodeImageStatus): boolean {
  return status.desired === 0 && Object.keys(status.imageStatuses ?? {}).length === 0;
}

/** Empty the spec and wait until the agent reports it (before a round, and at the end). */
export async function emptyNodeImage(client: KubeClient, node: string, label: string): Promise<void> {
  await setNodeImageSpec(client, node, { images: {} });
  await waitForStatus(client, node, emptyStatus, { message: `${label}: the empty spec in the status` });
}

/** ms from the spec write to a status that satisfies `done`; `remove` is taken off the node first. */
export async function nodeImageRound(
  client: KubeClient,
  cri: CriClient,
  node: string,
  label: string,
  remove: readonly string[],
  spec: NodeImageSpec,
  done: (status: NodeImageStatus) => boolean,
): Promise<number> {
  await emptyNodeImage(client, node, label);
  await removeImages(cri, remove);
  const seen = await watchStatusUntil(client, node, done);
  const written = performance.now();
  await setNodeImageSpec(client, node, spec);
  await seen.reached;
  return performance.now() - written;
}
