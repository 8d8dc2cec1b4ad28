// Pre-pulled images that stay, and a status that tells the truth, on the real cluster (agents and controller as
// processes in the nodes, the nodes' own runtime and kubelet):
// - an image whose tag is in the NodeImage and Succeeded, removed from the node behind the agent's back, is noticed
//   and pulled again within seconds (every runtime);
// - kubelet with imageMaximumGCAge 1m (KEP-4210) and imageMinimumGCAge 10s, restarted on both nodes: at its next
//   image GC (5 min after its start; kubelet's GC period is fixed) an unused image nobody pinned is removed, the
//   image of an active job stays and stays pinned (CRI Image.pinned), the image of a job deleted by its TTL was
//   unpinned within a minute and is removed, and the sandbox image's own pin is untouched. On a runtime that cannot
//   pin (CRI-O, containerd 1.6) the GC removes the pre-pulled image and the agent pulls it again.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { IMAGE_PULL_JOBS, type ImagePullJob } from '../../../src/api/imagepulljob.js';
import { CriClient } from '../../../src/cri/client.js';
import { pinStoreFor } from '../../../src/daemon/imagepuller/runtime-stores.js';
import type { NodeLayout } from '../../cluster/k8s/layout.js';
import { getNodeImage, waitForJob } from '../controller/controller-env.js';
import { agentCounter, removeImages, tagStatusOf } from '../../support/nodeimages.js';
import { restartKubelet } from '../../support/own-cluster.js';
import { startSystem, useRealCluster, type RealCluster, type RealSystem } from '../../support/real-cluster.js';
import { freshNamespace, removeNamespace, splitReference } from '../../support/real-images.js';
import { waitFor } from '../../support/wait.js';

const NS = 'e2e-image-pins';
/** kubelet's image GC period (a constant in kubelet, not configurable). */
const KUBELET_IMAGE_GC_PERIOD_MS = 5 * 60_000;

