// deploy/controller carries the PersistentPodState webhooks as the controller keeps them, and the RBAC the
// controller's PersistentPodState calls need (StatefulSets read-only).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import {
  MUTATING_WEBHOOKS,
  VALIDATING_WEBHOOKS,
  webhookFor,
  type Webhook,
} from '../../../src/controller/admission/configurations.js';
import {
  PPS_POD_WEBHOOK_NAME,
  PPS_VALIDATING_WEBHOOK_NAME,
} from '../../../src/controller/admission/persistentpodstate/handler.js';
import { packageRoot } from '../../../src/util/repo-root.js';

interface Doc {
  kind: string;
  rules?: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
  webhooks?: Webhook[];
}

const dir = join(packageRoot(), 'deploy', 'controller');
const load = (file: string): Doc[] => loadAll(readFileSync(join(dir, file), 'utf8')) as Doc[];
const target = {
  service: { namespace: 'kruise-system', name: 'kruise-controller-webhook', port: 443 },
  caBundlePem: '',
};
const strip = (hook: Webhook): unknown => {
  const { clientConfig, ...rest } = structuredClone(hook);
  return { ...rest, path: clientConfig.service?.path ?? clientConfig.url };
};

describe('deploy: PersistentPodState webhooks and RBAC', () => {
  it('registers both webhooks with the controller and declares them identically in webhooks.yaml', () => {
    const docs = load('webhooks.yaml');
    for (const [kind, defs, name, mutating] of [
      ['MutatingWebhookConfiguration', MUTATING_WEBHOOKS, PPS_POD_WEBHOOK_NAME, true],
      ['ValidatingWebhookConfiguration', VALIDATING_WEBHOOKS, PPS_VALIDATING_WEBHOOK_NAME, false],
    ] as const) {
      const def = defs.find((d) => d.name === name);
      assert.ok(def, `${name} is registered by the controller`);
      const declared = docs.find((d) => d.kind === kind)?.webhooks?.find((h) => h.name === name);
      assert.ok(declared, `${name} is in webhooks.yaml`);
      assert.deepEqual(strip(declared), strip(webhookFor(def, target, mutating)));
    }
    const pod = docs.flatMap((d) => d.webhooks ?? []).find((h) => h.name === PPS_POD_WEBHOOK_NAME);
    assert.deepEqual(pod?.objectSelector, {
      matchExpressions: [{ key: 'statefulset.kubernetes.io/pod-name', operator: 'Exists' }],
    });
  });

  it('grants StatefulSet reads, PPS writes and status, and no StatefulSet writes', () => {
    const rules = load('rbac.yaml')
      .filter((d) => d.kind === 'ClusterRole')
      .flatMap((d) => d.rules ?? []);
    const grants = (group: string, resource: string, verb: string): boolean =>
      rules.some((r) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb));
    for (const verb of ['get', 'list', 'watch'])
      assert.ok(grants('apps', 'statefulsets', verb), `${verb} statefulsets`);
    for (const verb of ['create', 'update', 'patch', 'delete']) {
      assert.ok(!grants('apps', 'statefulsets', verb), `no ${verb} on statefulsets`);
    }
    for (const verb of ['get', 'list', 'watch', 'create', 'update', 'delete']) {
      assert.ok(grants('apps.kruise.io', 'persistentpodstates', verb), `${verb} persistentpodstates`);
    }
    assert.ok(grants('apps.kruise.io', 'persistentpodstates/status', 'patch'));
    assert.ok(grants('', 'pods', 'watch') && grants('', 'nodes', 'watch'));
  });
});
