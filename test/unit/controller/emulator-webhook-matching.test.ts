// emulator: the subject under test (the emulator's webhook matching, test/cluster/apiserver/webhooks)
import assert from 'node:assert/strict';
import type { AdmissionRequest } from '../../cluster/apiserver/admission.js';
import { ruleMatches, webhookMatches } from '../../cluster/apiserver/webhooks/matching.js';

function req(extra: Partial<AdmissionRequest> = {}): AdmissionRequest {
  return {
    operation: 'CREATE',
    kind: { group: 'apps.kruise.io', version: 'v1beta1', kind: 'ImagePullJob' },
    resource: { group: 'apps.kruise.io', version: 'v1beta1', resource: 'imagepulljobs' },
    subResource: '',
    namespace: 'ns',
    name: 'j',
    object: { metadata: { name: 'j', labels: { app: 'x' } } },
    dryRun: false,
    userAgent: 'test',
    ...extra,
  };
}

const rule = {
  apiGroups: ['apps.kruise.io'],
  apiVersions: ['v1beta1'],
  operations: ['CREATE', 'UPDATE'],
  resources: ['imagepulljobs'],
};

describe('API emulator webhooks: which webhooks a request reaches', () => {
  it('matches rules by group, version, resource, operation, subresource and scope', () => {
    assert.ok(ruleMatches(rule, req()));
    assert.ok(!ruleMatches(rule, req({ operation: 'DELETE' })));
    assert.ok(!ruleMatches({ ...rule, apiVersions: ['v1alpha1'] }, req()));
    assert.ok(!ruleMatches(rule, req({ subResource: 'status' })));
    assert.ok(ruleMatches({ ...rule, resources: ['imagepulljobs/status'] }, req({ subResource: 'status' })));
    assert.ok(ruleMatches({ ...rule, resources: ['*/*'] }, req({ subResource: 'status' })));
    assert.ok(ruleMatches({ apiGroups: ['*'], apiVersions: ['*'], operations: ['*'], resources: ['*'] }, req()));
    assert.ok(!ruleMatches({ ...rule, scope: 'Cluster' }, req()));
    assert.ok(ruleMatches({ ...rule, scope: 'Namespaced' }, req()));
  });

  it('applies namespaceSelector to namespaced objects and objectSelector to the new or old object', () => {
    const hook = { name: 'h', rules: [rule], namespaceSelector: { matchLabels: { team: 'a' } } };
    const labelled = () => ({ metadata: { name: 'ns', labels: { team: 'a' } } });
    assert.ok(webhookMatches(hook, req(), labelled));
    assert.ok(!webhookMatches(hook, req(), () => ({ metadata: { name: 'ns' } })));
    const cluster = { ...rule, resources: ['nodeimages'] };
    const clusterReq = req({
      namespace: '',
      resource: { group: 'apps.kruise.io', version: 'v1beta1', resource: 'nodeimages' },
    });
    assert.ok(
      webhookMatches(
        { name: 'h', rules: [cluster], namespaceSelector: { matchLabels: { team: 'a' } } },
        clusterReq,
        () => undefined,
      ),
    );
    const bySelector = { name: 'h', rules: [rule], objectSelector: { matchLabels: { app: 'y' } } };
    assert.ok(!webhookMatches(bySelector, req(), labelled));
    assert.ok(webhookMatches(bySelector, req({ oldObject: { metadata: { labels: { app: 'y' } } } }), labelled));
  });
});
