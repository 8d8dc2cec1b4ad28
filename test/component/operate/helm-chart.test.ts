// deploy/chart, with the real helm 3 and helm 4 (built from helm.sh/helm/v3 and /v4 by test/cluster/k8s/build.sh on
// first use; every case runs with each): `helm lint` passes, and `helm template` with default values renders exactly
// the objects of `kubectl kustomize deploy/overlays/default` (CRDs from the chart's crds/ included). The only normalisation is the objects' order
// (both sides are parsed, so YAML formatting and comments do not count): no label, field or list item is dropped
// or reordered. A change to deploy/ that the chart lacks (or the reverse) fails here, naming the object.
// featureGates IPRetention renders what deploy/overlays/ip-retention renders; each value lands where it should and
// nowhere else (the default objects, changed by hand as the value says, equal the chart's rendering with it).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { createCa } from '../../../src/controller/admission/certs.js';
import { load, loadAll } from 'js-yaml';
import { packageRoot } from '../../../src/util/repo-root.js';
import { CHART_DIR as CHART, HELM_MAJORS, useHelm, type Helm } from '../../support/helm.js';

type Tree = any;
interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: Tree;
}

const OVERLAYS = join(packageRoot(), 'deploy', 'overlays');

function parse(text: string): Manifest[] {
  return (loadAll(text) as (Manifest | null)[]).filter((m): m is Manifest => m !== null);
}

const keyOf = (m: Manifest): string => `${m.kind} ${m.metadata.namespace ?? '-'}/${m.metadata.name}`;

function kustomize(overlay: string): Manifest[] {
  return parse(execFileSync('kubectl', ['kustomize', join(OVERLAYS, overlay)], { encoding: 'utf8' }));
}

/** Same objects (by kind, namespace and name), each deep-equal; a mismatch names the object and shows the diff. */
function assertSameObjects(actual: readonly Manifest[], expected: readonly Manifest[], what: string): void {
  const byKey = (list: readonly Manifest[]): Map<string, Manifest> => {
    const map = new Map<string, Manifest>();
    for (const m of list) {
      assert.ok(!map.has(keyOf(m)), `${what}: ${keyOf(m)} twice`);
      map.set(keyOf(m), m);
    }
    return map;
  };
  const got = byKey(actual);
  const want = byKey(expected);
  assert.deepEqual([...got.keys()].sort(), [...want.keys()].sort(), `${what}: the same objects`);
  for (const [key, m] of want) assert.deepEqual(got.get(key), m, `${what}: ${key}`);
}

function webhookClientCaPem(): string {
  return createCa(Date.now()).certPem;
}

function find(manifests: readonly Manifest[], kind: string, name: string): Tree {
  const m = manifests.find((x) => x.kind === kind && x.metadata.name === name);
  assert.ok(m, `${kind} ${name} rendered`);
  return m;
}

