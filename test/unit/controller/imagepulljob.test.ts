import assert from 'node:assert/strict';
import type { NodeImage } from '../../../src/api/nodeimage.js';
import { jobImageOf, parallelismOf } from '../../../src/controller/imagepulljob/job-image.js';
import { calculateJobStatus, statusMessage } from '../../../src/controller/imagepulljob/job-status.js';
import {
  neverActiveDeadlineSeconds,
  tagPullPolicyFor,
  writeJobTag,
} from '../../../src/controller/imagepulljob/tag-write.js';
import { changedTagOwners } from '../../../src/controller/imagepulljob/controller.js';
import type { ImagePullJob } from '../../../src/api/imagepulljob.js';
import { FakeClock } from '../../../src/util/clock.js';

const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
const policy = { defaultTtlSeconds: 300, random: () => 0 };

function job(spec: Partial<ImagePullJob['spec']> = {}, uid = 'uid-1'): ImagePullJob {
  return {
    metadata: { name: 'j', namespace: 'ns', uid },
    spec: { image: 'nginx:1.25', completionPolicy: { type: 'Always' }, imagePullPolicy: 'IfNotPresent', ...spec },
  };
}

function node(name: string): NodeImage {
  return { metadata: { name }, spec: {} };
}

const image = { name: 'nginx', tag: '1.25' };

function report(ni: NodeImage, phase: 'Succeeded' | 'Failed' | 'Pulling', version = 0): void {
  ni.status = { desired: 1, imageStatuses: { nginx: { tags: [{ tag: '1.25', phase, version }] } } };
}

describe('imagepulljob controller: image, parallelism', () => {
  it('splits the image into the NodeImage key and tag, and reports a bad image', () => {
    assert.deepEqual(jobImageOf(job({ image: 'docker.io/library/nginx:1.25' })), image);
    assert.ok('error' in jobImageOf(job({ image: 'Bad:Image:x' })));
  });

  it('reads parallelism: default 1, strings, bad values pause', () => {
    assert.equal(parallelismOf(job()), 1);
    assert.equal(parallelismOf(job({ parallelism: '4' })), 4);
    assert.equal(parallelismOf(job({ parallelism: 0 })), 0);
    assert.equal(parallelismOf(job({ parallelism: '50%' })), 0);
  });
});

