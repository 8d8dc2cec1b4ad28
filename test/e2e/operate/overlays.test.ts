// Every overlay in deploy/overlays renders with the real `kubectl kustomize`, and the real API server accepts every
// rendered object (`kubectl apply --dry-run=server`: admitted, defaulted and validated, nothing stored, so the
// cluster's own objects stay as they are; deploy/'s CRDs and namespaces are installed there already). Plus what each
// overlay promises: the default one is the whole of deploy/ with a PDB that can be honoured; ip-retention mounts what
// --ipam-install writes at the host's own paths and adds no capability; agent-only is the agent alone, renamed, never
// owning OpenKruise's namespaces, only on labelled nodes.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAll, load } from 'js-yaml';
import type { KubeObject } from '../../../src/kube/object.js';
import type { ResourceType } from '../../../src/kube/resource.js';
import { packageRoot } from '../../../src/util/repo-root.js';
import { useRealCluster, type RealCluster } from '../../support/real-cluster.js';

type Manifest = KubeObject & { kind: string; apiVersion: string; metadata: { name: string; namespace?: string } };
type Tree = any;

const OVERLAYS = join(packageRoot(), 'deploy', 'overlays');

function overlayNames(): string[] {
  return readdirSync(OVERLAYS, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(OVERLAYS, d.name, 'kustomization.yaml')))
    .map((d) => d.name)
    .sort();
}

function render(dir: string): Manifest[] {
  const out = execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return (loadAll(out) as Manifest[]).filter((m) => m !== null);
}

function resourceTypeOf(m: Manifest): ResourceType {
  const [group, version] = m.apiVersion.includes('/') ? m.apiVersion.split('/') : ['', m.apiVersion];
  return {
    group: group!,
    version: version!,
    resource: `${m.kind.toLowerCase()}s`,
    namespaced: m.metadata.namespace !== undefined,
    kind: m.kind,
  };
}

function find(manifests: readonly Manifest[], kind: string, name?: string): Tree {
  const m = manifests.find((x) => x.kind === kind && (name === undefined || x.metadata.name === name));
  assert.ok(m, `${kind} ${name ?? ''} in the output`);
  return m;
}

