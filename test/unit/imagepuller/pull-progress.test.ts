// A running pull's progress (src/daemon/imagepuller/pull-progress.ts) from a content store as containerd keeps it:
// the manifest found by its distribution-source label and layer labels, blobs done when committed, partly by their
// ingests' offsets; nothing told when two manifests of the repository are being fetched.
import assert from 'node:assert/strict';
import { distributionSource, pullProgress } from '../../../src/daemon/imagepuller/pull-progress.js';
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
});
