// The real local Kubernetes cluster (test/cluster/k8s): real kubelets of the pinned version Ready, pods placed by
// kube-scheduler on both nodes reaching each other and the API server through the `kubernetes` Service, the
// kruise-daemon image pulled from its registry by every node, the usual paths inside a node, and deploy/'s RBAC
// enforced by the real API server on the agent's and the controller's ServiceAccount tokens.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { stackOf, stackVersions } from '../../cluster/stack.js';
import { clusterStatus } from '../../cluster/components.js';
import { CoreResources } from '../../../src/kube/resource.js';
import type { KubeObject } from '../../../src/kube/object.js';
import type { WirePod } from '../../../src/api/wire.js';
import { nodeLauncher, useRealCluster, type RealCluster } from '../../support/real-cluster.js';
import { waitFor } from '../../support/wait.js';

type Pod = WirePod & KubeObject;
const NAMESPACE = 'real-cluster-test';

function kubectl(kubeconfig: string, args: string[]): { status: number | null; out: string; stdout: string } {
  const result = spawnSync('kubectl', args, {
    env: { ...process.env, KUBECONFIG: kubeconfig },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: result.status, out: `${result.stdout}${result.stderr}`.trim(), stdout: result.stdout.trim() };
}

describe('real cluster', function () {
  this.timeout(20 * 60_000); // the first run on a machine builds Kubernetes (about 8 minutes)
  let cluster: RealCluster;

  before(async () => {
    cluster = await useRealCluster();
    kubectl(cluster.adminKubeconfig, ['create', 'namespace', NAMESPACE]);
  });
  after(() => {
    if (cluster) kubectl(cluster.adminKubeconfig, ['delete', 'namespace', NAMESPACE, '--wait=false']);
  });

  it('has real kubelets of the pinned version, every node Ready', async () => {
    const nodes = await cluster.admin.list<
      KubeObject & {
        status?: {
          nodeInfo?: { kubeletVersion?: string; containerRuntimeVersion?: string };
          conditions?: { type: string; status: string }[];
        };
      }
    >(CoreResources.nodes);
    assert.deepEqual(
      nodes.items.map((n) => n.metadata?.name).sort(),
      cluster.nodes.map((n) => n.name),
    );
    const stack = stackOf(cluster.dir);
    const versions = stackVersions(stack);
    for (const node of nodes.items) {
      assert.equal(node.status?.nodeInfo?.kubeletVersion, versions.kubernetes);
      // the runtime kubelet reports: cri-o://1.36.1, containerd://v2.4.2 (Debian's: containerd://1.6.20)
      const runtimeVersion = node.status?.nodeInfo?.containerRuntimeVersion ?? '';
      assert.ok(
        runtimeVersion.startsWith(stack.runtime === 'cri-o' ? 'cri-o://' : 'containerd://') &&
          (versions.runtime === 'debian' || runtimeVersion.includes(versions.runtime.replace(/^v/, ''))),
        `${node.metadata?.name} runs ${stack.runtime} ${versions.runtime}: ${runtimeVersion}`,
      );
      assert.ok(
        node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
        `${node.metadata?.name} Ready`,
      );
    }
    const statuses = await clusterStatus({ dir: cluster.dir, log: () => undefined });
    assert.deepEqual(
      statuses.filter((s) => !s.healthy),
      [],
      'every component healthy',
    );
  });

  it('schedules pods on both nodes; they reach each other and the API server through its Service', async () => {
    const names = ['spread-a', 'spread-b'];
    for (const name of names) {
      await cluster.admin.create<Pod>(
        CoreResources.pods,
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name, namespace: NAMESPACE, labels: { app: 'spread' } },
          spec: {
            terminationGracePeriodSeconds: 1,
            affinity: {
              podAntiAffinity: {
                requiredDuringSchedulingIgnoredDuringExecution: [
                  { labelSelector: { matchLabels: { app: 'spread' } }, topologyKey: 'kubernetes.io/hostname' },
                ],
              },
            },
            containers: [{ name: 'c', image: cluster.images.busybox1, command: ['sleep', '3600'] }],
          },
        },
        { namespace: NAMESPACE },
      );
    }
    const pods = await waitFor(
      async () => {
        const list = await cluster.admin.list<Pod>(CoreResources.pods, {
          namespace: NAMESPACE,
          labelSelector: 'app=spread',
        });
        const running = list.items.filter((p) => p.status?.phase === 'Running' && p.status.podIP);
        return running.length === 2 ? running : undefined;
      },
      { timeoutMs: 90_000, message: 'two spread pods running' },
    );
    assert.deepEqual(
      pods.map((p) => p.spec?.nodeName).sort(),
      cluster.nodes.map((n) => n.name),
      'one per node',
    );
    const [a, b] = pods;
    const ping = kubectl(cluster.adminKubeconfig, [
      'exec',
      '-n',
      NAMESPACE,
      a!.metadata!.name!,
      '--',
      'ping',
      '-c',
      '1',
      '-W',
      '5',
      b!.status!.podIP!,
    ]);
    assert.equal(ping.status, 0, ping.out);
    // The API server through the kubernetes Service, from a pod on a's node. Not with busybox's wget: kube-apiserver
    // 1.37 (built as upstream builds it, `godebug default=go1.26`) refuses TLS 1.2 handshakes signed with SHA-1, the
    // only signature Debian's busybox 1.35 offers ("alert code 40: handshake failure"); Node in our image speaks TLS 1.3.
    const script =
      "const token = require('fs').readFileSync('/var/run/secrets/kubernetes.io/serviceaccount/token', 'utf8');" +
      'fetch(`https://${process.env.KUBERNETES_SERVICE_HOST}:${process.env.KUBERNETES_SERVICE_PORT}/api`, ' +
      '{ headers: { authorization: `Bearer ${token}` } }).then((r) => r.text()).then((t) => console.log(t), ' +
      '(e) => { console.error(String(e.cause ?? e)); process.exit(1); });';
    await cluster.admin.create<Pod>(
      CoreResources.pods,
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'spread-api', namespace: NAMESPACE },
        spec: {
          nodeName: a!.spec!.nodeName!,
          restartPolicy: 'Never',
          containers: [
            {
              name: 'c',
              image: cluster.vars.KRUISE_IMAGE!,
              command: ['node', '-e', script],
              env: [{ name: 'NODE_TLS_REJECT_UNAUTHORIZED', value: '0' }],
            },
          ],
        },
      },
      { namespace: NAMESPACE },
    );
    const phase = await waitFor(
      async () => {
        const pod = await cluster.admin.get<Pod>(CoreResources.pods, 'spread-api', { namespace: NAMESPACE });
        const p = pod.status?.phase;
        return p === 'Succeeded' || p === 'Failed' ? p : undefined;
      },
      { timeoutMs: 90_000, message: 'the API check pod to finish' },
    );
    const api = kubectl(cluster.adminKubeconfig, ['logs', '-n', NAMESPACE, 'spread-api']);
    assert.equal(phase, 'Succeeded', api.out);
    assert.match(api.stdout, /"kind": ?"APIVersions"/);
  });

  it('has the kruise-daemon image in its registry: every node pulls it and runs its commands', async () => {
    const image = cluster.vars.KRUISE_IMAGE;
    assert.match(image ?? '', /\/kruise-daemon:\d+\.\d+\.\d+-[0-9a-f]{12}$/, 'KRUISE_IMAGE in the env file');
    const names = cluster.nodes.map((node) => `image-${node.name}`);
    for (const [i, node] of cluster.nodes.entries()) {
      await cluster.admin.create<Pod>(
        CoreResources.pods,
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: names[i]!, namespace: NAMESPACE },
          spec: {
            nodeName: node.name,
            restartPolicy: 'Never',
            containers: [{ name: 'c', image: image!, command: ['kruise-controller'], args: ['--help'] }],
          },
        },
        { namespace: NAMESPACE },
      );
    }
    for (const name of names) {
      const phase = await waitFor(
        async () => {
          const pod = await cluster.admin.get<Pod>(CoreResources.pods, name, { namespace: NAMESPACE });
          const now = pod.status?.phase;
          return (now === 'Succeeded' || now === 'Failed') && now;
        },
        { timeoutMs: 120_000, message: `${name} to finish` },
      );
      const logs = kubectl(cluster.adminKubeconfig, ['logs', '-n', NAMESPACE, name]);
      assert.equal(phase, 'Succeeded', logs.out);
      assert.match(logs.stdout, /^Usage: kruise-controller/m);
    }
  });

  it('gives each node the usual paths in its own mount namespace', async () => {
    const node = cluster.nodes[0]!;
    const launcher = await nodeLauncher(node);
    const check = spawnSync(
      launcher[0]!,
      [
        ...launcher.slice(1),
        'sh',
        '-c',
        `test -S ${node.inNode.runtimeSocket} && test -d /var/lib/kubelet/pods && ls /etc/cni/net.d && ls /opt/cni/bin`,
      ],
      { encoding: 'utf8' },
    );
    assert.equal(check.status, 0, check.stderr);
    assert.match(check.stdout, /10-kd-pods\.conflist/);
    assert.match(check.stdout, /kruise-ipam/);
    assert.match(check.stdout, /bridge/);
  });

  it("enforces deploy/'s RBAC on the agent's and the controller's tokens", () => {
    const can = (kubeconfig: string, ...args: string[]): string =>
      kubectl(kubeconfig, ['auth', 'can-i', ...args])
        .stdout.split('\n')
        .find((line) => line === 'yes' || line === 'no') ?? 'no answer';
    for (const kubeconfig of [cluster.agentKubeconfig, cluster.controllerKubeconfig]) {
      assert.equal(can(kubeconfig, 'get', 'secrets', '-n', 'default'), 'no');
      assert.equal(can(kubeconfig, 'list', 'secrets', '--all-namespaces'), 'no');
      assert.equal(can(kubeconfig, 'watch', 'secrets', '-n', NAMESPACE), 'no');
      assert.equal(can(kubeconfig, 'create', 'pods', '-n', 'default'), 'no');
    }
    // the pull-secret copies: the controller reads them; the agent reads no secret at all (it asks the controller,
    // docs/adr/0007), only the controller's CA beside them
    assert.equal(can(cluster.controllerKubeconfig, 'get', 'secrets', '-n', 'kruise-daemon-config'), 'yes');
    assert.equal(can(cluster.agentKubeconfig, 'get', 'secrets', '-n', 'kruise-daemon-config'), 'no');
    assert.equal(
      can(cluster.agentKubeconfig, 'get', 'configmaps/kruise-controller-ca', '-n', 'kruise-daemon-config'),
      'yes',
    );
    assert.equal(can(cluster.agentKubeconfig, 'get', 'configmaps', '-n', 'default'), 'no');
    assert.equal(can(cluster.agentKubeconfig, 'list', 'nodeimages.apps.kruise.io'), 'yes');
    assert.equal(can(cluster.agentKubeconfig, 'create', 'nodeimages.apps.kruise.io'), 'no');
    assert.equal(can(cluster.controllerKubeconfig, 'create', 'nodeimages.apps.kruise.io'), 'yes');
    // the API server itself refuses, not only can-i
    const denied = kubectl(cluster.agentKubeconfig, ['get', 'secrets', '-n', 'default']);
    assert.notEqual(denied.status, 0);
    assert.match(
      denied.out,
      /forbidden: User "system:serviceaccount:kruise-system:kruise-daemon" cannot list resource "secrets"/,
    );
  });
});
