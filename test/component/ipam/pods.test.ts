// kruise-ipam behind kubelet-lite: real pods through the API emulator and kubelet-lite on containerd. A pod with
// reserved-ip-duration deleted and recreated under the same name (new UID) gets the same podIP, and the agent's
// controller records an IPReused Event on it in the API.
import assert from 'node:assert/strict';
import { RESERVED_IP_DURATION_ANNOTATION } from '../../../src/cni/config.js';
import { connectRuntime, type CriClient } from '../../../src/cri/index.js';
import { CoreResources, EventRecorder, KubeClient, loadConnection } from '../../../src/kube/index.js';
import { IpReservationController, REASON_IP_REUSED } from '../../../src/daemon/ipreservation/controller.js';
import { ipamMetrics } from '../../../src/daemon/ipreservation/metrics.js';
import { podEvents } from '../../../src/daemon/ipreservation/module.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { createRegistry } from '../../../src/observability/metrics.js';
import { systemClock } from '../../../src/util/clock.js';
import { useCluster, type ClusterEnv } from '../../support/cluster.js';
import { waitFor } from '../../support/wait.js';
import { uniqueSuffix } from '../kubelet-lite/kubelet-process.js';
import {
  container,
  createPod,
  getPod,
  isRunningAndReady,
  NAMESPACE,
  podManifest,
  waitForPod,
} from '../kubelet-lite/pods.js';
import { readState, storePaths } from '../../../src/cni/store.js';
import { installTestPlugin, rangeOf, removeTestConflist, Sandboxes, useNetwork, type TestNetwork } from './network.js';

describe('kruise-ipam behind kubelet-lite: a recreated pod keeps its IP', function () {
  let cluster: ClusterEnv;
  let kube: KubeClient;
  let cri: CriClient;
  let recorder: EventRecorder;
  let controller: IpReservationController;
  let net: TestNetwork;

  before(async function () {
    cluster = await useCluster();
    kube = new KubeClient(await loadConnection({ kubeconfig: cluster.vars.KUBECONFIG }));
    cri = await connectRuntime({ socket: cluster.runtimeSocket, env: {} });
    installTestPlugin(cluster);
    net = await useNetwork(cluster, new Sandboxes(cri, cluster), 'kipam-pods', rangeOf(cluster, 0xcc00, 32));
    recorder = new EventRecorder(kube, { component: 'kruise-daemon', host: cluster.vars.NODE_NAME });
    controller = new IpReservationController({
      dataDir: net.dataDir,
      clock: systemClock,
      logger: silentLogger,
      metrics: ipamMetrics(createRegistry()),
      runtime: () => Promise.resolve(cri),
      events: podEvents(recorder),
      gcIntervalMs: 3_600_000,
      gcGraceMs: 120_000,
    });
    controller.start();
  });

  after(async function () {
    await controller?.stop();
    await recorder?.close();
    if (cluster) removeTestConflist(cluster);
    cri?.close();
    kube?.close();
  });

  async function runPod(name: string, annotations?: Record<string, string>): Promise<{ uid: string; ip: string }> {
    const pod = podManifest(
      name,
      cluster.vars.NODE_NAME!,
      [container('app', cluster.images.busybox1)],
      {},
      annotations,
    );
    const created = await createPod(kube, pod);
    const running = await waitForPod(kube, name, isRunningAndReady, 'Running and Ready');
    return { uid: created.metadata.uid!, ip: running.status?.podIP ?? '' };
  }

  async function deletePod(name: string): Promise<void> {
    await kube.delete(CoreResources.pods, name, { namespace: NAMESPACE });
    await waitFor(async () => (await getPod(kube, name)) === undefined, { timeoutMs: 60_000, message: `${name} gone` });
  }

  it('gives the recreated pod (new UID) its IP back and a pod without the annotation a fresh one', async function () {
    const name = `ipam-web-${uniqueSuffix()}`;
    const first = await runPod(name, { [RESERVED_IP_DURATION_ANNOTATION]: '10' });
    assert.ok(first.ip, 'the pod has an IP');
    await deletePod(name);
    const otherName = `ipam-other-${uniqueSuffix()}`;
    const other = await runPod(otherName);
    assert.notEqual(other.ip, first.ip, 'a pod created meanwhile does not get the reserved IP');
    const second = await runPod(name, { [RESERVED_IP_DURATION_ANNOTATION]: '10' });
    assert.notEqual(second.uid, first.uid);
    assert.equal(second.ip, first.ip);
    const event = await waitFor(
      async () => {
        const list = (await kube.list(CoreResources.events, { namespace: NAMESPACE })) as unknown as {
          items: Array<{ reason: string; involvedObject: { name: string; uid?: string } }>;
        };
        return list.items.find((e) => e.reason === REASON_IP_REUSED && e.involvedObject.name === name);
      },
      { message: 'the IPReused event in the API' },
    );
    assert.equal(event.involvedObject.uid, second.uid);
    await deletePod(otherName);
    await deletePod(name);
    const entries = readState(storePaths(net.dataDir, net.name)).entries;
    assert.equal(entries[other.ip], undefined, 'without the annotation the IP is freed at once');
    assert.equal(entries[first.ip]?.kind, 'reserved', 'with it, the IP is kept again');
  });
});
