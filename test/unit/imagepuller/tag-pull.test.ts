import assert from 'node:assert/strict';
import type { ImageTagStatus } from '../../../src/api/nodeimage.js';
import { PullSecretStore } from '../../../src/daemon/imagepuller/pull-secrets.js';
import { RunSlots } from '../../../src/daemon/run-slots.js';
import {
  imageIdDigest,
  TagPull,
  type TagPullResult,
  type TagPullSpec,
} from '../../../src/daemon/imagepuller/tag-pull.js';
import { silentLogger, type Logger } from '../../../src/observability/logger.js';
import { capturingLogger } from '../../support/capturing-logger.js';
import { FakeClock } from '../../../src/util/clock.js';
import { until } from '../../support/wait.js';
import { dockerConfigSecret, FakeImageRuntime, secretReader } from './fakes.js';
import type { PullSecretObject } from '../../../src/daemon/imagepuller/docker-keyring.js';

const REG = '127.0.0.1:5000';

const IMAGE = `${REG}/test/busybox`;

/** Attempts the pull has logged as failed; it logs each just before it backs off. */
function failedAttempts(lines: string[]): number {
  return lines.filter((l) => l.includes('"msg":"image pull attempt failed"')).length;
}

interface Harness {
  clock: FakeClock;
  runtime: FakeImageRuntime;
  slots: RunSlots;
  reads: string[];
  start(spec: Partial<TagPullSpec>): { pull: TagPull; history: ImageTagStatus[]; results: TagPullResult[] };
}

function harness(
  options: {
    cap?: number;
    secrets?: Record<string, PullSecretObject>;
    connected?: Promise<void>;
    logger?: Logger;
  } = {},
): Harness {
  const clock = new FakeClock();
  const runtime = new FakeImageRuntime();
  const slots = new RunSlots(options.cap ?? 2);
  const { read, reads } = secretReader(options.secrets ?? {});
  const secrets = new PullSecretStore(read, clock, 60_000);
  return {
    clock,
    runtime,
    slots,
    reads,
    start(spec) {
      const history: ImageTagStatus[] = [];
      const results: TagPullResult[] = [];
      const full: TagPullSpec = { imageName: IMAGE, tag: '1.0', version: 0, ...spec };
      const pull: TagPull = new TagPull(full, {
        runtime: async () => {
          await options.connected;
          return runtime;
        },
        slots,
        secrets,
        clock,
        logger: options.logger ?? silentLogger,
        onChange: () => history.push(pull.status),
        onFinished: (r) => results.push(r),
      });
      return { pull, history, results };
    },
  };
}