describe('imagepulljob controller: writing tags', () => {
  it('adds a new tag with owner, version 0, createdAt, policies; a second write changes nothing', () => {
    const ni = node('n1');
    assert.equal(writeJobTag(ni, job(), image, [], clock.now(), policy), true);
    const tag = ni.spec?.images?.nginx?.tags[0];
    assert.equal(tag?.version, 0);
    assert.equal(tag?.ownerReferences?.[0]?.uid, 'uid-1');
    assert.equal(tag?.createdAt, '2026-01-01T00:00:00Z');
    assert.equal(tag?.imagePullPolicy, 'IfNotPresent');
    assert.deepEqual(tag?.pullPolicy, { timeoutSeconds: 600, backoffLimit: 3, ttlSecondsAfterFinished: 1800 + 300 });
    assert.equal(writeJobTag(ni, job(), image, [], clock.now(), policy), false);
  });

  it('starts above a version the node already reported', () => {
    const ni = node('n1');
    report(ni, 'Succeeded', 4);
    writeJobTag(ni, job(), image, [], clock.now(), policy);
    assert.equal(ni.spec?.images?.nginx?.tags[0]?.version, 5);
  });

  it('lets a second job join the tag: owners merged, version bumped, first pull policy kept', () => {
    const ni = node('n1');
    writeJobTag(ni, job({ pullPolicy: { timeoutSeconds: 30, backoffLimit: 1 } }), image, [], clock.now(), policy);
    writeJobTag(ni, job({ imagePullPolicy: 'Always' }, 'uid-2'), image, [], clock.now() + 1000, policy);
    const tag = ni.spec?.images?.nginx?.tags[0];
    assert.deepEqual(
      tag?.ownerReferences?.map((o) => o.uid),
      ['uid-1', 'uid-2'],
    );
    assert.equal(tag?.version, 1);
    assert.equal(tag?.imagePullPolicy, 'Always');
    assert.equal(tag?.pullPolicy?.timeoutSeconds, 30);
  });

  it('brings an owned tag in line with an edited pull policy (OpenKruise #2221), without a version bump', () => {
    const ni = node('n1');
    writeJobTag(ni, job(), image, [], clock.now(), policy);
    const edited = job({ imagePullPolicy: 'Always', pullPolicy: { timeoutSeconds: 60, backoffLimit: 0 } });
    assert.equal(writeJobTag(ni, edited, image, [], clock.now(), policy), true);
    const tag = ni.spec?.images?.nginx?.tags[0];
    assert.equal(tag?.imagePullPolicy, 'Always');
    assert.equal(tag?.pullPolicy?.timeoutSeconds, 60);
    assert.equal(tag?.pullPolicy?.backoffLimit, 0);
    assert.equal(tag?.version, 0);
  });

  it('adds pull-secret references once, and leaves other images alone', () => {
    const ni = node('n1');
    ni.spec = { images: { other: { tags: [{ tag: '1' }] } } };
    const ref = { namespace: 'kruise-daemon-config', name: 'regcred-1234', mode: 'batch' };
    writeJobTag(ni, job(), image, [ref], clock.now(), policy);
    writeJobTag(ni, job(), image, [ref], clock.now(), policy);
    assert.deepEqual(ni.spec.images?.nginx?.pullSecrets, [ref]);
    assert.deepEqual(ni.spec.images?.other, { tags: [{ tag: '1' }] });
  });

  it('gives Never jobs a ~daily TTL and a deadline of at least 1800 s, longer for its attempts', () => {
    const p = tagPullPolicyFor(job({ completionPolicy: { type: 'Never' } }), {
      defaultTtlSeconds: 300,
      random: () => 0.5,
    });
    assert.equal(p.ttlSecondsAfterFinished, 86_400);
    // the defaults: 4 attempts of 600 s and waits of 1 + 2 + 4 s
    assert.equal(p.activeDeadlineSeconds, 2407);
    const a = tagPullPolicyFor(
      job({ completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 20, activeDeadlineSeconds: 900 } }),
      policy,
    );
    assert.equal(a.ttlSecondsAfterFinished, 320);
    assert.equal(a.activeDeadlineSeconds, 900);
  });

  it("gives a Never job's tags a deadline that lets every attempt run (OpenKruise #2071: timeoutSeconds alone)", () => {
    const never = (timeoutSeconds: number, backoffLimit: number): number | undefined =>
      tagPullPolicyFor(
        job({ completionPolicy: { type: 'Never' }, pullPolicy: { timeoutSeconds, backoffLimit } }),
        policy,
      ).activeDeadlineSeconds;
    // the case: 1 h attempts, 3 retries -> 4 attempts and waits of 1 + 2 + 4 s (OpenKruise: 3600)
    assert.equal(never(3600, 3), 4 * 3600 + 7);
    assert.equal(neverActiveDeadlineSeconds(600, 3), 2407);
    assert.equal(neverActiveDeadlineSeconds(100, 0), 1800);
    // waits double up to 30 s: 1 + 2 + 4 + 8 + 16 + 30 + 30
    assert.equal(neverActiveDeadlineSeconds(1000, 7), 8000 + 91);
  });
});

