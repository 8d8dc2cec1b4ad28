// What the OpenKruise benches that work on one node start with: OpenKruise's build (made first if missing, its
// progress on the bench's log), the real cluster (REAL_CLUSTER_DIR), its first node, the admin client, and a CRI
// client on that node's containerd, closed when the suite ends.
import { CriClient } from '../../../src/cri/client.js';
import type { KubeClient } from '../../../src/kube/client.js';
import type { NodeLayout } from '../../cluster/k8s/layout.js';
import { openKruiseBuild, type OpenKruiseBuild } from '../../cluster/openkruise/openkruise.js';
import { useRealCluster, type RealCluster } from '../../support/real-cluster.js';
import type { BenchContext } from '../framework.js';

export interface FirstNode {
  build: OpenKruiseBuild;
  cluster: RealCluster;
  node: NodeLayout;
  client: KubeClient;
  cri: CriClient;
}

export async function openKruiseOnFirstNode(context: BenchContext): Promise<FirstNode> {
  const build = await openKruiseBuild(context.log);
  context.log('the real cluster (REAL_CLUSTER_DIR)');
  const cluster = await useRealCluster();
  const node = cluster.nodes[0];
  if (!node) throw new Error('the real cluster has no node');
  const cri = new CriClient({ socket: node.hostPaths.runtimeSocket });
  context.defer(() => cri.close());
  return { build, cluster, node, client: cluster.admin, cri };
}