describe('deploy/overlays', function () {
  this.timeout(120_000);
  let cluster: RealCluster;
  let cacheDir: string;

  before(async () => {
    cluster = await useRealCluster();
    cacheDir = mkdtempSync(join(tmpdir(), 'kd-overlay-kubectl-'));
  });

  after(() => rmSync(cacheDir, { recursive: true, force: true }));

  function kubectl(args: string[], input = ''): string {
    const result = spawnSync('kubectl', ['--kubeconfig', cluster.adminKubeconfig, '--cache-dir', cacheDir, ...args], {
      cwd: packageRoot(),
      input,
      encoding: 'utf8',
      timeout: 60_000,
    });
    if (result.status !== 0) throw new Error(`kubectl ${args.join(' ')}: exit ${result.status}: ${result.stderr}`);
    return result.stdout;
  }

  /** `kubectl apply --dry-run=server` of every manifest; each comes back as the API server would store it. */
  function acceptedByTheApiServer(manifests: readonly Manifest[]): void {
    const list = JSON.stringify({ apiVersion: 'v1', kind: 'List', items: manifests });
    const answered = JSON.parse(kubectl(['apply', '--dry-run=server', '-o', 'json', '-f', '-'], list));
    const items: Manifest[] = answered.kind === 'List' ? answered.items : [answered];
    for (const m of manifests) {
      const stored = items.find((x) => x.kind === m.kind && x.metadata.name === m.metadata.name);
      assert.ok(stored, `${m.kind} ${m.metadata.name} accepted`);
      assert.equal(stored.metadata.namespace, m.metadata.namespace, `${m.kind} ${m.metadata.name}: its namespace`);
    }
  }

  it('has the three overlays', () => {
    assert.deepEqual(overlayNames(), ['agent-only', 'default', 'ip-retention']);
  });

  for (const name of ['agent-only', 'default', 'ip-retention']) {
    it(`${name}: renders, and the API server accepts every object`, () => {
      const manifests = render(join(OVERLAYS, name));
      assert.ok(manifests.length > 5, `${manifests.length} objects`);
      acceptedByTheApiServer(manifests);
      if (name === 'default') {
        // opt-in pieces kept beside the overlays, added to the default install by whoever wants them
        for (const file of readdirSync(OVERLAYS).filter((f) => f.endsWith('.yaml'))) {
          const extra = (loadAll(readFileSync(join(OVERLAYS, file), 'utf8')) as Manifest[]).filter((m) => m !== null);
          acceptedByTheApiServer(extra);
          for (const m of extra.filter((x) => x.kind.endsWith('RoleBinding')) as Tree[]) {
            assert.ok(
              manifests.some((x) => x.kind === m.roleRef.kind && x.metadata.name === m.roleRef.name),
              `${file}: ${m.roleRef.kind} ${m.roleRef.name} is in the default install`,
            );
          }
        }
      }
    });
  }

  it('the API server rejects what these kinds get wrong (so acceptance means something)', async () => {
    const broken: Manifest[] = [
      {
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name: 'p', namespace: 'default' },
        spec: { minAvailable: 1, maxUnavailable: 1 },
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'b' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' },
        subjects: [{ kind: 'ServiceAccount', name: 'sa' }],
      },
      {
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { name: 'd', namespace: 'default' },
        spec: {
          selector: { matchLabels: { a: 'b' } },
          template: { metadata: { labels: { a: 'c' } }, spec: { containers: [{ name: 'x', image: 'x' }] } },
        },
      },
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 's', namespace: 'default' },
        spec: { ports: [{ port: 70000 }] },
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'r' },
        rules: [{ apiGroups: [''], resources: ['pods'] }],
      },
    ] as unknown as Manifest[];
    for (const m of broken) {
      await assert.rejects(
        cluster.admin.create(resourceTypeOf(m), m, { namespace: m.metadata.namespace, dryRun: true }),
        /Invalid|Unsupported|Required|forbidden/i,
        `${m.kind} rejected`,
      );
    }
  });

  it('default: everything deploy/kustomization.yaml lists, plus a PDB the controller can honour', () => {
    const root = load(readFileSync(join(packageRoot(), 'deploy', 'kustomization.yaml'), 'utf8')) as Tree;
    const overlay = load(readFileSync(join(OVERLAYS, 'default', 'kustomization.yaml'), 'utf8')) as Tree;
    for (const part of root.resources as string[]) {
      assert.ok((overlay.resources as string[]).includes(`../../${part}`), `default overlay includes ${part}`);
    }
    const manifests = render(join(OVERLAYS, 'default'));
    const whole = render(join(packageRoot(), 'deploy'));
    for (const m of whole) {
      assert.ok(
        manifests.some((x) => x.kind === m.kind && x.metadata.name === m.metadata.name),
        `${m.kind} ${m.metadata.name} in the default overlay`,
      );
    }
    const policy = find(manifests, 'ValidatingAdmissionPolicy', 'kruise-daemon-node-confinement');
    assert.deepEqual(
      policy.spec.matchConditions.map((c: Tree) => c.expression),
      ["request.userInfo.username == 'system:serviceaccount:kruise-system:kruise-daemon'"],
    );
    assert.equal(policy.metadata.namespace, undefined, 'cluster-scoped');
    const ns = find(manifests, 'Namespace', 'kruise-system');
    assert.equal(ns.metadata.labels['pod-security.kubernetes.io/enforce'], 'privileged', 'the agent pods are admitted');
    const pdb = find(manifests, 'PodDisruptionBudget', 'kruise-controller');
    const deployment = find(manifests, 'Deployment', 'kruise-controller');
    for (const [k, v] of Object.entries(pdb.spec.selector.matchLabels as Record<string, string>)) {
      assert.equal(deployment.spec.template.metadata.labels[k], v, `PDB selector ${k} matches the controller pods`);
    }
    assert.ok(pdb.spec.minAvailable >= 1 && pdb.spec.minAvailable < deployment.spec.replicas, 'a drain can proceed');
  });

  it('ip-retention: --ipam-install with its host paths mounted at the same paths, hostPID, no capability added', () => {
    const ds = find(render(join(OVERLAYS, 'ip-retention')), 'DaemonSet', 'kruise-daemon');
    const pod = ds.spec.template.spec;
    const container = pod.containers.find((c: Tree) => c.name === 'daemon');
    const args: string[] = container.args;
    assert.ok(args.includes('--ipam-install'));
    assert.ok(args.includes('--addr=:10221') && args.includes('--host-run-dir=/hostvarrun'), 'base flags kept');
    assert.equal(pod.hostPID, true);
    assert.equal(pod.hostNetwork, true);
    const flag = (name: string): string | undefined =>
      args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
    for (const dir of [flag('cni-bin-dir'), flag('ipam-data-dir')]) {
      assert.ok(dir, 'dir flag given');
      const mount = container.volumeMounts.find((m: Tree) => m.mountPath === dir);
      assert.ok(mount, `${dir} mounted`);
      assert.notEqual(mount.readOnly, true, `${dir} writable`);
      const volume = pod.volumes.find((v: Tree) => v.name === mount.name);
      assert.equal(volume.hostPath.path, dir, `${dir} is the host's own path`);
    }
    assert.deepEqual(container.securityContext.capabilities, { drop: ['ALL'] });
    assert.equal(container.securityContext.privileged, false);
    assert.equal(container.securityContext.allowPrivilegeEscalation, false);
  });

  it("agent-only: docs/compatibility.md's kubectl apply -k ... -l 'app.kubernetes.io/component!=crds' leaves CRDs alone", () => {
    const doc = readFileSync(join(packageRoot(), 'docs', 'compatibility.md'), 'utf8');
    const command = /kubectl (apply -k deploy\/overlays\/agent-only -l '([^']+)')/.exec(doc);
    assert.ok(command, 'docs/compatibility.md gives the command');
    // beside OpenKruise: its namespaces exist already (on this cluster, deploy/'s)
    const out = kubectl(['apply', '--dry-run=server', '-k', 'deploy/overlays/agent-only', '-l', command[2]!]);
    assert.match(out, /daemonset.apps\/kruise-daemon-ts created \(server dry run\)/);
    assert.doesNotMatch(out, /customresourcedefinition/);
  });

  it('agent-only: our agent renamed, no controller, no namespaces, only on labelled nodes', () => {
    const manifests = render(join(OVERLAYS, 'agent-only'));
    const kinds = new Set(manifests.map((m) => m.kind));
    for (const absent of [
      'Namespace',
      'Deployment',
      'MutatingWebhookConfiguration',
      'ValidatingWebhookConfiguration',
    ]) {
      assert.ok(!kinds.has(absent), `no ${absent}`);
    }
    for (const m of manifests.filter((x) => x.kind !== 'CustomResourceDefinition')) {
      assert.match(m.metadata.name, /-ts$/, `${m.kind} ${m.metadata.name} renamed`);
    }
    for (const m of manifests.filter((x) => x.kind === 'CustomResourceDefinition')) {
      assert.equal(m.metadata.labels?.['app.kubernetes.io/component'], 'crds', 'CRDs can be left out with -l');
    }
    const accounts = manifests.filter((m) => m.kind === 'ServiceAccount').map((m) => m.metadata.name);
    for (const b of manifests.filter((m) => m.kind.endsWith('RoleBinding')) as Tree[]) {
      for (const s of b.subjects) assert.ok(accounts.includes(s.name), `${b.metadata.name} binds our account`);
      assert.ok(
        manifests.some((m) => m.kind === b.roleRef.kind && m.metadata.name === b.roleRef.name),
        `${b.metadata.name} refers to our role`,
      );
    }
    const ds = find(manifests, 'DaemonSet');
    assert.equal(ds.spec.template.spec.serviceAccountName, accounts[0]);
    // node confinement (deploy/node-confinement) of our agent's ServiceAccount, not of OpenKruise's kruise-daemon
    // (both policies: kruise-daemon-node-confinement-ts and kruise-daemon-barrier-owner-ts, each with its binding)
    const policies = manifests.filter((m) => m.kind === 'ValidatingAdmissionPolicy') as Tree[];
    assert.deepEqual(policies.map((p) => p.metadata.name).sort(), [
      'kruise-daemon-barrier-owner-ts',
      'kruise-daemon-node-confinement-ts',
    ]);
    for (const policy of policies) {
      assert.deepEqual(
        policy.spec.matchConditions.map((c: Tree) => c.expression),
        [`request.userInfo.username == 'system:serviceaccount:kruise-system:${accounts[0]}'`],
        policy.metadata.name,
      );
    }
    const bindings = manifests.filter((m) => m.kind === 'ValidatingAdmissionPolicyBinding') as Tree[];
    assert.deepEqual(bindings.map((b) => b.spec.policyName).sort(), policies.map((p) => p.metadata.name).sort());
    assert.equal(
      ds.spec.selector.matchLabels['app.kubernetes.io/instance'],
      'kruise-daemon-ts',
      'selects our pods only',
    );
    const terms =
      ds.spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms;
    for (const term of terms) {
      assert.ok(
        term.matchExpressions.some(
          (e: Tree) => e.key === 'kruise-daemon.io/agent' && e.operator === 'In' && e.values.includes('true'),
        ),
        'every node term requires kruise-daemon.io/agent=true',
      );
    }
    const patch = JSON.parse(readFileSync(join(OVERLAYS, 'agent-only', 'openkruise-daemon-affinity.json'), 'utf8'));
    assert.deepEqual(patch[0].value, { key: 'kruise-daemon.io/agent', operator: 'NotIn', values: ['true'] });
  });
});
