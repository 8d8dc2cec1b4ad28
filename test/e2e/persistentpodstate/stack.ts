// What the PersistentPodState e2e tests run on: the real local cluster (useRealCluster: kube-apiserver, the real
// StatefulSet controller and garbage collector, kube-scheduler, two real kubelets whose pods are on kruise-ipam), our
// system on it (startSystem: kruise-controller on the host, its webhooks called by the API server; an agent inside
// each node running IP retention), and one namespace for the file, deleted with everything in it at the end.
import type { KubeClient } from '../../../src/kube/client.js';
import { CoreResources } from '../../../src/kube/resource.js';
import type { NodeLayout } from '../../cluster/k8s/layout.js';
import { startSystem, useRealCluster, type RealCluster, type RealSystem } from '../../support/real-cluster.js';
import { waitFor } from '../../support/wait.js';
import { createNamespace } from '../controller/controller-env.js';
import { getOrUndefined, PERSISTENT_POD_STATES } from './manifests.js';

export interface PpsStack {
  cluster: RealCluster;
  system: RealSystem;
  /** cluster-admin */
  client: KubeClient;
  namespace: string;
  nodes: [NodeLayout, NodeLayout];
  close(): Promise<void>;
}

const NAMESPACE_GONE_TIMEOUT_MS = 120_000;

export async function startPpsStack(options: { namespace: string }): Promise<PpsStack> {
  const cluster = await useRealCluster();
  const client = cluster.admin;
  const [first, second] = cluster.nodes;
  if (!first || !second) throw new Error(`the PPS tests need two nodes, the real cluster has ${cluster.nodes.length}`);
  await createNamespace(client, options.namespace);
  let system: RealSystem | undefined;
  const close = async (): Promise<void> => {
    // the namespace goes first, while the controller still answers its webhooks (failurePolicy Fail)
    await client.delete(CoreResources.namespaces, options.namespace).catch(() => undefined);
    await waitFor(
      async () => (await getOrUndefined(() => client.get(CoreResources.namespaces, options.namespace))) === undefined,
      { timeoutMs: NAMESPACE_GONE_TIMEOUT_MS, intervalMs: 500, message: `namespace ${options.namespace} deleted` },
    ).finally(() => system?.stop());
  };
  try {
    system = await startSystem(cluster);
    await system.controller!.leading(60_000);
    await client.list(PERSISTENT_POD_STATES, { namespace: options.namespace });
    return { cluster, system, client, namespace: options.namespace, nodes: [first, second], close };
  } catch (err) {
    await close();
    throw err;
  }
}
