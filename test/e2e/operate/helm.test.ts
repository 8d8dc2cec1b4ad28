// deploy/chart against the real local cluster's API server, without installing anything: `helm install
// --dry-run=server` (helm reads the server's API versions and OpenAPI schema, validates every rendered object
// against it and checks each for an owner, but creates nothing; the CRDs in crds/ are skipped on a dry run) and
// `kubectl apply --dry-run=server` of the chart's rendering with non-default values (admitted, defaulted and
// validated by the API server, nothing stored). The cluster holds deploy/'s namespaces, ServiceAccounts and RBAC,
// applied by kubectl: helm must refuse to adopt them unless told to (--take-ownership).
// Every case runs with helm 3 and helm 4. A real install, upgrade and uninstall, on a cluster of its own:
// helm-install.test.ts.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import { packageRoot } from '../../../src/util/repo-root.js';
import { CHART_DIR, HELM_MAJORS, useHelm, type Helm } from '../../support/helm.js';
import { useRealCluster, type RealCluster } from '../../support/real-cluster.js';

type Tree = any;
interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  [field: string]: Tree;
}

const parse = (text: string): Manifest[] =>
  (loadAll(text) as (Manifest | null)[]).filter((m): m is Manifest => m !== null);
const keyOf = (m: Manifest): string => `${m.kind} ${m.metadata.namespace ?? '-'}/${m.metadata.name}`;

/** Values that change every part of the chart a value can reach. */
const NON_DEFAULT = [
  'featureGates=IPRetention=true',
  'manager.image.repository=registry.example.com/kruise-daemon',
  'manager.image.tag=0.1.0',
  'manager.replicas=3',
  'manager.log.level=debug',
  'manager.nodeSelector.kubernetes\\.io/os=linux',
  'manager.tolerations[0].key=node-role.kubernetes.io/control-plane',
  'manager.tolerations[0].effect=NoSchedule',
  'daemon.extraEnvs[0].name=HTTPS_PROXY',
  'daemon.extraEnvs[0].value=http://proxy:3128',
  'daemon.nodeSelector.kubernetes\\.io/os=linux',
  'daemon.tolerations[0].operator=Exists',
  'daemon.tolerations[0].effect=NoExecute',
  'daemon.resources.limits.memory=192Mi',
  'daemon.socketFile=containerd/containerd.sock',
  'daemon.port=10300',
  'imagePullSecrets[0].name=my-registry',
].flatMap((s) => ['--set', s]);

for (const major of HELM_MAJORS) {
  describe(`deploy/chart on the real cluster (helm ${major}: dry runs)`, function () {
    this.timeout(600_000);
    let cluster: RealCluster;
    let helm: Helm;
    let kubectlCache: string;

    before(async () => {
      helm = await useHelm(major);
      cluster = await useRealCluster();
      kubectlCache = mkdtempSync(join(tmpdir(), 'kd-helm-kubectl-'));
    });

    after(() => {
      helm?.close();
      if (kubectlCache) rmSync(kubectlCache, { recursive: true, force: true });
    });

    function installDryRun(extra: string[]): { code: number | null; out: string; err: string } {
      return helm.run(
        [
          'install',
          'kruise-daemon',
          CHART_DIR,
          '--kubeconfig',
          cluster.adminKubeconfig,
          '--namespace',
          'default',
          '--dry-run=server',
          ...extra,
        ],
        120_000,
      );
    }

    it('helm refuses to adopt the objects kubectl applied (install stops, naming one)', () => {
      const { code, err } = installDryRun([]);
      assert.notEqual(code, 0, 'the install is refused');
      assert.match(err, /exists and cannot be imported into the current release: invalid ownership metadata/);
    });

    for (const [what, values] of [
      ['default values', []],
      ['every value changed', NON_DEFAULT],
    ] as const) {
      it(`helm install --dry-run=server --take-ownership, ${what}: validated by the server, as helm template renders it`, () => {
        const { code, out, err } = installDryRun(['--take-ownership', '-o', 'json', ...values]);
        assert.equal(code, 0, `helm install --dry-run=server: ${err}`);
        const release = JSON.parse(out) as { info: { status: string }; manifest: string };
        assert.equal(release.info.status, 'pending-install', 'nothing installed');
        const rendered = helm.run(['template', 'kruise-daemon', CHART_DIR, ...values]);
        assert.equal(rendered.code, 0, rendered.err);
        // the cluster's capabilities change nothing in the chart's rendering
        assert.deepEqual(
          parse(release.manifest).map(keyOf).sort(),
          parse(rendered.out).map(keyOf).sort(),
          'the same objects',
        );
        assert.deepEqual(parse(release.manifest), parse(rendered.out));
      });
    }

    it('the API server admits every object the chart renders with every value changed (kubectl apply --dry-run=server)', () => {
      const rendered = helm.run(['template', 'kruise-daemon', CHART_DIR, '--include-crds', ...NON_DEFAULT]);
      assert.equal(rendered.code, 0, rendered.err);
      const manifests = parse(rendered.out);
      const list = JSON.stringify({ apiVersion: 'v1', kind: 'List', items: manifests });
      const result = spawnSync(
        'kubectl',
        [
          '--kubeconfig',
          cluster.adminKubeconfig,
          '--cache-dir',
          kubectlCache,
          'apply',
          '--dry-run=server',
          '-o',
          'json',
          '-f',
          '-',
        ],
        { cwd: packageRoot(), input: list, encoding: 'utf8', timeout: 60_000 },
      );
      assert.equal(result.status, 0, `kubectl apply --dry-run=server: ${result.stderr}`);
      const answered = JSON.parse(result.stdout) as { items: Manifest[] };
      assert.deepEqual(answered.items.map(keyOf).sort(), manifests.map(keyOf).sort(), 'every object accepted');
      const ds = answered.items.find((m) => m.kind === 'DaemonSet')!;
      assert.equal(ds.spec.template.spec.hostPID, true, 'IPRetention reached the stored DaemonSet');
      assert.equal(ds.spec.template.spec.containers[0].resources.limits.memory, '192Mi');
    });
  });
}
