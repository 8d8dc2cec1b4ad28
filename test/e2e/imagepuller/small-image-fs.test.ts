// The disk comes first, on a node whose image filesystem is small: a cluster of its own, one node, the runtime's
// store on a 640 MiB tmpfs (CLUSTER_IMAGE_FS_MIB), its kubelet with the default disk thresholds (image GC at 85%,
// DiskPressure below 15% free) and the agent told the same, a pod running on the node. Two jobs of 90 MiB images fit
// and are pulled and pinned; a third of 150 MiB would take the filesystem past 85%, so the agent stops its pull once
// the manifest tells the size and reports why, in the tag's status and an event. No DiskPressure condition or taint
// appears, the pod is not evicted, the first two images stay. kubelet's own view of the filesystem (its stats
// summary: imagefs) is what is checked.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { IMAGE_PULL_JOBS, type ImagePullJob } from '../../../src/api/imagepulljob.js';
import { CriClient } from '../../../src/cri/client.js';
import { CoreResources } from '../../../src/kube/resource.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { packageRoot } from '../../../src/util/repo-root.js';
import { downCluster } from '../../cluster/components.js';
import type { NodeLayout } from '../../cluster/k8s/layout.js';
import { kubectl } from '../../cluster/k8s/system.js';
import { getNodeImage, waitForJob } from '../controller/controller-env.js';
import { tagStatusOf } from '../../support/nodeimages.js';
import { startRealClusterIn, startSystem, type RealCluster, type RealSystem } from '../../support/real-cluster.js';
import {
  eventsSince,
  freshNamespace,
  nodeRegistryProxy,
  splitReference,
  type NodeRegistryProxy,
} from '../../support/real-images.js';
import { restartKubelet } from '../../support/own-cluster.js';
import { pushUniqueImage } from '../../support/unique-image.js';
import { waitFor } from '../../support/wait.js';

const NS = 'e2e-small-image-fs';
const IMAGE_FS_MIB = 640;
const MiB = 1024 * 1024;

interface ImageFsStats {
  capacityBytes: number;
  availableBytes: number;
  usedBytes?: number;
}

interface PodObject extends KubeObject {
  status?: { phase?: string; reason?: string; containerStatuses?: { restartCount?: number }[] };
}

interface NodeObject extends KubeObject {
  spec?: { taints?: { key: string }[] };
  status?: { conditions?: { type: string; status: string }[] };
}