describe('imagepuller e2e: pins against kubelet image GC, and images removed behind our back', function () {
  this.timeout(15 * 60_000);
  let cluster: RealCluster;
  let system: RealSystem;
  let nodeA: NodeLayout;
  let nodeB: NodeLayout;
  const cri = new Map<string, CriClient>();
  const restarted: NodeLayout[] = [];

  const criOf = (node: NodeLayout): CriClient => {
    let client = cri.get(node.name);
    if (!client) {
      client = new CriClient({ socket: node.hostPaths.runtimeSocket });
      cri.set(node.name, client);
    }
    return client;
  };
  const imageOn = async (node: NodeLayout, ref: string) =>
    (await criOf(node).imageStatus({ image: { image: ref } })).image;

  function job(name: string, ref: string, node: NodeLayout, ttlSecondsAfterFinished?: number): ImagePullJob {
    return {
      metadata: { name, namespace: NS },
      spec: {
        image: ref,
        selector: { names: [node.name] },
        pullPolicy: { backoffLimit: 1, timeoutSeconds: 60 },
        completionPolicy:
          ttlSecondsAfterFinished === undefined ? { type: 'Never' } : { type: 'Always', ttlSecondsAfterFinished },
      },
    };
  }

  async function tagSucceeded(node: NodeLayout, ref: string): Promise<boolean> {
    const { image, tag } = splitReference(ref);
    const status = (await getNodeImage(cluster.admin, node.name))?.status;
    return status !== undefined && tagStatusOf(status, image, tag)?.phase === 'Succeeded';
  }

  before(async () => {
    cluster = await useRealCluster();
    [nodeA, nodeB] = cluster.nodes as [NodeLayout, NodeLayout];
    await freshNamespace(cluster.admin, NS);
    system = await startSystem(cluster);
  });

  after(async () => {
    if (cluster) await removeNamespace(cluster.admin, NS);
    await system?.stop();
    // the kubelets as the cluster runs them
    for (const node of restarted) await restartKubelet(cluster, node, []);
    for (const client of cri.values()) client.close();
  });

  it('an image removed from the node while its tag is Succeeded is pulled again within seconds, and said so', async () => {
    const ref = cluster.images.busybox1;
    await cluster.admin.create(IMAGE_PULL_JOBS, job('stays-truthful', ref, nodeA));
    await waitFor(() => tagSucceeded(nodeA, ref), { timeoutMs: 60_000, message: `${ref} Succeeded on ${nodeA.name}` });
    const base = system.agents.get(nodeA.name)!.url;
    const removedBefore = await agentCounter(base, 'kruise_daemon_image_removed_total');
    const t0 = Date.now();
    await removeImages(criOf(nodeA), [ref]);
    await waitFor(async () => (await imageOn(nodeA, ref)) !== null, {
      timeoutMs: 30_000,
      message: `${ref} back on ${nodeA.name}`,
    });
    const seconds = (Date.now() - t0) / 1000;
    process.stderr.write(`      [truth] ${ref} removed by hand: back on the node after ${seconds.toFixed(1)} s\n`);
    assert.ok(seconds < 15, `noticed and pulled again in ${seconds} s (check every 5 s)`);
    assert.equal((await agentCounter(base, 'kruise_daemon_image_removed_total')) - removedBefore, 1);
    await waitFor(() => tagSucceeded(nodeA, ref), { timeoutMs: 30_000, message: 'Succeeded again' });
    const { image, tag } = splitReference(ref);
    const status = tagStatusOf((await getNodeImage(cluster.admin, nodeA.name))!.status!, image, tag);
    assert.match(status?.message ?? '', /pulled again: the image had been removed from the node/);
    await cluster.admin.delete(IMAGE_PULL_JOBS, 'stays-truthful', { namespace: NS });
    await waitFor(async () => (await getNodeImage(cluster.admin, nodeA.name))?.spec?.images?.[image] === undefined, {
      timeoutMs: 60_000,
      message: `the deleted job's tag left ${nodeA.name}'s NodeImage`,
    });
  });

  it("kubelet's GC by age (imageMaximumGCAge 1m) removes what nobody pinned and keeps what an active job pulled", async () => {
    const kept = cluster.images.busybox2;
    const control = cluster.images.busybox1;
    const sandbox = cluster.vars.SANDBOX_IMAGE ?? '';
    const store = await pinStoreFor(criOf(nodeA));
    const canPin = !('unsupported' in store);
    if (!('unsupported' in store)) store.close?.();
    for (const node of [nodeA, nodeB]) await removeImages(criOf(node), [kept, control]);

    // kubelet on both nodes with a maximum image age of a minute; its GC runs at its start and every 5 minutes
    const dropIn = join(cluster.dir, 'kubelet-gc-age.d');
    mkdirSync(dropIn, { recursive: true });
    writeFileSync(
      join(dropIn, '50-gc-age.conf'),
      'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nimageMinimumGCAge: 10s\nimageMaximumGCAge: 1m\n',
    );
    const restartedAt = Date.now();
    for (const node of [nodeA, nodeB]) {
      restarted.push(node);
      const config = await restartKubelet(cluster, node, [`--config-dir=${dropIn}`]);
      assert.equal(config.imageMaximumGCAge, '1m0s', `${node.name}'s kubelet runs with imageMaximumGCAge 1m`);
    }

    // node A: a job that stays (Never), node B: a job deleted 5 s after it completes (its tag leaves the NodeImage)
    await cluster.admin.create(IMAGE_PULL_JOBS, job('stays', kept, nodeA));
    await cluster.admin.create(IMAGE_PULL_JOBS, job('goes', kept, nodeB, 5));
    await waitFor(() => tagSucceeded(nodeA, kept), { timeoutMs: 60_000, message: `${kept} Succeeded on A` });
    // an image nobody pinned, on both nodes: the proof that kubelet's GC ran
    for (const node of [nodeA, nodeB]) await criOf(node).pullImage({ image: { image: control } });
    if (canPin) {
      // the pin follows the Succeeded status, and CRI learns it from containerd's image events: a moment later
      await waitFor(async () => (await imageOn(nodeA, kept))?.pinned === true, {
        message: `${kept} pinned on A (CRI ImageStatus, what kubelet reads)`,
      });
      assert.equal((await imageOn(nodeA, control))?.pinned, false);
    }
    await waitForJob(cluster.admin, NS, 'goes', (j) => Boolean(j.status?.completionTime), 60_000);
    await waitFor(
      async () => {
        try {
          await cluster.admin.get(IMAGE_PULL_JOBS, 'goes', { namespace: NS });
          return false;
        } catch {
          return true;
        }
      },
      { timeoutMs: 60_000, message: 'job goes deleted by its TTL' },
    );
    if (canPin) {
      await waitFor(async () => (await imageOn(nodeB, kept))?.pinned === false, {
        timeoutMs: 60_000,
        message: `${kept} unpinned on B within 60 s of its tag leaving`,
      });
    }
    const unpinnedAt = Date.now();
    process.stderr.write(
      `      [pins] job deleted; B's pin released ${((unpinnedAt - restartedAt) / 1000).toFixed(0)} s after the kubelet restart\n`,
    );

    // kubelet's next GC: 5 minutes after its start
    await waitFor(async () => (await imageOn(nodeA, control)) === null, {
      timeoutMs: KUBELET_IMAGE_GC_PERIOD_MS + 3 * 60_000,
      intervalMs: 2_000,
      message: `kubelet's GC by age removed ${control} (pinned by nobody) from A`,
    });
    const gcSeconds = (Date.now() - restartedAt) / 1000;
    process.stderr.write(`      [pins] kubelet's image GC ran ${gcSeconds.toFixed(0)} s after its restart\n`);
    await waitFor(async () => (await imageOn(nodeB, control)) === null, {
      timeoutMs: 60_000,
      intervalMs: 1_000,
      message: `kubelet's GC removed ${control} from B`,
    });
    if (sandbox !== '') assert.equal((await imageOn(nodeA, sandbox))?.pinned, true, "the sandbox image's pin stays");
    assert.equal(await imageOn(nodeB, kept), null, `B's image, unpinned when its tag left, removed by the GC`);
    if (canPin) {
      const onA = await imageOn(nodeA, kept);
      assert.ok(onA, `${kept} still on A after kubelet's GC by age`);
      assert.equal(onA.pinned, true);
      assert.equal(await tagSucceeded(nodeA, kept), true);
    } else {
      // the GC took it; the agent saw it go and pulled it again, and the status says so
      await waitFor(async () => (await imageOn(nodeA, kept)) !== null && (await tagSucceeded(nodeA, kept)), {
        timeoutMs: 30_000,
        message: `${kept} pulled again on A after the GC (a runtime without pins)`,
      });
    }
  });
});
