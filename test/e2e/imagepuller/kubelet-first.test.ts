// kubelet's pulls first, on the real cluster: a pre-pull is running (an image of three layers, its last layer held by
// a registry proxy) when a pod comes whose image kubelet must pull. On containerd the agent cancels its running pull
// (it runs under a lease of ours, so what it fetched stays), the tag says it waits for kubelet, kubelet pulls and
// starts the pod, then the pre-pull resumes and Succeeds, with no attempt spent (backoffLimit 0) and every layer
// fetched from the registry once. On a runtime without leases (CRI-O) the running pull goes on.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { IMAGE_PULL_JOBS, type ImagePullJob } from '../../../src/api/imagepulljob.js';
import type { ImageTagStatus } from '../../../src/api/nodeimage.js';
import { CriClient } from '../../../src/cri/client.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { CoreResources } from '../../../src/kube/resource.js';
import type { NodeLayout } from '../../cluster/k8s/layout.js';
import { getNodeImage, waitForJob } from '../controller/controller-env.js';
import { removeImages, tagStatusOf } from '../../support/nodeimages.js';
import { startSystem, useRealCluster, type RealCluster, type RealSystem } from '../../support/real-cluster.js';
import {
  freshNamespace,
  nodeRegistryProxy,
  removeNamespace,
  splitReference,
  type NodeRegistryProxy,
} from '../../support/real-images.js';
import { pushUniqueImage, type UniqueImage } from '../../support/unique-image.js';
import { waitFor } from '../../support/wait.js';

const NS = 'e2e-kubelet-first';
const MiB = 1024 * 1024;

interface PodObject extends KubeObject {
  status?: { phase?: string };
}

describe('imagepuller e2e: kubelet pulls first', function () {
  this.timeout(10 * 60_000);
  let cluster: RealCluster;
  let system: RealSystem;
  let registry: NodeRegistryProxy;
  let node: NodeLayout;
  let cri: CriClient;
  const refs: string[] = [];

  before(async () => {
    cluster = await useRealCluster();
    node = cluster.nodes[0]!;
    cri = new CriClient({ socket: node.hostPaths.runtimeSocket });
    await freshNamespace(cluster.admin, NS);
    registry = await nodeRegistryProxy(cluster);
    system = await startSystem(cluster, { controllerArgs: ['--nodeimage-creation-delay', '1s'] });
    await waitFor(() => getNodeImage(cluster.admin, node.name), { timeoutMs: 60_000, message: 'the NodeImage' });
  });

  after(async () => {
    registry?.proxy.releaseDigests();
    if (cluster) await removeNamespace(cluster.admin, NS);
    await system?.stop();
    await registry?.close();
    if (cri) {
      await removeImages(cri, refs).catch(() => undefined);
      cri.close();
    }
  });

  async function tagStatus(ref: string): Promise<ImageTagStatus | undefined> {
    const { image, tag } = splitReference(ref);
    const status = (await getNodeImage(cluster.admin, node.name))?.status;
    return status ? tagStatusOf(status, image, tag) : undefined;
  }

  it('a running pre-pull pauses while kubelet pulls for a pod, then resumes and fetches each layer once', async () => {
    const resumable = (await cri.version()).runtime_name === 'containerd';
    const suffix = randomBytes(3).toString('hex');
    const pushed: UniqueImage = await pushUniqueImage(cluster.registry, `test/prepull-${suffix}`, 'v1', 4 * MiB, 3);
    const ref = `${pushed.imageName.replace(cluster.registry, registry.proxy.host)}:${pushed.tag}`;
    refs.push(ref);
    const last = pushed.layers[pushed.layers.length - 1]!;
    const firstLayers = pushed.layers.slice(0, -1).reduce((sum, l) => sum + l.size, 0);
    registry.proxy.holdDigests([last.digest]);
    const bytesBefore = registry.proxy.blobBytes();
    const job: ImagePullJob = {
      metadata: { name: 'prepull', namespace: NS },
      spec: {
        image: ref,
        selector: { names: [node.name] },
        pullPolicy: { backoffLimit: 0, timeoutSeconds: 300 },
        completionPolicy: { type: 'Always' },
      },
    };
    await cluster.admin.create(IMAGE_PULL_JOBS, job);
    await waitFor(
      async () =>
        (await tagStatus(ref))?.phase === 'Pulling' && registry.proxy.blobBytes() - bytesBefore >= firstLayers,
      { timeoutMs: 120_000, intervalMs: 200, message: 'the pre-pull running, its first layers fetched' },
    );

    // a pod whose image is on no node: kubelet pulls it now
    const podImage = await pushUniqueImage(cluster.registry, `test/podimage-${suffix}`, 'v1', 2 * MiB);
    refs.push(`${podImage.imageName}:${podImage.tag}`);
    const seen: string[] = [];
    await cluster.admin.create(
      CoreResources.pods,
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'starting', namespace: NS },
        spec: {
          nodeName: node.name,
          terminationGracePeriodSeconds: 0,
          restartPolicy: 'Never',
          containers: [{ name: 'c', image: `${podImage.imageName}:${podImage.tag}`, command: ['/random-0.bin'] }],
        },
      },
      { namespace: NS },
    );
    await waitFor(
      async () => {
        const status = await tagStatus(ref);
        if (status) seen.push(`${status.phase}: ${status.message ?? ''}`);
        const pod = await cluster.admin.get<PodObject>(CoreResources.pods, 'starting', { namespace: NS });
        return pod.status?.phase !== undefined && pod.status.phase !== 'Pending';
      },
      { timeoutMs: 120_000, intervalMs: 100, message: 'the pod past Pending (kubelet pulled its image)' },
    );
    const paused = seen.some((s) =>
      /^Waiting: waiting for kubelet, which is pulling images for pods of this node/.test(s),
    );
    if (resumable) {
      assert.ok(paused, `the pre-pull paused for kubelet, and said so: ${[...new Set(seen)].join(' | ')}`);
    } else {
      assert.ok(!paused, `without leases the running pull goes on: ${[...new Set(seen)].join(' | ')}`);
    }

    registry.proxy.releaseDigests();
    const done = await waitForJob(cluster.admin, NS, 'prepull', (j) => Boolean(j.status?.completionTime), 180_000);
    assert.equal(
      done.status?.succeeded,
      1,
      `the pre-pull succeeded with no attempt spent: ${JSON.stringify(done.status)}`,
    );
    assert.equal((await tagStatus(ref))?.phase, 'Succeeded');
    const total = pushed.layers.reduce((sum, l) => sum + l.size, 0);
    const fetched = registry.proxy.blobBytes() - bytesBefore;
    assert.ok(
      fetched <= total + 64 * 1024,
      `each layer fetched once: ${fetched} bytes of blobs for an image of ${total} bytes of layers`,
    );
  });
});
