// Custom probes on the real local cluster: the agent runs as a process inside a real node (its network namespace,
// where the node's pods sit on the cni0 bridge, as a hostNetwork DaemonSet pod would), with its ServiceAccount's
// pod-bound token (deploy/'s RBAC and node confinement checked by kube-apiserver). The test writes the node's
// NodePodProbe spec itself (no central controller runs), so the agent side is what is exercised: exec through the
// node's containerd, tcpSocket and httpGet from the agent to the pod's IP, the status it writes, the pod events.
import assert from 'node:assert/strict';
import { NODE_POD_PROBES, type ContainerProbe, type NodePodProbe } from '../../../src/api/nodepodprobe.js';
import type { WirePod } from '../../../src/api/wire.js';
import { CriClient } from '../../../src/cri/client.js';
import { isAlreadyExists, isNotFound } from '../../../src/kube/errors.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { CoreResources } from '../../../src/kube/resource.js';
import type { NodeLayout } from '../../cluster/k8s/layout.js';
import { startSystem, useRealCluster, type RealCluster, type RealSystem } from '../../support/real-cluster.js';
import { deleteTestNamespace, ensureNamespace, waitForDefaultServiceAccount } from '../../support/test-namespace.js';
import { waitFor } from '../../support/wait.js';

const NAMESPACE = 'e2e-podprobe';

