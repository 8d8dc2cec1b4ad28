// kruise-ipam behind the real kubelet: bare pods on one node of the real local cluster (its pods are on the bridge +
// kruise-ipam, containerd passes the pod's annotations), our agent inside that node with --ipam and no controller
// (IP retention needs none). A pod with reserved-ip-duration deleted and recreated under the same name (new UID)
// gets its podIP back; a pod created meanwhile does not; a pod without the annotation frees its address at once; the
// agent counts the reuse and frees a 1-minute reservation on time (its timer). The StatefulSet path (PersistentPodState
// pinning, the IPReused Event, kubelet's late removal of the old sandbox) is test/e2e/persistentpodstate.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { RESERVED_IP_DURATION_ANNOTATION } from '../../../src/cni/config.js';
import { readState, storePaths } from '../../../src/cni/store.js';
import type { WirePod } from '../../../src/api/wire.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { CoreResources } from '../../../src/kube/resource.js';
import { POD_NETWORK_NAME } from '../../cluster/k8s/nodes.js';
import type { NodeLayout } from '../../cluster/k8s/layout.js';
import { getOrUndefined, SLEEP_FOREVER } from '../../e2e/persistentpodstate/manifests.js';
import { startSystem, useRealCluster, type RealCluster, type RealSystem } from '../../support/real-cluster.js';
import { waitFor } from '../../support/wait.js';
import { httpGet } from '../daemon/agent-process.js';
import { deleteTestNamespace, ensureNamespace } from '../../support/test-namespace.js';

type Pod = WirePod & KubeObject;
const NS = 'ipam-pods';
const WAIT_MS = 120_000;
/** A 1-minute reservation ends 60 s after the DEL; the agent's timer frees it then. */
const EXPIRY_WAIT_MS = 150_000;
/** Reservations outlive the namespace: names of this run only, so a re-run within 10 minutes starts clean. */
const RUN = Date.now().toString(36);

describe('kruise-ipam behind the real kubelet: a recreated pod keeps its IP', function () {
  this.timeout(20 * 60_000); // the first run on a machine builds Kubernetes
  let cluster: RealCluster;
  let node: NodeLayout;
  let system: RealSystem | undefined;

  before(async function () {
    cluster = await useRealCluster();
    node = cluster.nodes[0]!;
    await ensureNamespace(cluster.admin, NS);
    system = await startSystem(cluster, { nodes: [node], controller: false });
  });

  after(async function () {
    if (cluster) await deleteTestNamespace(cluster.admin, NS, { waitMs: WAIT_MS }).finally(() => system?.stop());
  });

  const store = () => readState(storePaths(join(node.hostPaths.cniStateDir, 'kruise-ipam'), POD_NETWORK_NAME));

  async function metric(name: string): Promise<number> {
    const body = (await httpGet(`${system!.agents.get(node.name)!.url}/metrics`)).body;
    const line = new RegExp(`^${name}\\{network="${POD_NETWORK_NAME}"\\} (\\d+)$`, 'm').exec(body);
    return Number(line?.[1] ?? 0);
  }

  async function runPod(name: string, minutes?: string): Promise<{ uid: string; ip: string }> {
    const pod: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name,
        namespace: NS,
        ...(minutes ? { annotations: { [RESERVED_IP_DURATION_ANNOTATION]: minutes } } : {}),
      },
      spec: {
        nodeName: node.name,
        terminationGracePeriodSeconds: 1,
        containers: [{ name: 'app', image: cluster.images.busybox1, command: SLEEP_FOREVER }],
      },
    };
    const created = await cluster.admin.create<Pod>(CoreResources.pods, pod, { namespace: NS });
    const running = await waitFor(
      async () => {
        const p = await cluster.admin.get<Pod>(CoreResources.pods, name, { namespace: NS });
        const ready = p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
        return p.metadata?.uid === created.metadata?.uid && ready && p.status?.podIP ? p : undefined;
      },
      { timeoutMs: WAIT_MS, intervalMs: 500, message: `${name} Running and Ready with an IP` },
    );
    return { uid: running.metadata!.uid!, ip: running.status!.podIP! };
  }

  async function deletePod(name: string): Promise<void> {
    await cluster.admin.delete(CoreResources.pods, name, { namespace: NS });
    await waitFor(
      async () =>
        (await getOrUndefined(() => cluster.admin.get<Pod>(CoreResources.pods, name, { namespace: NS }))) === undefined,
      { timeoutMs: WAIT_MS, intervalMs: 500, message: `${name} gone` },
    );
  }

  it('gives the recreated pod (new UID) its IP back, a pod without the annotation a fresh one, and frees it on expiry', async function () {
    const reusedBefore = await metric('kruise_daemon_ipam_reservations_reused_total');
    const expiredBefore = await metric('kruise_daemon_ipam_reservations_expired_total');

    // a 1-minute reservation, left to expire while the rest runs
    const brief = await runPod(`ipam-brief-${RUN}`, '1');
    await deletePod(`ipam-brief-${RUN}`);
    const briefEntry = store().entries[brief.ip];
    assert.equal(briefEntry?.kind, 'reserved', JSON.stringify(briefEntry));
    assert.equal(briefEntry.expiresAt - briefEntry.releasedAt, 60_000, 'one minute');

    const first = await runPod(`ipam-web-${RUN}`, '10');
    await deletePod(`ipam-web-${RUN}`);
    const reserved = store().entries[first.ip];
    assert.equal(reserved?.kind, 'reserved', JSON.stringify(reserved));
    assert.equal(reserved.expiresAt - reserved.releasedAt, 600_000, 'ten minutes');

    const other = await runPod(`ipam-other-${RUN}`);
    assert.notEqual(other.ip, first.ip, 'a pod created meanwhile does not get the reserved IP');
    assert.notEqual(other.ip, brief.ip, 'nor the other reservation');
    const second = await runPod(`ipam-web-${RUN}`, '10');
    assert.notEqual(second.uid, first.uid);
    assert.equal(second.ip, first.ip, 'the recreated pod has its IP back');
    const held = store().entries[first.ip];
    assert.equal(held?.kind, 'held', JSON.stringify(held));
    assert.equal(held.pod?.uid, second.uid);
    await waitFor(async () => (await metric('kruise_daemon_ipam_reservations_reused_total')) === reusedBefore + 1, {
      timeoutMs: 30_000,
      message: 'the agent to count the reuse',
    });

    await deletePod(`ipam-other-${RUN}`);
    await deletePod(`ipam-web-${RUN}`);
    const entries = store().entries;
    assert.equal(entries[other.ip], undefined, 'without the annotation the IP is freed at once');
    assert.equal(entries[first.ip]?.kind, 'reserved', 'with it, the IP is kept again');

    // the 1-minute reservation ends on time (the agent's timer, or a plugin call after it is due) and the agent counts it
    await waitFor(async () => (await metric('kruise_daemon_ipam_reservations_expired_total')) === expiredBefore + 1, {
      timeoutMs: EXPIRY_WAIT_MS,
      intervalMs: 1000,
      message: 'the agent to expire the 1-minute reservation',
    });
    assert.equal(store().entries[brief.ip], undefined, 'the expired address is free');
    assert.equal(store().entries[first.ip]?.kind, 'reserved', 'the 10-minute one stays');
  });
});
