import assert from 'node:assert/strict';
import type { ImageTagStatus, NodeImageSpec } from '../../../src/api/nodeimage.js';
import { buildNodeImageStatus } from '../../../src/daemon/imagepuller/nodeimage-status.js';
import { PullSecretStore } from '../../../src/daemon/imagepuller/pull-secrets.js';
import { StatusWriter } from '../../../src/daemon/status-writer.js';
import { tagSpecProblem } from '../../../src/daemon/imagepuller/tag-spec-check.js';
import { parseDaemonCommandLine } from '../../../src/daemon/options.js';
import { ConfigError } from '../../../src/util/config-error.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { FakeClock } from '../../../src/util/clock.js';
import { dockerConfigSecret, secretReader } from './fakes.js';

describe('imagepuller status', () => {
  it('counts phases over the spec, sorts tags, omits images without status and drops unknown tags', () => {
    const spec: NodeImageSpec = {
      images: {
        b: { tags: [{ tag: '2' }, { tag: '1' }] },
        a: { tags: [{ tag: 'x' }, { tag: 'y' }, { tag: 'z' }] },
        c: { tags: [{ tag: 'none' }] },
      },
    };
    const known: Record<string, ImageTagStatus> = {
      'b/1': { tag: '1', phase: 'Succeeded', version: 0 },
      'b/2': { tag: '2', phase: 'Pulling', version: 0 },
      'a/x': { tag: 'x', phase: 'Failed', version: 0, message: 'm' },
      'a/y': { tag: 'y', phase: 'Waiting', version: 0 },
      'gone/t': { tag: 't', phase: 'Succeeded' },
    };
    const status = buildNodeImageStatus(spec, (name, tag) => known[`${name}/${tag}`]);
    assert.deepEqual(status, {
      desired: 6,
      succeeded: 1,
      failed: 1,
      pulling: 1,
      waiting: 1,
      imageStatuses: {
        a: { tags: [known['a/x'], known['a/y']] },
        b: { tags: [known['b/1'], known['b/2']] },
      },
    });
    assert.deepEqual(
      buildNodeImageStatus(undefined, () => undefined),
      {
        desired: 0,
        succeeded: 0,
        failed: 0,
        pulling: 0,
        waiting: 0,
      },
    );
  });

  it('writer: the first change goes out at once, a burst becomes one write, then at most one per interval', async () => {
    const clock = new FakeClock();
    const writes: number[] = [];
    const writer = new StatusWriter({
      clock,
      logger: silentLogger,
      minIntervalMs: 300,
      write: () => {
        writes.push(clock.now());
        return Promise.resolve();
      },
    });
    const t0 = clock.now();
    writer.request();
    writer.request();
    await clock.advance(0);
    assert.deepEqual(writes, [t0]);
    for (let i = 0; i < 10; i++) {
      writer.request();
      await clock.advance(20);
    }
    await clock.advance(300);
    assert.equal(writes.length, 2, `writes at ${writes.map((w) => w - t0).join(', ')}`);
    assert.equal(writes[1]! - t0, 300);
    await clock.advance(5000);
    assert.equal(writes.length, 2, 'nothing more without a request');
  });

  it('writer: a failed write is retried with backoff', async () => {
    const clock = new FakeClock();
    let calls = 0;
    const writer = new StatusWriter({
      clock,
      logger: silentLogger,
      minIntervalMs: 100,
      write: () => (++calls < 3 ? Promise.reject(new Error('conflict storm')) : Promise.resolve()),
    });
    writer.request();
    await clock.advance(0);
    assert.equal(calls, 1);
    await clock.advance(1000);
    assert.equal(calls, 2);
    await clock.advance(2000);
    assert.equal(calls, 3);
    await clock.advance(60_000);
    assert.equal(calls, 3);
    await writer.close();
  });

  it('writer with a window: the first request waits the window, so what comes with it shares the write; stop() drops what is pending', async () => {
    const clock = new FakeClock();
    const writes: number[] = [];
    const writer = new StatusWriter({
      clock,
      logger: silentLogger,
      windowMs: 1000,
      minIntervalMs: 1000,
      write: () => {
        writes.push(clock.now());
        return Promise.resolve();
      },
    });
    const t0 = clock.now();
    for (let i = 0; i < 5; i++) {
      writer.request();
      await clock.advance(100);
    }
    await clock.advance(500);
    assert.deepEqual(writes, [t0 + 1000]);
    writer.request();
    await writer.stop();
    await clock.advance(5000);
    assert.equal(writes.length, 1, 'nothing written after stop()');
  });

  it('secret store: one GET per secret within the cache time, again after it', async () => {
    const clock = new FakeClock();
    const { read, reads } = secretReader({ s: dockerConfigSecret('s', { r: { username: 'u', password: 'p' } }) });
    const store = new PullSecretStore(read, clock, 60_000);
    const request = { imageName: 'img', tag: '1', pullSecrets: [{ name: 's' }] };
    await Promise.all([store.credentials(request), store.credentials(request)]);
    await store.credentials(request);
    assert.deepEqual(reads, ['s']);
    await clock.advance(60_000);
    await store.credentials(request);
    assert.deepEqual(reads, ['s', 's']);
  });

  it('tag checks name the field at fault', () => {
    const problem = (image: Record<string, unknown>, tag: Record<string, unknown>): string | undefined =>
      tagSpecProblem('img', image, { tag: '1', ...tag });
    assert.equal(problem({}, { version: 2, imagePullPolicy: 'Always', pullPolicy: { timeoutSeconds: 5 } }), undefined);
    assert.match(problem({}, { version: -1 }) ?? '', /img:1: version must be a whole number >= 0/);
    assert.match(problem({}, { imagePullPolicy: 'Sometimes' }) ?? '', /imagePullPolicy must be Always or IfNotPresent/);
    assert.match(
      problem({}, { pullPolicy: { timeoutSeconds: '10' } }) ?? '',
      /pullPolicy.timeoutSeconds must be a whole number/,
    );
    assert.match(problem({ pullSecrets: 'x' }, {}) ?? '', /pullSecrets must be a list/);
    assert.match(problem({ sandboxConfig: { labels: { a: 1 } } }, {}) ?? '', /sandboxConfig.labels must map strings/);
  });
});

describe('imagepuller flag --max-parallel-pulls', () => {
  it('defaults to 2, takes 1-64, and refuses anything else with a one-line message', () => {
    const env = { NODE_NAME: 'n1' };
    const parse = (args: string[]): number => {
      const parsed = parseDaemonCommandLine(args, env, () => undefined);
      assert.equal(parsed.kind, 'run');
      return parsed.kind === 'run' ? parsed.options.maxParallelPulls : -1;
    };
    assert.equal(parse([]), 2);
    assert.equal(parse(['--max-parallel-pulls', '1']), 1);
    assert.equal(parse(['--max-parallel-pulls=64']), 64);
    for (const bad of ['0', '65', '-1', 'two', '1.5', '']) {
      assert.throws(
        () => parse([`--max-parallel-pulls=${bad}`]),
        (err: Error) => {
          return (
            err instanceof ConfigError &&
            /--max-parallel-pulls/.test(err.message) &&
            /never unlimited/.test(err.message)
          );
        },
      );
    }
  });
});