describe('custom probes e2e (agent side)', function () {
  this.timeout(240_000);
  let cluster: RealCluster;
  let system: RealSystem | undefined;
  let node: NodeLayout;
  let cri: CriClient | undefined;
  let createdNpp = false;

  before(async () => {
    cluster = await useRealCluster();
    node = cluster.nodes[0]!;
    await deleteTestNamespace(cluster.admin, NAMESPACE, { waitMs: 120_000 });
    await ensureNamespace(cluster.admin, NAMESPACE);
    await waitForDefaultServiceAccount(cluster.admin, NAMESPACE);
    system = await startSystem(cluster, { nodes: [node], controller: false });
    cri = new CriClient({ socket: node.hostPaths.runtimeSocket });
  });

  after(async () => {
    await system?.stop();
    cri?.close();
    if (!cluster) return;
    if (createdNpp) await cluster.admin.delete(NODE_POD_PROBES, node.name).catch(() => undefined);
    else await setSpec([]).catch(() => undefined);
    await deleteTestNamespace(cluster.admin, NAMESPACE);
  });

  async function setSpec(podProbes: NonNullable<NodePodProbe['spec']>['podProbes']): Promise<void> {
    const current = await cluster.admin.get<NodePodProbe>(NODE_POD_PROBES, node.name).catch((err: unknown) => {
      if (isNotFound(err)) return undefined;
      throw err;
    });
    if (!current) {
      await cluster.admin.create<NodePodProbe>(NODE_POD_PROBES, {
        metadata: { name: node.name },
        spec: { podProbes: podProbes ?? [] },
      });
      createdNpp = true;
      return;
    }
    await cluster.admin.update<NodePodProbe>(NODE_POD_PROBES, { ...current, spec: { podProbes: podProbes ?? [] } });
  }

  async function stateOf(probe: string): Promise<{ state?: string; message?: string } | undefined> {
    const npp = await cluster.admin.get<NodePodProbe>(NODE_POD_PROBES, node.name);
    for (const pod of npp.status?.podProbeStatuses ?? []) {
      const found = pod.probeStates?.find((s) => s.name === probe);
      if (found) return found;
    }
    return undefined;
  }

  it('runs exec, tcpSocket and httpGet probes against a pod of its node and reports them', async () => {
    const pod = await cluster.admin
      .create<WirePod & KubeObject>(
        CoreResources.pods,
        {
          metadata: { name: 'web', namespace: NAMESPACE },
          spec: {
            nodeName: node.name,
            terminationGracePeriodSeconds: 0,
            containers: [
              {
                name: 'web',
                image: cluster.images.busybox1,
                command: ['sh', '-c', 'mkdir -p /www && echo hello > /www/index.html && exec httpd -f -p 8080 -h /www'],
              },
            ],
          },
        },
        { namespace: NAMESPACE },
      )
      .catch((err: unknown) => {
        if (isAlreadyExists(err)) throw new Error(`pod web exists in ${NAMESPACE}: a namespace left over?`);
        throw err;
      });
    const running = await waitFor(
      async () => {
        const p = await cluster.admin.get<WirePod & KubeObject>(CoreResources.pods, 'web', { namespace: NAMESPACE });
        return p.status?.podIP && p.status.containerStatuses?.[0]?.state?.running ? p : undefined;
      },
      { timeoutMs: 90_000, message: 'pod web running with an IP' },
    );
    const probes: ContainerProbe[] = [
      { name: 'e2e#exec', containerName: 'web', probe: { exec: { command: ['cat', '/tmp/healthy'] } } },
      { name: 'e2e#tcp', containerName: 'web', probe: { tcpSocket: { port: 8080 } } },
      { name: 'e2e#tcp-closed', containerName: 'web', probe: { tcpSocket: { port: 8081 } } },
      { name: 'e2e#http', containerName: 'web', probe: { httpGet: { port: 8080, path: '/index.html' } } },
    ];
    await setSpec([
      {
        name: 'web',
        namespace: NAMESPACE,
        uid: pod.metadata!.uid!,
        IP: running.status!.podIP!,
        probes: probes.map((p) => ({ ...p, probe: { ...p.probe, periodSeconds: 1, initialDelaySeconds: 1 } })),
      },
    ]);
    await waitFor(async () => (await stateOf('e2e#http'))?.state === 'Succeeded', {
      timeoutMs: 30_000,
      message: 'the http probe succeeds',
    });
    assert.equal((await stateOf('e2e#http'))?.message, 'hello\n');
    // each probe runs on its own phase within the period: the tcp one may report after the http one
    await waitFor(async () => (await stateOf('e2e#tcp'))?.state === 'Succeeded', {
      timeoutMs: 30_000,
      message: 'the tcp probe succeeds',
    });
    const closed = await waitFor(async () => {
      const s = await stateOf('e2e#tcp-closed');
      return s?.state === 'Failed' ? s : undefined;
    });
    assert.match(closed.message ?? '', /ECONNREFUSED/);
    const exec = await waitFor(async () => {
      const s = await stateOf('e2e#exec');
      return s?.state === 'Failed' ? s : undefined;
    });
    assert.match(exec.message ?? '', /No such file/);

    // make the exec probe pass: the file appears in the container
    const id = running.status!.containerStatuses![0]!.containerID!.replace(/^[a-z][a-z0-9+.-]*:\/\//, '');
    await cri!.execSync({ container_id: id, cmd: ['touch', '/tmp/healthy'], timeout: 5 });
    await waitFor(async () => (await stateOf('e2e#exec'))?.state === 'Succeeded', {
      timeoutMs: 30_000,
      message: 'the exec probe succeeds once /tmp/healthy exists',
    });
    const events = await waitFor(async () => {
      const list = await cluster.admin.list<KubeObject & { reason?: string; source?: { component?: string } }>(
        CoreResources.events,
        { namespace: NAMESPACE },
      );
      const reasons = list.items.filter((e) => e.source?.component === 'kruise-daemon-podprobe').map((e) => e.reason);
      return reasons.includes('KruiseProbeSucceeded') && reasons.includes('KruiseProbeFailed') ? reasons : undefined;
    });
    assert.ok(events.length >= 2);

    // a probe removed from the spec leaves the status
    await setSpec([
      {
        name: 'web',
        namespace: NAMESPACE,
        uid: pod.metadata!.uid!,
        IP: running.status!.podIP!,
        probes: [{ ...probes[1]!, probe: { ...probes[1]!.probe, periodSeconds: 1 } }],
      },
    ]);
    await waitFor(async () => (await stateOf('e2e#exec')) === undefined, { message: 'the exec probe gone' });
    assert.equal((await stateOf('e2e#tcp'))?.state, 'Succeeded');
  });
});
