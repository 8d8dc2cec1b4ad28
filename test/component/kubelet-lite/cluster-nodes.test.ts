// The cluster's own kubelet-lite (started by `up` after the API emulator): its nodes are in NODE_NAMES, Ready, with a
// lease, and a pod bound to NODE_NAME runs and is deleted gracefully.
import assert from 'node:assert/strict';
import { CriClient } from '../../../src/cri/index.js';
import { CoreResources, KubeClient, loadConnection } from '../../../src/kube/index.js';
import { useCluster, type ClusterEnv } from '../../support/cluster.js';
import { waitFor } from '../../support/wait.js';
import { uniqueSuffix } from './kubelet-process.js';
import {
  container,
  createPod,
  getPod,
  isRunningAndReady,
  NAMESPACE,
  podManifest,
  sandboxesOf,
  waitForPod,
} from './pods.js';

describe("kubelet-lite: the local cluster's own nodes", function () {
  this.timeout(120_000);
  let cluster: ClusterEnv;
  let kube: KubeClient;
  let cri: CriClient;

  before(async () => {
    cluster = await useCluster();
    kube = new KubeClient(await loadConnection({ kubeconfig: cluster.vars.KUBECONFIG }));
    cri = new CriClient({ socket: cluster.runtimeSocket });
  });

  after(() => {
    cri?.close();
    kube?.close();
  });

  it('lists NODE_COUNT nodes in NODE_NAMES, each Ready with a lease held by itself', async () => {
    const names = (cluster.vars.NODE_NAMES ?? '').split(',');
    assert.equal(names.length, cluster.nodeCount);
    assert.equal(names[0], cluster.vars.NODE_NAME);
    for (const node of names) {
      const obj = (await kube.get(CoreResources.nodes, node)) as unknown as {
        status: {
          conditions: { type: string; status: string; reason: string }[];
          nodeInfo: { kubeletVersion: string };
        };
      };
      const ready = obj.status.conditions.find((c) => c.type === 'Ready');
      assert.equal(ready?.status, 'True');
      assert.equal(ready?.reason, 'KubeletReady');
      assert.match(obj.status.nodeInfo.kubeletVersion, /kubelet-lite/);
      const lease = (await kube.get(CoreResources.leases, node, { namespace: 'kube-node-lease' })) as unknown as {
        spec: { holderIdentity: string };
      };
      assert.equal(lease.spec.holderIdentity, node);
    }
  });

  it('runs a pod bound to NODE_NAME and removes it on a graceful delete', async () => {
    const pod = podManifest(`cluster-node-${uniqueSuffix()}`, cluster.vars.NODE_NAME!, [
      container('app', cluster.images.busybox1),
    ]);
    const created = await createPod(kube, pod);
    await waitForPod(kube, pod.metadata.name, isRunningAndReady, 'Running and Ready');
    await kube.delete(CoreResources.pods, pod.metadata.name, { namespace: NAMESPACE });
    await waitFor(async () => (await getPod(kube, pod.metadata.name)) === undefined, {
      timeoutMs: 60_000,
      message: 'the pod to be removed',
    });
    assert.equal((await sandboxesOf(cri, created.metadata.uid)).length, 0);
  });
});
