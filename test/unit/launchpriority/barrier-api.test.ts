// KubeBarrierApi labels every barrier it writes with the agent's node (create, add keys), and sees one without `get`: the API server's
// node-confinement policy (deploy/node-confinement) lets an agent write only barriers labelled with its own node.
import assert from 'node:assert/strict';
import { BARRIER_NODE_NAME_LABEL } from '../../../src/api/constants.js';
import { KubeBarrierApi } from '../../../src/daemon/launchpriority/barrier-api.js';
import type { KubeClient } from '../../../src/kube/index.js';

interface Call {
  verb: 'create' | 'patch';
  name: string;
  body: unknown;
  options: unknown;
}

function recordingClient(calls: Call[]): Pick<KubeClient, 'create' | 'patch'> {
  return {
    create: (_rt, body, options) => {
      calls.push({ verb: 'create', name: body.metadata?.name ?? '', body, options });
      return Promise.resolve(body as never);
    },
    patch: (_rt, name, body, options) => {
      calls.push({ verb: 'patch', name, body, options });
      return Promise.resolve({ metadata: { name } } as never);
    },
  };
}

describe('launch priority: KubeBarrierApi labels barriers with its node', () => {
  const owner = { name: 'web-0', uid: 'uid-1' };

  it('creates a barrier labelled with the node, owned by its pod', async () => {
    const calls: Call[] = [];
    await new KubeBarrierApi(recordingClient(calls), 'node-a').create('ns', 'web-0-barrier', owner, ['p_1']);
    assert.deepEqual(calls[0]?.body, {
      metadata: {
        name: 'web-0-barrier',
        namespace: 'ns',
        labels: { [BARRIER_NODE_NAME_LABEL]: 'node-a' },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'web-0', uid: 'uid-1' }],
      },
      data: { p_1: 'true' },
    });
  });

  it('labels it again when adding keys (a barrier written before the label gets it)', async () => {
    const calls: Call[] = [];
    await new KubeBarrierApi(recordingClient(calls), 'node-a').addKeys('ns', 'web-0-barrier', ['p_2']);
    assert.deepEqual(calls[0]?.body, {
      metadata: { labels: { [BARRIER_NODE_NAME_LABEL]: 'node-a' } },
      data: { p_2: 'true' },
    });
    assert.deepEqual(calls[0]?.options, { type: 'merge', namespace: 'ns' });
  });

  it('sees a barrier through a merge patch of its node label alone (no get, which RBAC does not grant)', async () => {
    const calls: Call[] = [];
    const seen = await new KubeBarrierApi(recordingClient(calls), 'node-a').observe('ns', 'web-0-barrier');
    assert.deepEqual(calls, [
      {
        verb: 'patch',
        name: 'web-0-barrier',
        body: { metadata: { labels: { [BARRIER_NODE_NAME_LABEL]: 'node-a' } } },
        options: { type: 'merge', namespace: 'ns' },
      },
    ]);
    assert.equal(seen?.metadata?.name, 'web-0-barrier');
  });
});
