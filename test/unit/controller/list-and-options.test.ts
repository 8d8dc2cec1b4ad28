import assert from 'node:assert/strict';
import {
  listJobStatus,
  templateHash,
  FAILED_IMAGE_MESSAGE,
} from '../../../src/controller/imagelistpulljob/controller.js';
import { parseControllerCommandLine, parseDuration } from '../../../src/controller/options.js';
import { ConfigError } from '../../../src/util/config-error.js';
import { copyNameFor } from '../../../src/controller/pullsecrets/secret-sync.js';
import type { ImageListPullJob } from '../../../src/api/imagelistpulljob.js';
import type { ImagePullJob } from '../../../src/api/imagepulljob.js';
import { FakeClock } from '../../../src/util/clock.js';

const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));

describe('imagelistpulljob controller', () => {
  it('hashes the template stably (key order does not matter) and differently for another template', () => {
    const a = templateHash({ completionPolicy: { type: 'Always' }, parallelism: 2, pullSecrets: ['x'] });
    const b = templateHash({ pullSecrets: ['x'], parallelism: 2, completionPolicy: { type: 'Always' } });
    assert.equal(a, b);
    assert.notEqual(a, templateHash({ completionPolicy: { type: 'Always' }, parallelism: 3, pullSecrets: ['x'] }));
    assert.match(a, /^[0-9a-f]{10}$/);
  });

  it('aggregates children: active, completed, succeeded, failed images; completes when all completed', () => {
    const list = {
      metadata: { name: 'l', namespace: 'ns' },
      spec: { images: ['a', 'b', 'c'], completionPolicy: {} },
    } as unknown as ImageListPullJob;
    const child = (image: string, status: ImagePullJob['status']) =>
      ({ metadata: { name: `l-${image}` }, spec: { image }, status }) as ImagePullJob;
    const s = listJobStatus(
      list,
      [
        child('a', { startTime: 't', desired: 2, succeeded: 2 }),
        child('b', { startTime: 't', desired: 2, succeeded: 1, failed: 1 }),
        child('c', { startTime: 't', desired: 2, active: 1, succeeded: 1 }),
      ],
      clock.now(),
    );
    assert.deepEqual(
      { desired: s.desired, active: s.active, completed: s.completed, succeeded: s.succeeded },
      { desired: 3, active: 1, completed: 2, succeeded: 1 },
    );
    assert.deepEqual(s.failedImageStatuses, [{ imagePullJob: 'l-b', name: 'b', message: FAILED_IMAGE_MESSAGE }]);
    assert.equal(s.completionTime, undefined);
    const done = listJobStatus(
      list,
      ['a', 'b', 'c'].map((i) => child(i, { startTime: 't', desired: 1, succeeded: 1 })),
      clock.now(),
    );
    assert.equal(done.completionTime, '2026-01-01T00:00:00Z');
  });
});

describe('controller options', () => {
  it('has OpenKruise defaults', () => {
    const parsed = parseControllerCommandLine([], {});
    assert.equal(parsed.kind, 'run');
    if (parsed.kind !== 'run') return;
    assert.equal(parsed.options.nodeImageCreationDelayMs, 30_000);
    assert.equal(parsed.options.nodeImageWorkers, 3);
    assert.equal(parsed.options.defaultTagTtlSeconds, 300);
    assert.equal(parsed.options.leaderElect, true);
    assert.equal(parsed.options.webhook.port, 9876);
    assert.equal(parsed.options.namespace, 'kruise-system');
  });

  it('reads flags and durations, and names the flag of a bad value', () => {
    const parsed = parseControllerCommandLine(
      ['--nodeimage-creation-delay', '500ms', '--imagepulljob-workers', '8', '--leader-elect', 'false'],
      {},
    );
    assert.ok(
      parsed.kind === 'run' &&
        parsed.options.nodeImageCreationDelayMs === 500 &&
        parsed.options.imagePullJobWorkers === 8,
    );
    assert.equal(parseDuration('10m', 'x'), 600_000);
    assert.throws(() => parseControllerCommandLine(['--imagepulljob-workers', '0'], {}), /--imagepulljob-workers/);
    assert.throws(() => parseControllerCommandLine(['--webhook-url-base', 'http://x'], {}), ConfigError);
    assert.throws(() => parseControllerCommandLine(['--lease-duration', '1s'], {}), /--lease-duration/);
    assert.throws(() => parseControllerCommandLine(['--nope'], {}), ConfigError);
  });
});

describe('controller shared pieces', () => {
  it('names pull-secret copies stably per source and within DNS length', () => {
    assert.equal(copyNameFor('ns', 'regcred'), copyNameFor('ns', 'regcred'));
    assert.notEqual(copyNameFor('ns', 'regcred'), copyNameFor('other', 'regcred'));
    assert.ok(copyNameFor('ns', 'a'.repeat(253)).length <= 253);
  });
});
