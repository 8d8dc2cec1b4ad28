// Issue 26, local cluster: etcd (no TLS, no authentication) listened on the host's node-network address
// 10.X.255.1:2379, which every node and pod reaches: anyone there could read every Secret and write any object,
// around the API server's authentication, RBAC and admission. Now it listens on the cluster's own loopback address
// 127.X.255.1 only: from a node's network namespace and from a pod, etcd's old address does not answer (connection
// refused) while the API server on the same host address still does.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { KubeObject } from '../../../src/kube/object.js';
import { CoreResources } from '../../../src/kube/resource.js';
import { kubectl } from '../../cluster/k8s/system.js';
import { API_SERVER_PORT, type NodeLayout } from '../../cluster/k8s/layout.js';
import { nodeLauncher, useRealCluster, type RealCluster } from '../../support/real-cluster.js';
import { freshNamespace, removeNamespace } from '../../support/real-images.js';
import { waitFor } from '../../support/wait.js';

const NS = 'e2e-etcd-loopback';

describe('local cluster: etcd only on loopback (issue 26)', function () {
  this.timeout(180_000);
  let cluster: RealCluster;
  let node: NodeLayout;
  let oldEtcd: string;
  let apiServer: string;

  before(async () => {
    cluster = await useRealCluster();
    node = cluster.nodes[0]!;
    oldEtcd = `http://${cluster.layout.hostIp}:2379/health`;
    apiServer = `https://${cluster.layout.hostIp}:${API_SERVER_PORT}/readyz`;
    await freshNamespace(cluster.admin, NS);
  });

  after(async () => {
    if (cluster) await removeNamespace(cluster.admin, NS);
  });

  /** curl inside the node's network namespace: the HTTP code, or 000 with curl's exit code when nothing answered. */
  async function curlFromNode(url: string): Promise<{ code: string; exit: number | null }> {
    const [launcher, ...args] = await nodeLauncher(node);
    const result = spawnSync(
      launcher!,
      [...args, 'curl', '-sk', '-m', '5', '-o', '/dev/null', '-w', '%{http_code}', url],
      {
        encoding: 'utf8',
      },
    );
    return { code: result.stdout, exit: result.status };
  }

  it('etcd answers on its loopback address on the host, and is not on the host address any more', async () => {
    assert.match(cluster.layout.etcdClientUrl, /^http:\/\/127\.\d+\.255\.1:2379$/);
    assert.equal((await fetch(`${cluster.layout.etcdClientUrl}/health`)).status, 200);
    await assert.rejects(fetch(oldEtcd, { signal: AbortSignal.timeout(5_000) }), /fetch failed/);
  });

  it("from a node's network namespace: etcd's old address does not answer, the API server does", async () => {
    const etcd = await curlFromNode(oldEtcd);
    assert.equal(etcd.code, '000', `etcd answered from ${node.name}: ${JSON.stringify(etcd)}`);
    assert.equal(etcd.exit, 7, `curl: connection refused (exit 7), not ${etcd.exit}`);
    // the node's own loopback is not the host's: etcd's new address is not reachable either
    assert.equal((await curlFromNode(`${cluster.layout.etcdClientUrl}/health`)).code, '000');
    assert.equal((await curlFromNode(apiServer)).code, '200');
  });

  it('from a pod: connection refused on etcd, the API server answers', async () => {
    const host = cluster.layout.hostIp;
    // the project's image (Node): the test busybox's static wget and nc crash on name lookup even for an address
    const image = cluster.vars.KRUISE_IMAGE;
    assert.ok(image, 'the cluster env names KRUISE_IMAGE');
    const script = `const net = require('node:net');
const probe = (port) => new Promise((resolve) => {
  const s = net.connect({ host: '${host}', port, timeout: 5000 });
  s.on('connect', () => { s.destroy(); resolve('open'); });
  s.on('timeout', () => { s.destroy(); resolve('timeout'); });
  s.on('error', (e) => resolve(e.code));
});
(async () => console.log('etcd=' + (await probe(2379)) + ' api=' + (await probe(${API_SERVER_PORT}))))();`;
    await cluster.admin.create(CoreResources.pods, {
      metadata: { name: 'prober', namespace: NS },
      spec: {
        nodeName: node.name,
        restartPolicy: 'Never',
        automountServiceAccountToken: false,
        terminationGracePeriodSeconds: 1,
        containers: [{ name: 'c', image, imagePullPolicy: 'IfNotPresent', command: ['node', '-e', script] }],
      },
    } as KubeObject);
    await waitFor(
      async () => {
        const pod = await cluster.admin.get<KubeObject & { status?: { phase?: string } }>(
          CoreResources.pods,
          'prober',
          {
            namespace: NS,
          },
        );
        return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
      },
      { timeoutMs: 150_000, message: 'the prober pod to finish' },
    );
    const logs = kubectl(cluster.layout, ['logs', '-n', NS, 'prober']);
    assert.ok(logs.ok, logs.out);
    assert.equal(logs.out, 'etcd=ECONNREFUSED api=open');
  });
});