for (const major of HELM_MAJORS) {
  describe(`deploy/chart (helm ${major}: helm lint, helm template)`, function () {
    // the first run builds helm (about 2 minutes on 2 cores); later ones find it in the cache
    this.timeout(600_000);
    let helm: Helm;

    before(async () => {
      helm = await useHelm(major);
    });

    after(() => helm?.close());

    function runHelm(args: string[]): [number | null, string, string] {
      const { code, out, err } = helm.run(args);
      return [code, out, err];
    }

    function template(...sets: string[]): Manifest[] {
      const args = ['template', 'kruise-daemon', CHART, '--include-crds'];
      for (const s of sets) args.push('--set', s);
      const [code, out, err] = runHelm(args);
      assert.equal(code, 0, `helm ${args.join(' ')}: ${err}`);
      return parse(out);
    }

    function templateFails(...sets: string[]): string {
      const args = ['template', 'kruise-daemon', CHART];
      for (const s of sets) args.push('--set', s);
      const [code, , err] = runHelm(args);
      assert.notEqual(code, 0, `helm ${args.join(' ')} fails`);
      return err;
    }

    it('helm lint --strict passes, with default values and with IP retention', () => {
      for (const extra of [[], ['--set', 'featureGates=IPRetention=true']]) {
        const [code, out, err] = runHelm(['lint', '--strict', CHART, ...extra]);
        assert.equal(code, 0, `helm lint ${extra.join(' ')}:\n${out}${err}`);
        assert.match(out, /1 chart\(s\) linted, 0 chart\(s\) failed/);
        assert.doesNotMatch(out, /\[(ERROR|WARNING)\]/);
      }
    });

    it('default values: exactly the objects of kubectl kustomize deploy/overlays/default', () => {
      assertSameObjects(template(), kustomize('default'), 'chart vs deploy/overlays/default');
    });

    it('the CRDs are in crds/ only: helm installs them first and helm uninstall leaves them', () => {
      const [code, out, err] = runHelm(['template', 'kruise-daemon', CHART]);
      assert.equal(code, 0, err);
      const templated = parse(out);
      assert.ok(templated.length > 20, `${templated.length} objects from templates/`);
      assert.deepEqual(
        templated.filter((m) => m.kind === 'CustomResourceDefinition').map(keyOf),
        [],
        'no CRD in templates/',
      );
      const crds = template().filter((m) => m.kind === 'CustomResourceDefinition');
      assert.deepEqual(crds.map((m) => m.metadata.name).sort(), [
        'containerrecreaterequests.apps.kruise.io',
        'imagelistpulljobs.apps.kruise.io',
        'imagepulljobs.apps.kruise.io',
        'nodeimages.apps.kruise.io',
        'nodepodprobes.apps.kruise.io',
        'persistentpodstates.apps.kruise.io',
        'podprobemarkers.apps.kruise.io',
      ]);
    });

    it('featureGates IPRetention=true: what kubectl kustomize deploy/overlays/ip-retention renders', () => {
      // kustomize's strategic merge puts a patch's items first in lists merged by name (volumes, volumeMounts);
      // their order means nothing to Kubernetes, so those two lists are compared sorted by name
      const byName = (a: { name: string }, b: { name: string }): number => a.name.localeCompare(b.name);
      const sortMounts = (manifests: Manifest[]): Manifest[] => {
        for (const m of manifests.filter((x) => x.kind === 'DaemonSet')) {
          const pod = m.spec.template.spec;
          pod.volumes?.sort(byName);
          for (const c of pod.containers) c.volumeMounts?.sort(byName);
        }
        return manifests;
      };
      assertSameObjects(
        sortMounts(template('featureGates=IPRetention=true')),
        sortMounts(kustomize('ip-retention')),
        'chart with IPRetention=true vs deploy/overlays/ip-retention',
      );
      assertSameObjects(template('featureGates=IPRetention=false'), kustomize('default'), 'IPRetention=false');
    });

    it('featureGates PodProbeMarkerGate: on by default (no flag); false turns the custom probes off', () => {
      const argsOf = (manifests: Manifest[]): string[] =>
        find(manifests, 'DaemonSet', 'kruise-daemon').spec.template.spec.containers[0].args;
      assert.ok(!argsOf(template('featureGates=PodProbeMarkerGate=true')).some((a) => a.startsWith('--pod-probe')));
      assert.ok(argsOf(template('featureGates=PodProbeMarkerGate=false')).includes('--pod-probe=false'));
    });

    it('featureGates: an unknown gate or a value other than true/false fails, naming it', () => {
      assert.match(
        templateFails('featureGates=IPRetension=true'),
        /unknown gate "IPRetension" \(known: IPRetention, PodProbeMarkerGate\)/,
      );
      assert.match(templateFails('featureGates=IPRetention=yes'), /IPRetention=yes: the value must be true or false/);
    });

    it('values.schema.json: a misspelled value or a wrong type fails instead of being ignored', () => {
      assert.match(
        templateFails('daemon.extraEnv[0].name=A'),
        /at '\/daemon': additional properties 'extraEnv' not allowed/,
      );
      assert.match(templateFails('manager.log.level=verbose'), /at '\/manager\/log\/level': value must be one of/);
      assert.match(templateFails('manager.replicas=two'), /at '\/manager\/replicas': got string, want integer/);
      assert.match(templateFails('daemon.socketLocation=var/run'), /at '\/daemon\/socketLocation'/);
    });

    it('each value lands where it should, and nowhere else', () => {
      const cases: { sets: string[]; change: (objects: Manifest[]) => void }[] = [
        {
          sets: ['manager.image.repository=registry.example.com/kd', 'manager.image.tag=0.1.0'],
          change: (o) => {
            for (const [kind, name] of [
              ['DaemonSet', 'kruise-daemon'],
              ['Deployment', 'kruise-controller'],
            ] as const) {
              find(o, kind, name).spec.template.spec.containers[0].image = 'registry.example.com/kd:0.1.0';
            }
          },
        },
        {
          sets: [
            'daemon.resources.requests.cpu=50m',
            'daemon.resources.limits.memory=256Mi',
            'manager.resources.limits.cpu=1',
          ],
          change: (o) => {
            const agent = find(o, 'DaemonSet', 'kruise-daemon').spec.template.spec.containers[0].resources;
            agent.requests.cpu = '50m';
            agent.limits.memory = '256Mi';
            find(o, 'Deployment', 'kruise-controller').spec.template.spec.containers[0].resources.limits.cpu = 1;
          },
        },
        {
          sets: [
            'daemon.extraEnvs[0].name=HTTPS_PROXY',
            'daemon.extraEnvs[0].value=http://proxy:3128',
            'daemon.extraEnvs[1].name=NO_PROXY',
            'daemon.extraEnvs[1].value=.svc',
          ],
          change: (o) => {
            find(o, 'DaemonSet', 'kruise-daemon').spec.template.spec.containers[0].env.push(
              { name: 'HTTPS_PROXY', value: 'http://proxy:3128' },
              { name: 'NO_PROXY', value: '.svc' },
            );
          },
        },
        {
          sets: [
            'daemon.nodeSelector.kubernetes\\.io/os=linux',
            'manager.nodeSelector.node-role\\.kubernetes\\.io/control-plane=',
            'daemon.tolerations[0].key=dedicated',
            'daemon.tolerations[0].operator=Exists',
            'manager.tolerations[0].key=node-role.kubernetes.io/control-plane',
            'manager.tolerations[0].effect=NoSchedule',
          ],
          change: (o) => {
            const agent = find(o, 'DaemonSet', 'kruise-daemon').spec.template.spec;
            agent.nodeSelector = { 'kubernetes.io/os': 'linux' };
            agent.tolerations = [{ key: 'dedicated', operator: 'Exists' }];
            const controller = find(o, 'Deployment', 'kruise-controller').spec.template.spec;
            controller.nodeSelector = { 'node-role.kubernetes.io/control-plane': '' };
            controller.tolerations = [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }];
          },
        },
        {
          sets: ['daemon.log.level=debug', 'manager.log.level=warn'],
          change: (o) => {
            const env = (kind: string, name: string): Tree[] =>
              find(o, kind, name).spec.template.spec.containers[0].env;
            env('DaemonSet', 'kruise-daemon').find((e) => e.name === 'LOG_LEVEL').value = 'debug';
            env('Deployment', 'kruise-controller').find((e) => e.name === 'LOG_LEVEL').value = 'warn';
          },
        },
        {
          sets: ['imagePullSecrets[0].name=my-registry'],
          change: (o) => {
            find(o, 'DaemonSet', 'kruise-daemon').spec.template.spec.imagePullSecrets = [{ name: 'my-registry' }];
            find(o, 'Deployment', 'kruise-controller').spec.template.spec.imagePullSecrets = [{ name: 'my-registry' }];
          },
        },
        {
          // one replica: nothing for a PodDisruptionBudget to keep (minAvailable 1 would block every drain)
          sets: ['manager.replicas=1'],
          change: (o) => {
            find(o, 'Deployment', 'kruise-controller').spec.replicas = 1;
            o.splice(o.indexOf(find(o, 'PodDisruptionBudget', 'kruise-controller')), 1);
          },
        },
        {
          sets: ['manager.replicas=3'],
          change: (o) => {
            find(o, 'Deployment', 'kruise-controller').spec.replicas = 3;
          },
        },
        {
          sets: ['daemon.socketLocation=/run/k3s', 'daemon.socketFile=containerd/containerd.sock', 'daemon.port=10300'],
          change: (o) => {
            const pod = find(o, 'DaemonSet', 'kruise-daemon').spec.template.spec;
            pod.volumes.find((v: Tree) => v.name === 'host-var-run').hostPath.path = '/run/k3s';
            const c = pod.containers[0];
            c.args = [
              '--addr=:10300',
              '--host-run-dir=/hostvarrun',
              '--image-fs-root=/host',
              '--image-gc-high-threshold-percent=85',
              '--image-gc-low-threshold-percent=80',
              '--runtime-socket=/hostvarrun/containerd/containerd.sock',
            ];
            c.ports[0].containerPort = 10300;
            c.livenessProbe.httpGet.port = 10300;
            c.readinessProbe.httpGet.port = 10300;
          },
        },
        {
          // CRI-O keeps its images in /var/lib/containers
          sets: ['daemon.imageFsPath=/var/lib/containers'],
          change: (o) => {
            const pod = find(o, 'DaemonSet', 'kruise-daemon').spec.template.spec;
            pod.volumes.find((v: Tree) => v.name === 'host-image-fs').hostPath.path = '/var/lib/containers';
            pod.containers[0].volumeMounts.find((m: Tree) => m.name === 'host-image-fs').mountPath =
              '/host/var/lib/containers';
          },
        },
        {
          // kubelets with GC thresholds of their own
          sets: ['daemon.imageGC.highThresholdPercent=90', 'daemon.imageGC.lowThresholdPercent=75'],
          change: (o) => {
            const c = find(o, 'DaemonSet', 'kruise-daemon').spec.template.spec.containers[0];
            c.args = c.args.map((a: string) =>
              a.startsWith('--image-gc-high-')
                ? '--image-gc-high-threshold-percent=90'
                : a.startsWith('--image-gc-low-')
                  ? '--image-gc-low-threshold-percent=75'
                  : a,
            );
          },
        },
        {
          // no image filesystem mounted: no flag, no mount, no volume (the disk check is off)
          sets: ['daemon.imageFsPath='],
          change: (o) => {
            const pod = find(o, 'DaemonSet', 'kruise-daemon').spec.template.spec;
            pod.volumes = pod.volumes.filter((v: Tree) => v.name !== 'host-image-fs');
            const c = pod.containers[0];
            c.volumeMounts = c.volumeMounts.filter((m: Tree) => m.name !== 'host-image-fs');
            c.args = c.args.filter((a: string) => a !== '--image-fs-root=/host');
          },
        },
        {
          // the namespaces exist already (helm install --create-namespace, or made by hand)
          sets: ['installation.createNamespace=false'],
          change: (o) => {
            for (const ns of o.filter((m) => m.kind === 'Namespace')) o.splice(o.indexOf(ns), 1);
          },
        },
      ];
      for (const { sets, change } of cases) {
        const expected = kustomize('default');
        change(expected);
        assertSameObjects(template(...sets), expected, `--set ${sets.join(' --set ')}`);
      }
    });

    it('webhook.clientCA renders what deploy/components/webhook-client-ca with its ConfigMap renders', () => {
      const ca = webhookClientCaPem();
      const dir = mkdtempSync(join(tmpdir(), 'kd-webhook-client-ca-'));
      try {
        writeFileSync(join(dir, 'ca.crt'), ca);
        writeFileSync(
          join(dir, 'kustomization.yaml'),
          `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [${relative(dir, join(OVERLAYS, 'default'))}]
components: [${relative(dir, join(packageRoot(), 'deploy', 'components', 'webhook-client-ca'))}]
configMapGenerator:
  - name: kruise-webhook-client-ca
    namespace: kruise-system
    files: [ca.crt]
    options: {disableNameSuffixHash: true}
`,
        );
        const expected = parse(execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8' }));
        const args = [
          'template',
          'kruise-daemon',
          CHART,
          '--include-crds',
          '--set-file',
          `webhook.clientCA=${join(dir, 'ca.crt')}`,
        ];
        const [code, out, err] = runHelm(args);
        assert.equal(code, 0, err);
        assertSameObjects(parse(out), expected, 'webhook.clientCA vs the component');
        const names = find(
          template(
            'webhook.clientCA=-----BEGIN CERTIFICATE-----x',
            'webhook.clientNames[0]=kube-apiserver-webhook-client',
          ),
          'Deployment',
          'kruise-controller',
        ).spec.template.spec.containers[0].args as string[];
        assert.ok(names.includes('--webhook-client-names=kube-apiserver-webhook-client'), names.join(' '));
        assert.match(templateFails('webhook.clientCA=not a certificate'), /at '\/webhook\/clientCA'/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it("the agent's runtime socket: the flag names a file inside the mounted socketLocation", () => {
      const pod = find(template('daemon.socketFile=crio/crio.sock'), 'DaemonSet', 'kruise-daemon').spec.template.spec;
      const [container] = pod.containers;
      const mount = container.volumeMounts.find((m: Tree) => m.name === 'host-var-run');
      assert.ok(container.args.includes(`--runtime-socket=${mount.mountPath}/crio/crio.sock`));
      assert.ok(container.args.includes(`--host-run-dir=${mount.mountPath}`));
    });

    it('README.md has a row for every value of values.yaml, and none for a value it lacks', () => {
      const values = load(readFileSync(join(CHART, 'values.yaml'), 'utf8')) as Tree;
      const readme = readFileSync(join(CHART, 'README.md'), 'utf8');
      const leaves = (node: Tree, prefix: string): string[] =>
        node !== null && typeof node === 'object' && !Array.isArray(node) && Object.keys(node).length > 0
          ? Object.entries(node).flatMap(([k, v]) => leaves(v, prefix === '' ? k : `${prefix}.${k}`))
          : [prefix];
      const rows = [...readme.matchAll(/^\| `([a-zA-Z.]+)` +\|/gm)].map((m) => m[1]!);
      for (const key of leaves(values, '')) {
        // a row for the value itself or for the object holding it (`manager.resources` covers its requests)
        assert.ok(
          rows.some((row) => key === row || key.startsWith(`${row}.`)),
          `README.md has a row for ${key}`,
        );
      }
      for (const row of rows.filter((r) => r.includes('.') || r in values)) {
        const value = row.split('.').reduce((node: Tree, k) => node?.[k], values);
        assert.notEqual(value, undefined, `README.md's ${row} is in values.yaml`);
      }
      // the default image is the one the manifests name
      const ds = find(kustomize('default'), 'DaemonSet', 'kruise-daemon');
      assert.equal(
        `${values.manager.image.repository}:${values.manager.image.tag}`,
        ds.spec.template.spec.containers[0].image,
      );
    });
  });
}
