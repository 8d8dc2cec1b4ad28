import assert from 'node:assert/strict';
import type { NodeImage, ImageTagSpec } from '../../../src/api/nodeimage.js';
import { collectSpecGarbage } from '../../../src/controller/nodeimage/spec-gc.js';
import {
  DEADLINE_EXCEEDED_MESSAGE,
  NOT_RESPONDED_MESSAGE,
  RESPONSE_TIMEOUT_MS,
  statusWithFallback,
} from '../../../src/controller/nodeimage/status-fallback.js';
import { FakeClock } from '../../../src/util/clock.js';

const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
const iso = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');
const owner = (name: string, uid: string) => ({
  apiVersion: 'apps.kruise.io/v1beta1',
  kind: 'ImagePullJob',
  namespace: 'ns',
  name,
  uid,
});

function tag(name: string, extra: Partial<ImageTagSpec> = {}): ImageTagSpec {
  return {
    tag: name,
    createdAt: iso(clock.now() - 1000),
    version: 0,
    pullPolicy: { ttlSecondsAfterFinished: 60 },
    ...extra,
  };
}

function nodeImage(
  tags: ImageTagSpec[],
  statusTags: NonNullable<NodeImage['status']>['imageStatuses'] = {},
): NodeImage {
  return {
    metadata: { name: 'n1', labels: { a: '1' } },
    spec: { images: { nginx: { tags } } },
    status: { desired: tags.length, imageStatuses: statusTags },
  };
}

describe('nodeimage controller: spec garbage collection', () => {
  it('copies the Node labels wholesale', () => {
    const ni = nodeImage([tag('1')]);
    const r = collectSpecGarbage(ni, { nodeLabels: { b: '2' }, goneJobUids: new Set(), now: clock.now() });
    assert.equal(r.changed, true);
    assert.deepEqual(ni.metadata.labels, { b: '2' });
  });

  it('keeps everything when owners live, TTLs run and labels match', () => {
    const ni = nodeImage([tag('1', { ownerReferences: [owner('j', 'u1')] })]);
    const r = collectSpecGarbage(ni, { nodeLabels: { a: '1' }, goneJobUids: new Set(), now: clock.now() });
    assert.equal(r.changed, false);
    assert.deepEqual(r.collected, []);
  });

  it('drops tags without createdAt, tags whose owners are all gone, and the image once no tag is left', () => {
    const ni = nodeImage([tag('1', { createdAt: undefined }), tag('2', { ownerReferences: [owner('j', 'gone')] })]);
    const r = collectSpecGarbage(ni, { goneJobUids: new Set(['gone']), now: clock.now() });
    assert.deepEqual(
      r.collected.map((c) => [c.tag, c.reason]),
      [
        ['1', 'no-createdAt'],
        ['2', 'owner-gone'],
      ],
    );
    assert.deepEqual(ni.spec?.images, {});
  });

  it('drops only the gone owner of a shared tag, and keeps owners of other kinds', () => {
    const other = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd', uid: 'gone' };
    const ni = nodeImage([tag('1', { ownerReferences: [owner('a', 'gone'), owner('b', 'alive'), other] })]);
    const r = collectSpecGarbage(ni, { goneJobUids: new Set(['gone']), now: clock.now() });
    assert.equal(r.changed, true);
    assert.deepEqual(
      ni.spec?.images?.nginx?.tags[0]?.ownerReferences?.map((o) => o.name),
      ['b', 'd'],
    );
  });

  it('drops references to pull-secret copies that are gone, keeps the rest, and the list once it is empty', () => {
    const kdc = 'kruise-daemon-config';
    const ni = nodeImage([tag('1')]);
    ni.spec!.images!.nginx!.pullSecrets = [
      { namespace: kdc, name: 'copy-gone', mode: 'batch' },
      { namespace: kdc, name: 'copy-live', mode: 'batch' },
      { namespace: kdc, name: 'by-hand' }, // not a copy of ours: left alone even if it is gone
    ];
    ni.spec!.images!.redis = { tags: [tag('7')], pullSecrets: [{ namespace: kdc, name: 'copy-gone', mode: 'batch' }] };
    const r = collectSpecGarbage(ni, {
      nodeLabels: { a: '1' },
      goneJobUids: new Set(),
      goneSecretCopies: new Set(['copy-gone', 'by-hand']),
      now: clock.now(),
    });
    assert.equal(r.changed, true);
    assert.deepEqual(
      ni.spec?.images?.nginx?.pullSecrets?.map((ref) => ref.name),
      ['copy-live', 'by-hand'],
    );
    assert.equal(ni.spec?.images?.redis?.pullSecrets, undefined, 'an empty list is removed');
    assert.deepEqual(r.droppedSecrets, [
      { image: 'nginx', name: 'copy-gone' },
      { image: 'redis', name: 'copy-gone' },
    ]);
    assert.deepEqual(r.collected, [], 'the tags stay');
  });

  it('drops a tag whose TTL after completion ran out, and asks to come back for one still running', () => {
    const done = (ago: number) => ({
      tag: '',
      phase: 'Succeeded' as const,
      version: 0,
      completionTime: iso(clock.now() - ago),
    });
    const ni = nodeImage([tag('old'), tag('new'), tag('other-version', { version: 2 })], {
      nginx: {
        tags: [
          { ...done(61_000), tag: 'old' },
          { ...done(20_000), tag: 'new' },
          { ...done(600_000), tag: 'other-version', version: 1 },
        ],
      },
    });
    const r = collectSpecGarbage(ni, { goneJobUids: new Set(), now: clock.now() });
    assert.deepEqual(
      r.collected.map((c) => c.tag),
      ['old'],
    );
    assert.equal(r.requeueAfterMs, 40_000);
    assert.deepEqual(
      ni.spec?.images?.nginx?.tags.map((t) => t.tag),
      ['new', 'other-version'],
    );
  });
});

