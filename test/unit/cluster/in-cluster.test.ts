// `npm run dev -- --in-cluster` and startInClusterSystem(): the kustomization written into the cluster directory
// renders deploy/overlays/ip-retention with the cluster's image, dev's NodeImage delay and the webhook client CA
// (deploy/components/webhook-client-ca and its ConfigMap), and nothing else changed;
// dev.env then leaves the agents to the plugin's own lookup (their pods).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { packageRoot } from '../../../src/util/repo-root.js';
import { devEnvFile } from '../../cluster/dev-guide.js';
import { splitImage, writeInClusterKustomization } from '../../cluster/k8s/in-cluster.js';

interface Rendered {
  kind: string;
  metadata: { name: string };
  data?: Record<string, string>;
  spec?: {
    template?: {
      spec?: {
        containers?: { image?: string; args?: string[]; volumeMounts?: { name: string; mountPath: string }[] }[];
        volumes?: { name: string; configMap?: { name: string } }[];
      };
    };
  };
}

function kustomize(dir: string): Rendered[] {
  const result = spawnSync('kubectl', ['kustomize', dir], { encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  return result.stdout
    .split(/^---$/m)
    .map((doc) => load(doc) as Rendered | null)
    .filter((doc): doc is Rendered => doc !== null);
}

describe('the in-cluster install of the local cluster', () => {
  it('splits a registry reference with a port into kustomize name and tag', () => {
    assert.deepEqual(splitImage('10.1.255.1:41701/kruise-daemon:0.1.0-abc'), {
      newName: '10.1.255.1:41701/kruise-daemon',
      newTag: '0.1.0-abc',
    });
    assert.throws(() => splitImage('10.1.255.1:41701/kruise-daemon'), /has no tag/);
  });

  it('renders ip-retention with the image, a 1 s NodeImage delay and the webhook client CA, the rest as deploy/ has it', function () {
    this.timeout(30_000);
    const clusterDir = mkdtempSync(join(tmpdir(), 'kd-in-cluster-'));
    try {
      const image = '10.1.255.1:41701/kruise-daemon:0.1.0-abc';
      const ca = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
      const ours = kustomize(writeInClusterKustomization(clusterDir, image, ca));
      const upstream = kustomize(join(packageRoot(), 'deploy', 'overlays', 'ip-retention'));
      assert.deepEqual(
        ours.map((o) => `${o.kind}/${o.metadata.name}`).sort(),
        [...upstream.map((o) => `${o.kind}/${o.metadata.name}`), 'ConfigMap/kruise-webhook-client-ca'].sort(),
      );
      assert.equal(ours.find((o) => o.kind === 'ConfigMap')?.data?.['ca.crt'], ca);
      const pod = ours.find((o) => o.kind === 'Deployment')?.spec?.template?.spec;
      assert.deepEqual(pod?.volumes?.find((v) => v.name === 'webhook-client-ca')?.configMap, {
        name: 'kruise-webhook-client-ca',
      });
      assert.equal(
        pod?.containers?.[0]?.volumeMounts?.find((m) => m.name === 'webhook-client-ca')?.mountPath,
        '/etc/kruise-webhook-client-ca',
      );
      const workload = (objects: Rendered[], kind: string) => objects.find((o) => o.kind === kind)!;
      for (const kind of ['DaemonSet', 'Deployment']) {
        assert.equal(workload(ours, kind).spec?.template?.spec?.containers?.[0]?.image, image);
      }
      const args = (objects: Rendered[]) => workload(objects, 'Deployment').spec?.template?.spec?.containers?.[0]?.args;
      assert.deepEqual(args(ours), [
        ...(args(upstream) ?? []).map((a) =>
          a.startsWith('--nodeimage-creation-delay=') ? '--nodeimage-creation-delay=1s' : a,
        ),
        '--webhook-client-ca=/etc/kruise-webhook-client-ca/ca.crt',
      ]);
      assert.notDeepEqual(args(ours), args(upstream));
    } finally {
      rmSync(clusterDir, { recursive: true, force: true });
    }
  });

  it('leaves KRUISE_NODE_AGENTS out of dev.env: the plugin finds the agent pods', () => {
    const setup = {
      clusterDir: '/c',
      nodes: ['kd-node-1'],
      agentUrls: new Map([['kd-node-1', 'http://10.1.255.11:10221']]),
      controllerUrl: undefined,
      owner: { pid: 1, script: 'dev.js' },
      pluginEntry: '/p.js',
      nodePath: '/node',
      podIpam: 'kruise-ipam',
      examplesDir: '/e',
      registry: 'r',
      firstNode: 'kd-node-1',
    };
    assert.match(devEnvFile(setup), /KRUISE_NODE_AGENTS/);
    assert.doesNotMatch(devEnvFile({ ...setup, inCluster: true }), /KRUISE_NODE_AGENTS/);
  });
});
