// The disk check (src/daemon/imagepuller/image-fs.ts): usage as kubelet computes it, from CRI ImageFsInfo's
// mountpoint and statfs; full at kubelet's high threshold; what kubelet's GC must free to reach the low one; a
// reading that fails turns the check off and never holds a pull back.
import assert from 'node:assert/strict';
import { ImageFsGuard, type FsSpace } from '../../../src/daemon/imagepuller/image-fs.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { FakeClock } from '../../../src/util/clock.js';
import { FakeImageRuntime } from './fakes.js';

const GiB = 1024 ** 3;

describe('imagepuller: the image filesystem check', () => {
  it('full at 85%: says why, the excess over 80%, and wakes waiters once below', async () => {
    const runtime = new FakeImageRuntime();
    runtime.imageFs = { mountpoint: '/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs', usedBytes: 6 * GiB };
    let space: FsSpace = { capacityBytes: 10 * GiB, availableBytes: 1 * GiB };
    const paths: string[] = [];
    const guard = new ImageFsGuard({
      runtime: () => Promise.resolve(runtime),
      clock: new FakeClock(),
      logger: silentLogger,
      fsRoot: '/host',
      space: (path) => {
        paths.push(path);
        return Promise.resolve(space);
      },
    });
    await guard.check();
    assert.deepEqual(paths, ['/host/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs']);
    assert.equal(guard.usage()?.percent, 90);
    assert.equal(guard.usage()?.imagesBytes, 6 * GiB);
    assert.match(
      guard.full() ?? '',
      /^the image filesystem \(\/var\/lib\/containerd\/.*\) is 90\.0% full; kubelet's image GC starts at 85%/,
    );
    assert.equal(guard.excessBytes(), 1 * GiB); // 9 GiB used, 8 GiB at 80%
    let woken = false;
    const waiter = guard.whenRoom(new AbortController().signal).then(() => (woken = true));
    space = { capacityBytes: 10 * GiB, availableBytes: 1.6 * GiB }; // 84%
    await guard.check();
    await waiter;
    assert.equal(woken, true);
    assert.equal(guard.full(), undefined);
    assert.equal(guard.excessBytes(), 0);
  });

  it('a filesystem it cannot read turns the check off (said), and holds nothing back', async () => {
    const runtime = new FakeImageRuntime();
    const guard = new ImageFsGuard({
      runtime: () => Promise.resolve(runtime),
      clock: new FakeClock(),
      logger: silentLogger,
    });
    await guard.check();
    assert.match(guard.problem() ?? '', /names no image filesystem/);
    assert.equal(guard.full(), undefined);
    runtime.imageFs = { mountpoint: '/not/here', usedBytes: 0 };
    const missing = new ImageFsGuard({
      runtime: () => Promise.resolve(runtime),
      clock: new FakeClock(),
      logger: silentLogger,
      space: () => Promise.reject(new Error('ENOENT: no such file or directory')),
    });
    await missing.check();
    assert.match(missing.problem() ?? '', /cannot read the capacity of the image filesystem at \/not\/here: ENOENT/);
    await missing.whenRoom(new AbortController().signal);
  });
});