describe('imagepuller e2e: a node whose image filesystem is small', function () {
  this.timeout(20 * 60_000);
  const dir = join(packageRoot(), '.cluster-small-image-fs');
  let cluster: RealCluster | undefined;
  let system: RealSystem | undefined;
  let registry: NodeRegistryProxy | undefined;
  let node: NodeLayout;
  let cri: CriClient | undefined;

  /** kubelet's view of the node's image filesystem (its stats summary, what its eviction manager reads). */
  function imageFs(): ImageFsStats {
    const result = kubectl(cluster!.layout, ['get', '--raw', `/api/v1/nodes/${node.name}/proxy/stats/summary`]);
    assert.ok(result.ok, result.out);
    const summary = JSON.parse(result.out) as { node?: { runtime?: { imageFs?: ImageFsStats } } };
    const fs = summary.node?.runtime?.imageFs;
    assert.ok(fs, `kubelet's stats summary has no imageFs: ${result.out.slice(0, 300)}`);
    return fs;
  }
  const percent = (fs: ImageFsStats): number => ((fs.capacityBytes - fs.availableBytes) * 100) / fs.capacityBytes;

  function job(name: string, ref: string): ImagePullJob {
    return {
      metadata: { name, namespace: NS },
      spec: {
        image: ref,
        selector: { names: [node.name] },
        pullPolicy: { backoffLimit: 1, timeoutSeconds: 120 },
        completionPolicy: { type: 'Never' },
      },
    };
  }

  before(async () => {
    cluster = await startRealClusterIn(dir, { nodeCount: 1, env: { CLUSTER_IMAGE_FS_MIB: String(IMAGE_FS_MIB) } });
    node = cluster.nodes[0]!;
    cri = new CriClient({ socket: node.hostPaths.runtimeSocket });
    await freshNamespace(cluster.admin, NS);
    registry = await nodeRegistryProxy(cluster);
    // each blob starts 3 s after its request, as from a remote registry: the pulls are not over before the agent's
    // reading (every second) sees their manifests
    registry.proxy.blobDelayMs = 3_000;
    // kubelet with its own defaults for the disk (the test cluster's kubelets wait until the host disk is really
    // full): image GC at 85% / 80%, DiskPressure below 15% of imagefs free; the agent told the same
    const dropIn = join(dir, 'kubelet-disk.d');
    mkdirSync(dropIn, { recursive: true });
    writeFileSync(
      join(dropIn, '50-disk.conf'),
      [
        'apiVersion: kubelet.config.k8s.io/v1beta1',
        'kind: KubeletConfiguration',
        'imageGCHighThresholdPercent: 85',
        'imageGCLowThresholdPercent: 80',
        'evictionHard:',
        '  memory.available: "100Mi"',
        '  nodefs.available: "1%"',
        '  nodefs.inodesFree: "1%"',
        '  imagefs.available: "15%"',
        '',
      ].join('\n'),
    );
    const config = await restartKubelet(cluster, node, [`--config-dir=${dropIn}`]);
    assert.equal(config.imageGCHighThresholdPercent, 85, "kubelet's image GC at 85%");
    assert.equal((config.evictionHard as Record<string, string>)['imagefs.available'], '15%');
    system = await startSystem(cluster, {
      agentArgs: ['--image-gc-high-threshold-percent=85', '--image-gc-low-threshold-percent=80'],
    });
  });

  after(async () => {
    await system?.stop();
    await registry?.close();
    cri?.close();
    await downCluster({ dir, log: () => undefined, purge: true });
  });

  it('pulls what fits, refuses what would cross the GC threshold with why, and no pod is evicted', async () => {
    const admin = cluster!.admin;
    const fs0 = imageFs();
    const capacityMiB = fs0.capacityBytes / MiB;
    assert.ok(Math.abs(capacityMiB - IMAGE_FS_MIB) < IMAGE_FS_MIB * 0.05, `kubelet sees ${capacityMiB} MiB of imagefs`);

    // a pod on the node for the whole test: it must not be evicted
    await admin.create(
      CoreResources.pods,
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'bystander', namespace: NS },
        spec: {
          nodeName: node.name,
          terminationGracePeriodSeconds: 1,
          containers: [{ name: 'c', image: cluster!.images.busybox1, command: ['sleep', '3600'] }],
        },
      },
      { namespace: NS },
    );
    await waitFor(
      async () =>
        (await admin.get<PodObject>(CoreResources.pods, 'bystander', { namespace: NS })).status?.phase === 'Running',
      { timeoutMs: 60_000, message: 'the bystander pod Running' },
    );

    const suffix = randomBytes(3).toString('hex');
    const pushed = [];
    for (const [name, mib] of [
      ['fits-a', 90],
      ['fits-b', 90],
      ['too-big', 150],
    ] as const) {
      const image = await pushUniqueImage(cluster!.registry, `test/${name}-${suffix}`, 'v1', mib * MiB);
      pushed.push({ name, ref: `${image.imageName.replace(cluster!.registry, registry!.proxy.host)}:${image.tag}` });
    }
    const [a, b, big] = pushed as [(typeof pushed)[0], (typeof pushed)[0], (typeof pushed)[0]];

    // one job after the other: each is judged on the filesystem the one before left
    for (const fits of [a, b]) {
      await admin.create(IMAGE_PULL_JOBS, job(fits.name, fits.ref));
      await waitForJob(admin, NS, fits.name, (j) => (j.status?.succeeded ?? 0) === 1, 180_000);
      process.stderr.write(
        `      [disk] ${fits.name} pulled: kubelet's stats summary says imagefs ${percent(imageFs()).toFixed(1)}% full\n`,
      );
    }
    const before = imageFs();
    const since = Date.now();
    await admin.create(IMAGE_PULL_JOBS, job(big.name, big.ref));
    await waitForJob(admin, NS, big.name, (j) => (j.status?.failed ?? 0) === 1, 180_000);
    const { image, tag } = splitReference(big.ref);
    const status = tagStatusOf((await getNodeImage(admin, node.name))!.status!, image, tag);
    process.stderr.write(
      `      [disk] ${big.name} refused ${((Date.now() - since) / 1000).toFixed(1)} s after its job, at ` +
        `${percent(before).toFixed(1)}% full: ${status?.message}\n`,
    );
    assert.equal(status?.phase, 'Failed');
    assert.match(
      status?.message ?? '',
      /^not pulled: its manifest names 150\.\d MiB of layers, and with them unpacked it would add about \d+ MiB to the image filesystem \(\/var\/lib\/containerd[^)]*\), [\d.]+% full now, [\d.]+% after; kubelet's image GC starts at 85%/,
    );
    // the agent judged the filesystem as it was (read afresh while the pull ran): the two images, 2 x 90 MiB fetched
    // and 2 x 90 MiB unpacked, are more than half of it
    const now = Number(/, ([\d.]+)% full now/.exec(status?.message ?? '')?.[1]);
    assert.ok(now >= 50, `the agent's reading when it refused: ${now}% (two 90 MiB images held, unpacked)`);
    await waitFor(
      async () =>
        (await eventsSince(admin, NS, since)).some(
          (e) => e.reason === 'PullImageFailed' && /not pulled: its manifest names/.test(e.message ?? ''),
        ),
      { timeoutMs: 30_000, message: 'a PullImageFailed event on the job, saying why' },
    );

    // nothing crossed: kubelet's view below the threshold, no DiskPressure, the pod not evicted, the images kept
    const after = imageFs();
    assert.ok(percent(after) < 85, `imagefs ${percent(after).toFixed(1)}% full after the refusal`);
    const nodeObject = await admin.get<NodeObject>(CoreResources.nodes, node.name);
    const pressure = nodeObject.status?.conditions?.find((c) => c.type === 'DiskPressure');
    assert.equal(pressure?.status, 'False', 'no DiskPressure');
    assert.ok(!(nodeObject.spec?.taints ?? []).some((t) => t.key === 'node.kubernetes.io/disk-pressure'));
    const pod = await admin.get<PodObject>(CoreResources.pods, 'bystander', { namespace: NS });
    assert.equal(pod.status?.phase, 'Running', `the pod: ${pod.status?.reason ?? ''}`);
    assert.equal(pod.status?.containerStatuses?.[0]?.restartCount ?? 0, 0);
    for (const fits of [a, b]) {
      const found = (await cri!.imageStatus({ image: { image: fits.ref } })).image;
      assert.ok(found, `${fits.name} still on the node`);
      assert.equal(found.pinned, true, `${fits.name} pinned`);
    }
    assert.equal((await cri!.imageStatus({ image: { image: big.ref } })).image, null, 'the refused image is not there');
  });
});
