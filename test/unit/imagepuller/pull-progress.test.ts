// A running pull's progress (src/daemon/imagepuller/pull-progress.ts) from a content store as containerd keeps it:
// the manifest found by its distribution-source label and layer labels, blobs done when committed, partly by their
// ingests' offsets; nothing told when two manifests of the repository are being fetched.
import assert from 'node:assert/strict';
import { distributionSource, pullProgress } from '../../../src/daemon/imagepuller/pull-progress.js';
import { ProgressReader } from '../../../src/daemon/imagepuller/progress-reader.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { FakeClock } from '../../../src/util/clock.js';
import { waitFor } from '../../support/wait.js';
import { FakeContent, fakeDigest as digest } from './fakes.js';

const SINCE = Date.parse('2026-11-29T12:00:00Z');

describe('imagepuller: pull progress from the content store', () => {
  it("labels fetched content by the registry's host without its port, and the repository", () => {
    assert.deepEqual(distributionSource('127.0.0.1:5000/test/busybox', '1.0'), {
      key: 'containerd.io/distribution.source.127.0.0.1',
      value: 'test/busybox',
    });
    assert.deepEqual(distributionSource('nginx', '1.25'), {
      key: 'containerd.io/distribution.source.docker.io',
      value: 'library/nginx',
    });
  });

  it('0 before the manifest, then bytes committed and written over the total, at most 99; unknown when ambiguous', async () => {
    const store = new FakeContent();
    const image = { imageName: '127.0.0.1:5000/test/busybox', tag: '1.0' };
    const source = { 'containerd.io/distribution.source.127.0.0.1': 'test/busybox' };
    assert.equal(await pullProgress(store, image, SINCE), 0);
    // an older manifest of the repository, fetched before this pull: not ours
    store.manifest('0', source, [{ d: digest('9'), size: 10 }], SINCE - 60_000);
    assert.equal(await pullProgress(store, image, SINCE), 0);
    store.manifest(
      '1',
      source,
      [
        { d: digest('a'), size: 600 },
        { d: digest('b'), size: 300 },
      ],
      SINCE + 500,
    );
    // config committed (100), layer a half written (300 of 600), b not started: 400 of 1000
    store.blobs.set(digest('c'), { digest: digest('c'), size: 100, updatedAt: SINCE, labels: {} });
    store.ingestList = [{ ref: `layer-${digest('a')}`, offset: 300, total: 600, expected: '' }];
    assert.equal(await pullProgress(store, image, SINCE), 40);
    store.blobs.set(digest('a'), { digest: digest('a'), size: 600, updatedAt: SINCE, labels: {} });
    store.blobs.set(digest('b'), { digest: digest('b'), size: 300, updatedAt: SINCE, labels: {} });
    store.ingestList = [];
    assert.equal(await pullProgress(store, image, SINCE), 99, 'all bytes in, the pull not ended: 99');
    store.manifest('2', source, [{ d: digest('d'), size: 10 }], SINCE + 500);
    assert.equal(await pullProgress(store, image, SINCE), undefined, 'two manifests since the start: cannot tell');
  });

  it('refuses, in the order the pulls started, the first whose bytes on top of the earlier ones would not fit', async () => {
    const clock = new FakeClock(SINCE);
    const store = new FakeContent();
    const MiB = 1024 * 1024;
    const pull = (imageName: string, startedAt: number) => ({
      spec: { imageName, tag: '1.0', version: 0 },
      pullingSince: startedAt as number | undefined,
      progress: -1,
      refused: '',
      setProgress(percent: number) {
        this.progress = percent;
        return true;
      },
      refuse(message: string) {
        this.refused = message;
        this.pullingSince = undefined;
      },
    });
    // started in this order: a (10 MiB of layers), b (20 MiB), c (1 MiB); listed out of order
    const a = pull('127.0.0.1:5000/test/a', SINCE);
    const b = pull('127.0.0.1:5000/test/b', SINCE + 10);
    const c = pull('127.0.0.1:5000/test/c', SINCE + 20);
    store.manifest(
      '1',
      { 'containerd.io/distribution.source.127.0.0.1': 'test/a' },
      [{ d: digest('a'), size: 10 * MiB }],
      SINCE + 100,
    );
    store.manifest(
      '2',
      { 'containerd.io/distribution.source.127.0.0.1': 'test/b' },
      [{ d: digest('b'), size: 20 * MiB }],
      SINCE + 100,
    );
    store.manifest(
      '3',
      { 'containerd.io/distribution.source.127.0.0.1': 'test/c' },
      [{ d: digest('d'), size: 1 * MiB }],
      SINCE + 100,
    );
    // room for 70 MiB below the threshold: a takes about 30 (10 to come, 20 unpacked), b 60 more: refused; c 3 fits
    const asked: number[] = [];
    const reader = new ProgressReader({
      store: () => Promise.resolve(store),
      running: () => [c, b, a],
      onMoved: () => undefined,
      disk: {
        check: () => Promise.resolve(),
        wouldCross: (bytes) => {
          asked.push(Math.round(bytes / MiB));
          return bytes > 70 * MiB ? 'past the threshold' : undefined;
        },
      },
      clock,
      logger: silentLogger,
    });
    reader.start();
    try {
      // the first reading, a second in: sizes checked, no progress published before 5 s
      await clock.advance(1_000);
      await waitFor(() => asked.length === 3, { message: 'the three read' });
      assert.deepEqual(asked, [30, 90, 33]);
      assert.equal(a.refused, '');
      assert.match(
        b.refused,
        /^not pulled: its manifest names 20\.0 MiB of layers, and with them unpacked past the threshold$/,
      );
      assert.equal(c.refused, '');
      assert.equal(c.progress, -1, 'no progress before 5 s');
      await clock.advance(4_000);
      await waitFor(() => c.progress === 0, { message: 'progress published at 5 s' });
      assert.equal(b.progress, -1, 'a refused pull is not given progress');
    } finally {
      await reader.stop();
    }
  });
});
