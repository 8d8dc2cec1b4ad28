// deploy/ grants the agent what the image puller does and no more: NodeImages read + status patch, Events, and
// Secrets only in kruise-daemon-config (a Role there, bound to the agent's ServiceAccount).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { packageRoot } from '../../../src/util/repo-root.js';

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}
interface Manifest {
  kind: string;
  metadata: { name: string; namespace?: string };
  rules?: Rule[];
  roleRef?: { kind: string; name: string };
  subjects?: { kind: string; name: string; namespace?: string }[];
}

describe('imagepuller RBAC in deploy/', function () {
  this.timeout(30_000);
  let manifests: Manifest[] = [];

  before(() => {
    const out = execFileSync('kubectl', ['kustomize', join(packageRoot(), 'deploy')], { encoding: 'utf8' });
    manifests = out.split(/^---$/m).map((doc) => load(doc) as Manifest);
  });

  const verbs = (rules: Rule[] | undefined, group: string, resource: string): string[] =>
    (rules ?? [])
      .filter((r) => r.apiGroups.includes(group) && r.resources.includes(resource))
      .flatMap((r) => r.verbs)
      .sort();

  it('lets the agent read NodeImages, patch their status and record events', () => {
    const role = manifests.find((m) => m.kind === 'ClusterRole' && m.metadata.name === 'kruise-daemon-role');
    assert.ok(role, 'ClusterRole kruise-daemon-role');
    assert.deepEqual(verbs(role.rules, 'apps.kruise.io', 'nodeimages'), ['get', 'list', 'watch']);
    assert.ok(verbs(role.rules, 'apps.kruise.io', 'nodeimages/status').includes('patch'));
    assert.deepEqual(verbs(role.rules, '', 'events'), ['create', 'patch']);
    assert.deepEqual(verbs(role.rules, '', 'secrets'), [], 'no cluster-wide secrets');
    const binding = manifests.find((m) => m.kind === 'ClusterRoleBinding' && m.roleRef?.name === 'kruise-daemon-role');
    assert.deepEqual(binding?.subjects, [
      { kind: 'ServiceAccount', name: 'kruise-daemon', namespace: 'kruise-system' },
    ]);
  });

  it('lets it read secrets in kruise-daemon-config only', () => {
    assert.ok(manifests.some((m) => m.kind === 'Namespace' && m.metadata.name === 'kruise-daemon-config'));
    const role = manifests.find((m) => m.kind === 'Role' && m.metadata.name === 'kruise-daemon-secret-role');
    assert.equal(role?.metadata.namespace, 'kruise-daemon-config');
    assert.deepEqual(verbs(role?.rules, '', 'secrets'), ['get', 'list', 'watch']);
    const binding = manifests.find((m) => m.kind === 'RoleBinding' && m.roleRef?.name === 'kruise-daemon-secret-role');
    assert.equal(binding?.metadata.namespace, 'kruise-daemon-config');
    assert.deepEqual(binding?.subjects, [
      { kind: 'ServiceAccount', name: 'kruise-daemon', namespace: 'kruise-system' },
    ]);
  });
});