describe('imagepulljob controller: status', () => {
  it('counts nodes by the phase of the job tag version, and lists the nodes still to write', () => {
    const nodes = ['a', 'b', 'c', 'd'].map(node);
    for (const ni of nodes.slice(0, 3)) writeJobTag(ni, job(), image, [], clock.now(), policy);
    report(nodes[0]!, 'Succeeded');
    report(nodes[1]!, 'Failed');
    report(nodes[2]!, 'Succeeded', 7); // an old version: still pulling
    const r = calculateJobStatus(job(), image, nodes, [], clock.now());
    assert.deepEqual(
      { desired: r.status.desired, active: r.status.active, succeeded: r.status.succeeded, failed: r.status.failed },
      { desired: 4, active: 1, succeeded: 1, failed: 1 },
    );
    assert.deepEqual(r.status.failedNodes, ['b']);
    assert.deepEqual(r.notSynced, ['d']);
    assert.equal(r.status.completionTime, undefined);
    assert.equal(r.status.message, 'job is running, progress 50.0%');
  });

  it('does not count a node whose tag belongs to another job only', () => {
    const ni = node('a');
    writeJobTag(ni, job({}, 'other'), image, [], clock.now(), policy);
    report(ni, 'Succeeded');
    const r = calculateJobStatus(job(), image, [ni], [], clock.now());
    assert.deepEqual(r.notSynced, ['a']);
    assert.equal(r.status.succeeded, 0);
  });

  it('lists a node missing the job pull secrets as not synced', () => {
    const ni = node('a');
    writeJobTag(ni, job(), image, [], clock.now(), policy);
    const r = calculateJobStatus(job(), image, [ni], [{ namespace: 'kruise-daemon-config', name: 's' }], clock.now());
    assert.deepEqual(r.notSynced, ['a']);
  });

  it('completes an Always job when every node finished, and an empty one at once; never a Never job', () => {
    const ni = node('a');
    writeJobTag(ni, job(), image, [], clock.now(), policy);
    report(ni, 'Succeeded');
    const done = calculateJobStatus(job(), image, [ni], [], clock.now());
    assert.equal(done.status.completionTime, '2026-01-01T00:00:00Z');
    assert.equal(done.status.message, 'job has completed');
    assert.ok(calculateJobStatus(job(), image, [], [], clock.now()).status.completionTime);
    const never = calculateJobStatus(job({ completionPolicy: { type: 'Never' } }), image, [ni], [], clock.now());
    assert.equal(never.status.completionTime, undefined);
  });

  it('ends an Always job at activeDeadlineSeconds with every unfinished node failed', () => {
    const nodes = ['a', 'b', 'c'].map(node);
    writeJobTag(nodes[0]!, job(), image, [], clock.now(), policy);
    report(nodes[0]!, 'Succeeded');
    writeJobTag(nodes[1]!, job(), image, [], clock.now(), policy);
    const j = job({ completionPolicy: { type: 'Always', activeDeadlineSeconds: 60 } });
    j.status = { desired: 3, startTime: '2026-01-01T00:00:00Z' };
    assert.equal(calculateJobStatus(j, image, nodes, [], clock.now() + 59_000).deadlineExceeded, false);
    const r = calculateJobStatus(j, image, nodes, [], clock.now() + 60_000);
    assert.equal(r.deadlineExceeded, true);
    assert.equal(r.status.message, 'job exceeds activeDeadlineSeconds');
    assert.deepEqual(r.status.failedNodes, ['b', 'c']);
    assert.equal(r.status.succeeded, 1);
  });

  it('formats the message as OpenKruise does', () => {
    assert.equal(statusMessage({ desired: 0 }), 'job is running, no progress');
    assert.equal(statusMessage({ desired: 3, succeeded: 1 }), 'job is running, progress 33.3%');
  });
});

describe('imagepulljob controller: event mapping', () => {
  it('names the owners of tags whose spec or status changed, not of untouched tags', () => {
    const old = node('a');
    writeJobTag(old, job({}, 'u1'), image, [], clock.now(), policy);
    writeJobTag(old, job({ image: 'nginx:2' }, 'u2'), { name: 'nginx', tag: '2' }, [], clock.now(), policy);
    const next = structuredClone(old);
    next.status = { desired: 2, imageStatuses: { nginx: { tags: [{ tag: '1.25', phase: 'Succeeded', version: 0 }] } } };
    assert.deepEqual([...changedTagOwners(old, next)], ['u1']);
  });
});
