// deploy/controller agrees with the code: the webhook configurations are the ones the controller keeps (names,
// paths, rules), the Deployment's flags parse, the RBAC grants what the controller calls and no secret rights
// outside its own namespaces (the pull-secret reader ClusterRole ships unbound), and the folder is part of the install.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import { packageRoot } from '../../../src/util/repo-root.js';
import { parseControllerCommandLine } from '../../../src/controller/options.js';
import {
  MUTATING_WEBHOOKS,
  VALIDATING_WEBHOOKS,
  webhookFor,
  type Webhook,
} from '../../../src/controller/admission/configurations.js';
import { imageWebhookHandlers } from '../../../src/controller/admission/images/handlers.js';
import { FakeClock } from '../../../src/util/clock.js';

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

interface Doc {
  kind: string;
  metadata: { name: string; namespace?: string };
  rules?: Rule[];
  webhooks?: Webhook[];
  resources?: string[];
  spec?: { template: { spec: { containers: { args: string[] }[] } } };
}

const dir = join(packageRoot(), 'deploy', 'controller');
const load = (file: string): Doc[] => loadAll(readFileSync(join(dir, file), 'utf8')) as Doc[];

describe('deploy: kruise-controller', () => {
  it('declares webhooks exactly as the controller keeps them (names, paths, rules), the image ones at least', () => {
    const target = {
      service: { namespace: 'kruise-system', name: 'kruise-controller-webhook', port: 443 },
      caBundlePem: '',
    };
    const strip = (h: Webhook): unknown => ({ ...h, clientConfig: { ...h.clientConfig, caBundle: undefined } });
    const docs = load('webhooks.yaml');
    const served = Object.keys(imageWebhookHandlers(new FakeClock()));
    for (const [kind, defs, mutating] of [
      ['MutatingWebhookConfiguration', MUTATING_WEBHOOKS, true],
      ['ValidatingWebhookConfiguration', VALIDATING_WEBHOOKS, false],
    ] as const) {
      const doc = docs.find((d) => d.kind === kind);
      assert.ok(doc, kind);
      for (const hook of doc.webhooks ?? []) {
        const def = defs.find((d) => d.name === hook.name);
        assert.ok(def, `${hook.name} is kept by the controller`);
        assert.deepEqual(strip(hook), strip(webhookFor(def, target, mutating)));
      }
      for (const def of defs.filter((d) => served.includes(d.path))) {
        assert.ok(
          doc.webhooks?.some((h) => h.name === def.name),
          `${def.name} is in webhooks.yaml`,
        );
      }
    }
  });

  it('runs with flags the controller accepts', () => {
    const deployment = load('deployment.yaml').find((d) => d.kind === 'Deployment');
    const args = deployment?.spec?.template.spec.containers[0]?.args ?? [];
    const parsed = parseControllerCommandLine(args, { POD_NAMESPACE: 'kruise-system' });
    assert.equal(parsed.kind, 'run');
  });

  it('grants what the controllers call, and writes secrets only in its own namespaces', () => {
    const docs = load('rbac.yaml');
    const grants = (kind: string, ns: string | undefined, group: string, resource: string, verb: string): boolean =>
      docs.some(
        (d) =>
          d.kind === kind &&
          (ns === undefined || d.metadata.namespace === ns) &&
          (d.rules ?? []).some(
            (r) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb),
          ),
      );
    const clusterWide: [string, string, string[]][] = [
      ['', 'nodes', ['list', 'watch', 'get']],
      ['', 'pods', ['list', 'watch']],
      ['', 'events', ['create', 'patch']],
      ['apps.kruise.io', 'nodeimages', ['list', 'watch', 'get', 'create', 'update', 'delete']],
      ['apps.kruise.io', 'nodeimages/status', ['update']],
      ['apps.kruise.io', 'imagepulljobs', ['list', 'watch', 'get', 'create', 'update', 'delete']],
      ['apps.kruise.io', 'imagepulljobs/status', ['patch']],
      ['apps.kruise.io', 'imagelistpulljobs', ['list', 'watch', 'patch', 'delete']],
      ['apps.kruise.io', 'imagelistpulljobs/status', ['patch']],
      ['admissionregistration.k8s.io', 'mutatingwebhookconfigurations', ['create', 'get', 'update']],
    ];
    for (const [group, resource, verbs] of clusterWide) {
      for (const verb of verbs)
        assert.ok(grants('ClusterRole', undefined, group, resource, verb), `${verb} ${resource}`);
    }
    // Every ClusterRole bound cluster-wide in deploy/controller: no rule on secrets (or on every resource).
    const all = readdirSync(dir)
      .filter((f) => f.endsWith('.yaml'))
      .flatMap(load) as (Doc & { roleRef?: { kind: string; name: string } })[];
    const bound = all.filter((d) => d.kind === 'ClusterRoleBinding').map((d) => d.roleRef?.name);
    assert.ok(bound.includes('kruise-controller-role'));
    for (const role of all.filter((d) => d.kind === 'ClusterRole' && bound.includes(d.metadata.name))) {
      const secretRules = (role.rules ?? []).filter(
        (r) => r.apiGroups.some((g) => g === '' || g === '*') && r.resources.some((x) => x === 'secrets' || x === '*'),
      );
      assert.deepEqual(secretRules, [], `${role.metadata.name} grants no cluster-wide secret rights`);
    }
    for (const verb of ['get', 'list', 'watch', 'create', 'update', 'delete']) {
      assert.ok(grants('Role', 'kruise-daemon-config', '', 'secrets', verb), `${verb} copies`);
    }
    assert.ok(grants('Role', 'kruise-system', 'coordination.k8s.io', 'leases', 'update'));
    assert.ok(grants('Role', 'kruise-system', '', 'secrets', 'update'));
  });

  it('ships the pull-secret reader ClusterRole (secrets: get, list, watch, for the watch of each source) unbound', () => {
    const all = ['rbac.yaml', 'pull-secret-reader.yaml'].flatMap(load);
    const reader = all.filter(
      (d) => d.kind === 'ClusterRole' && d.metadata.name === 'kruise-controller-pull-secret-reader',
    );
    assert.equal(reader.length, 1);
    assert.deepEqual(reader[0]?.rules, [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] }]);
    const bindings = all as (Doc & { roleRef?: { name: string } })[];
    assert.ok(!bindings.some((d) => d.roleRef?.name === 'kruise-controller-pull-secret-reader'), 'no binding ships');
  });

  it('is part of the install', () => {
    const [top] = loadAll(readFileSync(join(packageRoot(), 'deploy', 'kustomization.yaml'), 'utf8')) as Doc[];
    assert.ok(top?.resources?.includes('controller'));
    const [own] = load('kustomization.yaml');
    assert.deepEqual([...(own?.resources ?? [])].sort(), [
      'deployment.yaml',
      'pull-secret-reader.yaml',
      'rbac-containerrecreate.yaml',
      'rbac.yaml',
      'service-account.yaml',
      'service.yaml',
      'webhooks.yaml',
    ]);
  });
});
