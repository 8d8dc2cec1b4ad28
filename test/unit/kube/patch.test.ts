import assert from 'node:assert/strict';
import fc from 'fast-check';
import { KubeClient } from '../../../src/kube/client.js';
import { applyMergePatch, createMergePatch, jsonEqual, type Json } from '../../../src/kube/merge-patch.js';
import { patchStatus } from '../../../src/kube/status-patch.js';
import type { ResourceType } from '../../../src/kube/resource.js';
import { FakeTransport, status } from './support/fake-transport.js';

const widgets: ResourceType = {
  group: 'example.io',
  version: 'v1',
  resource: 'widgets',
  namespaced: true,
  kind: 'Widget',
};

interface Widget {
  metadata: { name: string; namespace: string; resourceVersion?: string };
  status?: { phase?: string; count?: number; conditions?: { type: string }[]; extra?: Record<string, string> };
}

describe('merge patch', () => {
  it('computes the minimal patch: changed leaves, null for removed keys, arrays whole', () => {
    const a = { status: { phase: 'A', count: 1, conditions: [{ type: 'X' }], extra: { k: 'v', gone: 'x' } } };
    const b = { status: { phase: 'A', count: 2, conditions: [{ type: 'X' }, { type: 'Y' }], extra: { k: 'v' } } };
    assert.deepEqual(createMergePatch(a, b), {
      status: { count: 2, conditions: [{ type: 'X' }, { type: 'Y' }], extra: { gone: null } },
    });
    assert.equal(createMergePatch(a, structuredClone(a)), undefined);
    assert.equal(createMergePatch({ a: 1, b: undefined }, { a: 1 }), undefined, 'undefined counts as absent');
  });

  const json: fc.Arbitrary<Json> = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      fc.integer(),
      fc.string({ maxLength: 3 }),
      fc.boolean(),
      fc.array(tie('value') as fc.Arbitrary<Json>, { maxLength: 2 }),
      tie('object'),
    ),
    object: fc.dictionary(fc.constantFrom('a', 'b', 'c'), tie('value') as fc.Arbitrary<Json>, { maxKeys: 3 }),
  })).value as fc.Arbitrary<Json>;
  const doc = fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd'), json, { maxKeys: 4 });

  it('applying the computed patch turns the original into the modified document (property)', () => {
    fc.assert(
      fc.property(doc, doc, (a, b) => {
        const patch = createMergePatch(a, b);
        if (patch === undefined) return jsonEqual(a, b);
        return jsonEqual(applyMergePatch(a, patch), b);
      }),
      { numRuns: 500 },
    );
  });
});

/** A one-object server that honours metadata.resourceVersion in merge patches (409 when stale). */
function statusServer(initial: Widget) {
  let stored = structuredClone(initial);
  let rv = Number(initial.metadata.resourceVersion ?? '1');
  const patches: unknown[] = [];
  const transport = new FakeTransport((req) => {
    if (req.method === 'GET') return { status: 200, body: stored };
    if (req.method === 'PATCH') {
      const body = JSON.parse(req.body!) as { metadata?: { resourceVersion?: string } };
      patches.push(body);
      if (body.metadata?.resourceVersion && body.metadata.resourceVersion !== stored.metadata.resourceVersion) {
        return status(409, 'Conflict', 'the object has been modified');
      }
      stored = applyMergePatch(stored, body) as unknown as Widget;
      stored.metadata.resourceVersion = String(++rv);
      return { status: 200, body: stored };
    }
    return status(405, 'MethodNotAllowed');
  });
  return {
    client: new KubeClient(
      { server: 'http://x', insecureSkipTLSVerify: false, auth: { kind: 'none' }, origin: 't' },
      { transport },
    ),
    transport,
    patches,
    stored: () => stored,
    bump: (mutate: (w: Widget) => void) => {
      mutate(stored);
      stored.metadata.resourceVersion = String(++rv);
    },
  };
}

describe('patchStatus', () => {
  const base: Widget = {
    metadata: { name: 'w', namespace: 'ns', resourceVersion: '1' },
    status: { phase: 'Pending', count: 0 },
  };

  it('sends only the changed status fields with the resourceVersion, to the status subresource', async () => {
    const s = statusServer(base);
    const r = await patchStatus(s.client, widgets, base, (w) => {
      w.status!.phase = 'Running';
    });
    assert.equal(r.patched, true);
    assert.deepEqual(s.patches, [{ status: { phase: 'Running' }, metadata: { resourceVersion: '1' } }]);
    assert.equal(s.transport.last().path, '/apis/example.io/v1/namespaces/ns/widgets/w/status');
    assert.equal(r.object.status?.phase, 'Running');
  });

  it('sends nothing when the status is unchanged', async () => {
    const s = statusServer(base);
    const r = await patchStatus(s.client, widgets, base, (w) => ({ ...w.status }));
    assert.equal(r.patched, false);
    assert.equal(s.transport.sent.length, 0);
  });

  it('on a conflict re-reads and re-applies the mutation to the fresh object', async () => {
    const s = statusServer(base);
    s.bump((w) => (w.status!.count = 5));
    const r = await patchStatus(s.client, widgets, base, (w) => {
      w.status!.count = (w.status!.count ?? 0) + 1;
    });
    assert.equal(r.attempts, 2);
    assert.equal(s.stored().status?.count, 6, 'the increment applied to the fresh count');
    assert.deepEqual(
      s.transport.sent.map((q) => q.method),
      ['PATCH', 'GET', 'PATCH'],
    );
  });

  it('gives up after the attempts and throws the conflict', async () => {
    const s = statusServer(base);
    s.client.transport.request = () =>
      Promise.resolve({
        status: 409,
        headers: {},
        body: JSON.stringify({ kind: 'Status', code: 409, reason: 'Conflict' }),
      });
    await assert.rejects(
      patchStatus(s.client, widgets, base, (w) => void (w.status!.count = 9), { attempts: 2 }),
      /409 Conflict/,
    );
  });
});