describe('nodeimage controller: status fallback', () => {
  it('marks a tag Failed when the node has not answered within the response timeout, and recounts', () => {
    const ni = nodeImage([tag('1', { createdAt: iso(clock.now() - RESPONSE_TIMEOUT_MS - 1000) }), tag('2')]);
    const r = statusWithFallback(ni, clock.now());
    assert.equal(r.changed, true);
    assert.deepEqual(
      r.failed.map((f) => [f.tag, f.reason]),
      [['1', 'not-responded']],
    );
    const failed = r.status.imageStatuses?.nginx?.tags[0];
    assert.equal(failed?.phase, 'Failed');
    assert.equal(failed?.message, NOT_RESPONDED_MESSAGE);
    assert.equal(r.status.desired, 2);
    assert.equal(r.status.failed, 1);
    assert.ok(r.requeueAfterMs !== undefined && r.requeueAfterMs <= RESPONSE_TIMEOUT_MS);
  });

  it('treats a status for an older version as no answer', () => {
    const ni = nodeImage([tag('1', { version: 3, createdAt: iso(clock.now() - RESPONSE_TIMEOUT_MS) })], {
      nginx: { tags: [{ tag: '1', phase: 'Succeeded', version: 2, completionTime: iso(clock.now()) }] },
    });
    const r = statusWithFallback(ni, clock.now());
    assert.equal(r.status.imageStatuses?.nginx?.tags[0]?.version, 3);
    assert.equal(r.status.imageStatuses?.nginx?.tags[0]?.phase, 'Failed');
  });

  it('marks a tag still pulling after createdAt + activeDeadlineSeconds + the response timeout', () => {
    const created = clock.now() - 100_000 - RESPONSE_TIMEOUT_MS;
    const ni = nodeImage(
      [tag('1', { createdAt: iso(created), pullPolicy: { ttlSecondsAfterFinished: 1, activeDeadlineSeconds: 100 } })],
      {
        nginx: { tags: [{ tag: '1', phase: 'Pulling', version: 0 }] },
      },
    );
    const r = statusWithFallback(ni, clock.now());
    assert.equal(r.status.imageStatuses?.nginx?.tags[0]?.message, DEADLINE_EXCEEDED_MESSAGE);
  });

  it('writes nothing while the agent is within its time, and prunes statuses of tags gone from spec', () => {
    const fresh = nodeImage([tag('1')], { nginx: { tags: [{ tag: '1', phase: 'Pulling', version: 0 }] } });
    assert.equal(statusWithFallback(fresh, clock.now()).changed, false);
    const stale = nodeImage([tag('1')], {
      nginx: { tags: [{ tag: '1', phase: 'Pulling', version: 0 }] },
      gone: { tags: [{ tag: 'x', phase: 'Succeeded', version: 0 }] },
    });
    const r = statusWithFallback(stale, clock.now());
    assert.equal(r.changed, true);
    assert.deepEqual(Object.keys(r.status.imageStatuses ?? {}), ['nginx']);
    assert.equal(r.status.pulling, 1);
  });
});
