// deploy/controller carries the PodProbeMarker webhook as the controller keeps it, and the RBAC the probe
// controllers' calls need: markers (finalizer, status), NodePodProbes, and pod marks (patch of pods and
// pods/status only: no pod update, create or delete).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import { VALIDATING_WEBHOOKS, webhookFor, type Webhook } from '../../../src/controller/admission/configurations.js';
import {
  podProbeMarkerWebhookHandlers,
  PPM_VALIDATING_WEBHOOK_NAME,
  PPM_VALIDATING_WEBHOOK_PATH,
} from '../../../src/controller/admission/podprobemarker/handler.js';
import { packageRoot } from '../../../src/util/repo-root.js';

interface Doc {
  kind: string;
  rules?: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
  webhooks?: Webhook[];
}

const dir = join(packageRoot(), 'deploy', 'controller');
const load = (file: string): Doc[] => loadAll(readFileSync(join(dir, file), 'utf8')) as Doc[];

describe('deploy: PodProbeMarker webhook and RBAC', () => {
  it('registers the validating webhook, serves its path and declares it identically in webhooks.yaml', () => {
    const def = VALIDATING_WEBHOOKS.find((d) => d.name === PPM_VALIDATING_WEBHOOK_NAME);
    assert.ok(def);
    assert.equal(def.path, PPM_VALIDATING_WEBHOOK_PATH);
    assert.ok(Object.keys(podProbeMarkerWebhookHandlers()).includes(def.path));
    const declared = load('webhooks.yaml')
      .find((d) => d.kind === 'ValidatingWebhookConfiguration')
      ?.webhooks?.find((h) => h.name === PPM_VALIDATING_WEBHOOK_NAME);
    assert.ok(declared, 'in webhooks.yaml');
    const target = {
      service: { namespace: 'kruise-system', name: 'kruise-controller-webhook', port: 443 },
      caBundlePem: '',
    };
    const strip = (h: Webhook): unknown => ({ ...h, clientConfig: { ...h.clientConfig, caBundle: undefined } });
    assert.deepEqual(strip(declared), strip(webhookFor(def, target, false)));
    assert.deepEqual(declared.rules[0]?.operations, ['CREATE', 'UPDATE']);
  });

  it('grants the markers, NodePodProbes and pod marks, and no pod writes beyond patch', () => {
    const rules = load('rbac.yaml')
      .filter((d) => d.kind === 'ClusterRole')
      .flatMap((d) => d.rules ?? []);
    const grants = (group: string, resource: string, verb: string): boolean =>
      rules.some((r) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb));
    const wanted: [string, string, string[]][] = [
      ['apps.kruise.io', 'podprobemarkers', ['get', 'list', 'watch', 'update']],
      ['apps.kruise.io', 'podprobemarkers/status', ['update', 'patch']],
      ['apps.kruise.io', 'podprobemarkers/finalizers', ['update']],
      ['apps.kruise.io', 'nodepodprobes', ['get', 'list', 'watch', 'create', 'update', 'delete']],
      ['', 'pods', ['get', 'list', 'watch', 'patch']],
      ['', 'pods/status', ['patch']],
    ];
    for (const [group, resource, verbs] of wanted) {
      for (const verb of verbs) assert.ok(grants(group, resource, verb), `${verb} ${resource}`);
    }
    for (const verb of ['create', 'update', 'delete']) assert.ok(!grants('', 'pods', verb), `no ${verb} on pods`);
    assert.ok(!grants('apps.kruise.io', 'podprobemarkers', 'delete'), 'markers are never deleted by the controller');
  });
});
