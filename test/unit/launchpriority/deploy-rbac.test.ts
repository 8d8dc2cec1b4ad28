// The agent's RBAC for launch priority is exactly what the controller calls need, and part of the install.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import { packageRoot } from '../../../src/util/repo-root.js';

interface Doc {
  kind: string;
  metadata: { name: string };
  rules?: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
  roleRef?: { name: string };
  subjects?: { kind: string; name: string; namespace: string }[];
  resources?: string[];
}

describe('deploy: launch priority RBAC of the agent', () => {
  const dir = join(packageRoot(), 'deploy', 'base', 'daemon');
  const docs = loadAll(readFileSync(join(dir, 'rbac-launchpriority.yaml'), 'utf8')) as Doc[];

  it('grants configmaps create/patch (no get: issue 26) and pods patch, nothing else', () => {
    const role = docs.find((d) => d.kind === 'ClusterRole');
    assert.deepEqual(role?.rules, [
      { apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'patch'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['patch'] },
    ]);
  });

  it("binds it to the agent's ServiceAccount and is in the kustomization", () => {
    const binding = docs.find((d) => d.kind === 'ClusterRoleBinding');
    assert.equal(binding?.roleRef?.name, 'kruise-daemon-launchpriority');
    assert.deepEqual(binding?.subjects, [
      { kind: 'ServiceAccount', name: 'kruise-daemon', namespace: 'kruise-system' },
    ]);
    const [kustomization] = loadAll(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as Doc[];
    assert.ok(kustomization?.resources?.includes('rbac-launchpriority.yaml'));
  });
});