describe('imagepuller TagPull', () => {
  it('goes Waiting → Pulling → Succeeded with imageID, progress 100 and the sandbox config', async () => {
    const h = harness();
    const { pull, history, results } = h.start({
      sandboxConfig: { labels: { team: 'a' }, annotations: { note: 'x' } },
    });
    assert.equal(pull.status.phase, 'Waiting');
    assert.equal(pull.status.version, 0);
    await pull.done;
    assert.deepEqual(
      history.map((s) => s.phase),
      ['Pulling', 'Succeeded'],
    );
    const done = pull.status;
    assert.equal(done.phase, 'Succeeded');
    assert.equal(done.progress, 100);
    assert.equal(done.imageID, `${IMAGE}@sha256:${'a'.repeat(64)}`);
    assert.ok(done.startTime && done.completionTime);
    assert.equal(results.length, 1);
    const [call] = h.runtime.pulls;
    assert.equal(call!.request.image?.image, `${IMAGE}:1.0`);
    assert.deepEqual(call!.request.sandbox_config?.labels, { team: 'a' });
    assert.deepEqual(call!.request.sandbox_config?.annotations, {
      note: 'x',
      'apps.kruise.io/pulling-image-by': 'kruise-daemon',
    });
    assert.equal(call!.request.auth, undefined, 'no credentials without pull secrets');
  });

  it('stays Waiting, spending no attempt, until the runtime is connected', async () => {
    let connect!: () => void;
    const h = harness({ connected: new Promise<void>((resolve) => (connect = resolve)) });
    const { pull } = h.start({ pullPolicy: { timeoutSeconds: 1, backoffLimit: 0 } });
    await h.clock.advance(5000);
    assert.equal(pull.status.phase, 'Waiting');
    assert.equal(h.slots.inUse, 0, 'no slot held while waiting for the runtime');
    connect();
    await pull.done;
    assert.equal(pull.status.phase, 'Succeeded');
  });

  it('pulls a digest as name@digest (not name:sha256:...)', async () => {
    const h = harness();
    const digest = `sha256:${'b'.repeat(64)}`;
    const { pull } = h.start({ tag: digest });
    await pull.done;
    assert.equal(h.runtime.pulls[0]!.request.image?.image, `${IMAGE}@${digest}`);
    assert.equal(pull.status.phase, 'Succeeded');
  });

  it('makes backoffLimit+1 attempts with 1 s, 2 s, ... between them, then fails with the last error', async () => {
    const lines: string[] = [];
    const h = harness({ logger: capturingLogger(lines) });
    h.runtime.script.set(`${IMAGE}:nope`, [{ fail: 'failed to resolve reference: not found', code: 5 }]);
    const { pull, results } = h.start({ tag: 'nope', pullPolicy: { backoffLimit: 2 } });
    await until(() => failedAttempts(lines) === 1, 'the first attempt failed (the pull then backs off)');
    assert.equal(h.runtime.pulls.length, 1);
    await h.clock.advance(999);
    assert.equal(h.runtime.pulls.length, 1, 'no second attempt before 1 s');
    await h.clock.advance(1);
    assert.equal(h.runtime.pulls.length, 2);
    await h.clock.advance(1999);
    assert.equal(h.runtime.pulls.length, 2, 'the second backoff is 2 s');
    await h.clock.advance(1);
    await pull.done;
    assert.equal(h.runtime.pulls.length, 3);
    assert.equal(pull.status.phase, 'Failed');
    assert.match(pull.status.message ?? '', /not found/);
    assert.ok(pull.status.completionTime);
    assert.equal(results[0]?.status.phase, 'Failed');
  });

  it('cuts an attempt at timeoutSeconds (the CRI call is cancelled) and says so', async () => {
    const h = harness();
    h.runtime.script.set(`${IMAGE}:slow`, ['hang']);
    const { pull } = h.start({ tag: 'slow', pullPolicy: { timeoutSeconds: 5, backoffLimit: 0 } });
    await until(() => h.runtime.pulls.length === 1, 'the CRI pull is in flight');
    assert.equal(pull.status.phase, 'Pulling');
    await h.clock.advance(4999);
    assert.equal(pull.status.phase, 'Pulling');
    await h.clock.advance(1);
    await pull.done;
    assert.equal(pull.status.phase, 'Failed');
    assert.match(pull.status.message ?? '', /timed out after 5s \(pullPolicy\.timeoutSeconds\)/);
    assert.equal(h.runtime.pulls[0]!.outcome, 'cancelled');
    assert.ok(h.runtime.pulls[0]!.timeoutMs! >= 5000, 'the CRI call carries a deadline');
  });

  it('stops retrying at activeDeadlineSeconds, counted from the start of the pull', async () => {
    const h = harness();
    h.runtime.script.set(`${IMAGE}:slow`, ['hang']);
    const { pull } = h.start({
      tag: 'slow',
      pullPolicy: { timeoutSeconds: 2, backoffLimit: 10, activeDeadlineSeconds: 4 },
    });
    await h.clock.advance(4000);
    await pull.done;
    assert.equal(pull.status.phase, 'Failed');
    assert.match(pull.status.message ?? '', /exceeds the activeDeadlineSeconds \(4s\)/);
    assert.ok(h.runtime.pulls.length <= 2, `attempts within 4 s: ${h.runtime.pulls.length}`);
  });

  it('IfNotPresent: a present image succeeds without a pull; Always pulls anyway', async () => {
    const h = harness();
    h.runtime.present.set(`${IMAGE}:1.0`, 'sha256:present');
    const ifNotPresent = h.start({ imagePullPolicy: 'IfNotPresent' });
    await ifNotPresent.pull.done;
    assert.equal(ifNotPresent.pull.status.phase, 'Succeeded');
    assert.equal(ifNotPresent.pull.status.imageID, `${IMAGE}@sha256:present`);
    assert.equal(ifNotPresent.results[0]?.present, true);
    assert.equal(h.runtime.pulls.length, 0);
    const always = h.start({ imagePullPolicy: 'Always' });
    await always.pull.done;
    assert.equal(h.runtime.pulls.length, 1);
  });

  it('fails at once, without a pull, on a reference that cannot be parsed', async () => {
    const h = harness();
    const { pull } = h.start({ imageName: 'Bad/UPPER', tag: '1' });
    await pull.done;
    assert.equal(pull.status.phase, 'Failed');
    assert.match(pull.status.message ?? '', /invalid image Bad\/UPPER:1/);
    assert.equal(h.runtime.pulls.length, 0);
    assert.equal(h.slots.inUse, 0);
  });

  it('tries each matching credential in turn and keeps the one that works', async () => {
    const h = harness({
      secrets: {
        stale: dockerConfigSecret('stale', { [`${REG}/test`]: { username: 'u', password: 'old' } }),
        host: dockerConfigSecret('host', {
          [REG]: { auth: Buffer.from('u:good').toString('base64') },
          'other.example.com': { username: 'x', password: 'y' },
        }),
      },
    });
    const ref = `${IMAGE}:1.0`;
    h.runtime.script.set(ref, [{ fail: 'unexpected status: 401 Unauthorized' }, { id: 'sha256:ok' }]);
    const { pull } = h.start({ pullSecrets: [{ name: 'host' }, { namespace: 'kruise-daemon-config', name: 'stale' }] });
    await pull.done;
    assert.equal(pull.status.phase, 'Succeeded');
    // the more specific key (with a path) first; the key of another registry never
    assert.deepEqual(
      h.runtime.pulls.map((p) => p.request.auth?.password),
      ['old', 'good'],
    );
    assert.equal(h.runtime.pulls[0]!.request.auth?.username, 'u');
    assert.deepEqual(h.reads.sort(), ['host', 'stale']);
  });

  it('skips a missing pull secret: a warning naming it, then a pull with the secrets that exist, or anonymous', async () => {
    const lines: string[] = [];
    const h = harness({
      secrets: { host: dockerConfigSecret('host', { [REG]: { username: 'u', password: 'good' } }) },
      logger: capturingLogger(lines),
    });
    const both = h.start({
      tag: 'a',
      pullSecrets: [{ name: 'gone' }, { name: 'host' }],
      pullPolicy: { backoffLimit: 0 },
    });
    await both.pull.done;
    assert.equal(both.pull.status.phase, 'Succeeded');
    assert.equal(h.runtime.pullsOf(`${IMAGE}:a`)[0]!.request.auth?.password, 'good', 'the secret that exists is used');
    assert.match(both.pull.status.message ?? '', /pull secret kruise-daemon-config\/gone not found, skipped/);
    const alone = h.start({ tag: 'b', pullSecrets: [{ name: 'gone' }], pullPolicy: { backoffLimit: 0 } });
    await alone.pull.done;
    assert.equal(alone.pull.status.phase, 'Succeeded');
    assert.equal(h.runtime.pullsOf(`${IMAGE}:b`)[0]!.request.auth, undefined, 'an anonymous pull');
    const warnings = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.level === 40);
    assert.ok(
      warnings.some((l) => l.secret === 'kruise-daemon-config/gone' && /not found/.test(String(l.msg))),
      `a warning names the missing secret: ${lines.join('\n')}`,
    );
  });

  it('a secret deleted after it was cached is skipped once the cache expires (a NodeImage may still name it)', async () => {
    const secrets: Record<string, PullSecretObject> = {
      copy: dockerConfigSecret('copy', { [REG]: { username: 'u', password: 'p' } }),
    };
    const h = harness({ secrets });
    const first = h.start({ pullSecrets: [{ name: 'copy' }], pullPolicy: { backoffLimit: 0 } });
    await first.pull.done;
    assert.equal(h.runtime.pulls[0]!.request.auth?.password, 'p');
    delete secrets.copy;
    await h.clock.advance(60_000);
    const again = h.start({ version: 1, pullSecrets: [{ name: 'copy' }], pullPolicy: { backoffLimit: 0 } });
    await again.pull.done;
    assert.equal(again.pull.status.phase, 'Succeeded', again.pull.status.message);
    assert.equal(h.runtime.pulls[1]!.request.auth, undefined);
    assert.deepEqual(h.reads, ['copy', 'copy'], 'read again after the cache time');
  });

  it('a failure says which missing secret was skipped; a namespace that is not allowed fails without a pull', async () => {
    const h = harness();
    h.runtime.script.set(`${IMAGE}:1.0`, [{ fail: 'pull access denied, 401 Unauthorized' }]);
    const missing = h.start({ pullSecrets: [{ name: 'gone' }], pullPolicy: { backoffLimit: 0 } });
    await missing.pull.done;
    assert.equal(missing.pull.status.phase, 'Failed');
    assert.match(missing.pull.status.message ?? '', /401 Unauthorized/);
    assert.match(missing.pull.status.message ?? '', /pull secret kruise-daemon-config\/gone not found, skipped/);
    const pulls = h.runtime.pulls.length;
    const elsewhere = h.start({
      tag: '2.0',
      pullSecrets: [{ namespace: 'default', name: 's' }],
      pullPolicy: { backoffLimit: 0 },
    });
    await elsewhere.pull.done;
    assert.equal(elsewhere.pull.status.phase, 'Failed');
    assert.match(elsewhere.pull.status.message ?? '', /default\/s is not in namespace kruise-daemon-config/);
    assert.equal(h.runtime.pulls.length, pulls);
  });

  it('reads a missing secret again on the next attempt (the controller may copy it in late)', async () => {
    const secrets: Record<string, PullSecretObject> = {};
    const lines: string[] = [];
    const h = harness({ secrets, logger: capturingLogger(lines) });
    h.runtime.script.set(`${IMAGE}:1.0`, [{ fail: 'pull access denied, 401 Unauthorized' }, { id: 'sha256:ok' }]);
    const { pull } = h.start({ pullSecrets: [{ name: 'late' }], pullPolicy: { backoffLimit: 1 } });
    await until(() => failedAttempts(lines) === 1, 'the first attempt failed (the pull then backs off)');
    assert.equal(h.runtime.pulls.length, 1);
    assert.equal(h.runtime.pulls[0]!.request.auth, undefined, 'the first attempt, without the secret, is anonymous');
    secrets.late = dockerConfigSecret('late', { [REG]: { username: 'u', password: 'p' } });
    await h.clock.advance(1000);
    await pull.done;
    assert.equal(pull.status.phase, 'Succeeded');
    assert.equal(h.runtime.pulls[1]!.request.auth?.password, 'p');
    assert.equal(pull.status.message, undefined, 'nothing was skipped by the attempt that pulled');
  });

  it('explains a 401 without credentials, naming the registry', async () => {
    const h = harness();
    h.runtime.script.set(`${IMAGE}:1.0`, [{ fail: 'pull access denied, 401 Unauthorized' }]);
    const { pull } = h.start({ pullPolicy: { backoffLimit: 0 } });
    await pull.done;
    assert.equal(pull.status.phase, 'Failed');
    assert.match(
      pull.status.message ?? '',
      new RegExp(`no pull secret gave credentials for registry ${REG.replace(/\./g, '\\.')}`),
    );
  });

  it('abort() cancels the CRI call, frees the slot and reports nothing more', async () => {
    const h = harness({ cap: 1 });
    h.runtime.script.set(`${IMAGE}:1.0`, ['hang']);
    const { pull, history, results } = h.start({});
    await until(() => h.runtime.pulls.length === 1, 'the CRI pull is in flight');
    assert.equal(pull.status.phase, 'Pulling');
    const before = history.length;
    pull.abort();
    await pull.done;
    assert.equal(history.length, before);
    assert.equal(results.length, 0);
    assert.equal(h.slots.inUse, 0);
    assert.equal(h.runtime.pulls[0]!.outcome, 'cancelled');
  });

  it('holds tags in Waiting beyond the node cap and never pulls one reference twice at once', async () => {
    const h = harness({ cap: 2 });
    for (const tag of ['a', 'b', 'c']) h.runtime.script.set(`${IMAGE}:${tag}`, ['hang']);
    const a = h.start({ tag: 'a' });
    const b = h.start({ tag: 'b' });
    const c = h.start({ tag: 'c' });
    await until(() => h.runtime.pulls.length === 2, 'two CRI pulls in flight');
    assert.deepEqual(
      [a, b, c].map((x) => x.pull.status.phase),
      ['Pulling', 'Pulling', 'Waiting'],
    );
    // a second pull of tag a (a version bump) waits for the first to let go, though a slot is free after b ends
    const a2 = h.start({ tag: 'a', version: 1 });
    b.pull.abort();
    await b.pull.done;
    await until(() => h.runtime.pullsOf(`${IMAGE}:c`).length === 1, 'the pull of c is in flight');
    assert.equal(c.pull.status.phase, 'Pulling');
    assert.equal(a2.pull.status.phase, 'Waiting');
    a.pull.abort();
    await a.pull.done;
    await until(() => h.runtime.pullsOf(`${IMAGE}:a`).length === 2, 'the second pull of a is in flight');
    assert.equal(a2.pull.status.phase, 'Pulling', 'the reference is free again');
    assert.equal(h.runtime.maxInFlight, 2);
    assert.equal(h.runtime.pullsOf(`${IMAGE}:a`).filter((p) => p.outcome === undefined).length, 1);
    c.pull.abort();
    await c.pull.done;
    a2.pull.abort();
    await a2.pull.done;
  });
});

describe('imageIdDigest: a runtime image id as the digest of imageID', () => {
  it("keeps containerd's sha256:<hex> and prefixes CRI-O's bare hex", () => {
    const hex = '48246b053b12afc8d78faf1e198a4207cb5a3f8f1fe35ba9261f7745d48c0733';
    assert.equal(imageIdDigest(`sha256:${hex}`), `sha256:${hex}`);
    assert.equal(imageIdDigest(hex), `sha256:${hex}`);
    assert.equal(imageIdDigest('not-a-digest'), 'not-a-digest');
  });
});
