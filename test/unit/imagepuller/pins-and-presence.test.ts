// The image puller with pins, the presence check and the disk check (controller, TagPulls, ImagePins,
// ImagePresence, ImageFsGuard) on a fake API server and a fake runtime (controller-harness.ts).
import assert from 'node:assert/strict';
import { CONTAINERD_PINNED_LABEL } from '../../../src/cri/containerd-images.js';
import { PULLED_AGAIN_NOTE } from '../../../src/daemon/imagepuller/controller.js';
import type { FsSpace } from '../../../src/daemon/imagepuller/image-fs.js';
import { PINNED_BY_LABEL } from '../../../src/daemon/imagepuller/image-pins.js';
import { waitFor } from '../../support/wait.js';
import { IMAGE, startController } from './controller-harness.js';
import { FakeContent, fakeDigest } from './fakes.js';

const GiB = 1024 ** 3;
const ref = (tag: string): string => `${IMAGE}:${tag}`;

describe('imagepuller: pins, the presence check and the disk', () => {
  it('pins a Succeeded tag, pulls it again when its image leaves the node, releases the pin when the tag leaves', async () => {
    const h = startController([{ tag: '1.0' }]);
    const REF = ref('1.0');
    try {
      await waitFor(() => h.labels.images.get(REF)?.[CONTAINERD_PINNED_LABEL] === 'pinned', {
        message: 'pinned after the pull',
      });
      assert.equal(h.labels.images.get(REF)?.[PINNED_BY_LABEL], 'kruise-daemon');
      assert.equal(h.runtime.pullsOf(REF).length, 1);

      // the image leaves the node (kubelet's GC, crictl rmi): the next check sees it, and it is pulled again
      h.runtime.present.delete(REF);
      await h.clock.advance(5_000);
      await waitFor(() => h.runtime.pullsOf(REF).length === 2, { message: 'pulled again after the check' });
      await waitFor(() => h.events.some((e) => e.reason === 'PulledImageRemoved'), { message: 'event' });
      assert.match(h.events.find((e) => e.reason === 'PulledImageRemoved')?.message ?? '', /was removed from the node/);
      await waitFor(() => h.labels.images.get(REF)?.[CONTAINERD_PINNED_LABEL] === 'pinned', {
        message: 'pinned again',
      });
      await h.clock.advance(10_000); // the status writer's interval
      await waitFor(() => h.tagStatus('1.0')?.message === PULLED_AGAIN_NOTE, {
        message: 'the status says why it was pulled again',
      });
      assert.equal(h.tagStatus('1.0')?.phase, 'Succeeded');

      // the tag leaves the spec (the job's TTL): its pin is released
      h.setTags([]);
      await waitFor(() => h.labels.images.get(REF)?.[CONTAINERD_PINNED_LABEL] === undefined, {
        message: 'unpinned when the tag left the spec',
      });
      assert.equal(h.labels.images.get(REF)?.[PINNED_BY_LABEL], undefined);
    } finally {
      await h.controller.stop();
    }
  });

  it('at the GC threshold: pins released oldest first, a new tag waits; an image kubelet then takes is Failed, not pulled again', async () => {
    let space: FsSpace = { capacityBytes: 10 * GiB, availableBytes: 5 * GiB };
    const h = startController(
      [
        { tag: 'old', createdAt: '2026-11-01T00:00:00Z' },
        { tag: 'mid', createdAt: '2026-11-10T00:00:00Z' },
        { tag: 'new', createdAt: '2026-11-20T00:00:00Z' },
      ],
      { disk: { space: () => Promise.resolve(space) } },
    );
    const pinned = (tag: string): boolean => h.labels.images.get(ref(tag))?.[CONTAINERD_PINNED_LABEL] === 'pinned';
    try {
      await waitFor(() => pinned('old') && pinned('mid') && pinned('new'), { message: 'all three pinned' });
      // 90% full: kubelet must free 1 GiB to reach 80%; each image holds 0.6 GiB: the two oldest pins go
      h.runtime.sizes.set(ref('old'), 0.6 * GiB);
      h.runtime.sizes.set(ref('mid'), 0.6 * GiB);
      h.runtime.sizes.set(ref('new'), 0.6 * GiB);
      h.runtime.imageFs = { mountpoint: '/var/lib/containerd', usedBytes: 1.8 * GiB };
      space = { capacityBytes: 10 * GiB, availableBytes: 1 * GiB };
      await h.clock.advance(10_000);
      await waitFor(() => !pinned('old') && !pinned('mid'), { message: 'the two oldest pins released' });
      assert.equal(pinned('new'), true, 'the newest pin stays');
      assert.equal(h.events.filter((e) => e.reason === 'ImagePinReleasedForDisk').length, 2);

      // a tag added now waits for disk space, saying so
      h.setTags([
        { tag: 'old', createdAt: '2026-11-01T00:00:00Z' },
        { tag: 'mid', createdAt: '2026-11-10T00:00:00Z' },
        { tag: 'new', createdAt: '2026-11-20T00:00:00Z' },
        { tag: 'later', createdAt: '2026-11-28T00:00:00Z' },
      ]);
      await h.clock.advance(10_000);
      await waitFor(() => /^waiting for disk space: the image filesystem/.test(h.tagStatus('later')?.message ?? ''), {
        message: 'the new tag waits for disk space',
      });
      assert.equal(h.runtime.pullsOf(ref('later')).length, 0);
      assert.match(
        h.tagStatus('old')?.message ?? '',
        /^pin released for disk space \(the image filesystem .* is 90\.0% full/,
      );

      // kubelet's GC takes the oldest: reported Failed, not pulled again
      h.runtime.present.delete(ref('old'));
      await h.clock.advance(5_000);
      await waitFor(() => h.tagStatus('old')?.phase === 'Failed', { message: 'old Failed' });
      assert.match(h.tagStatus('old')?.message ?? '', /removed by kubelet's image GC after its pin was released/);
      assert.equal(h.runtime.pullsOf(ref('old')).length, 1);

      // room again (below 80%): the waiting tag pulls, the released pin still on the node is taken back
      space = { capacityBytes: 10 * GiB, availableBytes: 3 * GiB };
      await h.clock.advance(10_000);
      await waitFor(() => h.tagStatus('later')?.phase === 'Succeeded', { message: 'later pulled once there is room' });
      await waitFor(() => pinned('mid') && pinned('later'), { message: 'pinned again' });
      assert.equal(h.runtime.pullsOf(ref('old')).length, 1, 'the tag kubelet took stays Failed');
    } finally {
      await h.controller.stop();
    }
  });
});

describe('imagepuller: a runtime that cannot pin', () => {
  it('says so on each Succeeded tag, once, also after a restart that adopts what the earlier agent wrote', async () => {
    const note = 'not pinned: cri-o 1.36.1 pins only the images its own configuration lists';
    const earlier = {
      imageStatuses: {
        [IMAGE]: {
          tags: [
            { tag: 'kept', phase: 'Succeeded', version: 0, completionTime: '2026-11-29T00:00:00Z', message: note },
            {
              tag: 'again',
              phase: 'Succeeded',
              version: 0,
              completionTime: '2026-11-29T00:00:00Z',
              message: `${PULLED_AGAIN_NOTE}; ${note}`,
            },
          ],
        },
      },
    };
    const h = startController([{ tag: 'kept' }, { tag: 'again' }, { tag: 'new' }], {
      unsupportedPins: 'cri-o 1.36.1 pins only the images its own configuration lists',
      status: earlier,
      present: [ref('kept'), ref('again')],
    });
    try {
      await waitFor(() => h.runtime.pullsOf(ref('new')).length === 1, { message: 'the new tag pulled' });
      await h.clock.advance(10_000);
      await waitFor(() => h.tagStatus('new')?.message === note, { message: 'the new tag says it is not pinned' });
      assert.equal(h.tagStatus('kept')?.message, note, 'said once');
      assert.equal(h.tagStatus('again')?.message, `${PULLED_AGAIN_NOTE}; ${note}`);
      assert.equal(h.runtime.pullsOf(ref('kept')).length, 0, 'adopted, not pulled');
    } finally {
      await h.controller.stop();
    }
  });
});

describe('imagepuller: progress of a running pull', () => {
  it('reads it every 5 s from the content store and writes it then, one write for the node, none when it did not move', async () => {
    const content = new FakeContent();
    const h = startController([{ tag: 'big' }], { content, hang: [ref('big')] });
    try {
      await waitFor(() => h.runtime.pullsOf(ref('big')).length === 1, { message: 'the pull is in flight' });
      await h.clock.advance(1_000); // the status writer's interval
      await waitFor(() => h.tagStatus('big')?.phase === 'Pulling', { message: 'Pulling written' });
      const started = Date.parse(
        (h.tagStatus('big') as { startTime?: string } | undefined)?.startTime ?? new Date(h.clock.now()).toISOString(),
      );
      const source = { 'containerd.io/distribution.source.127.0.0.1': 'test/busybox' };
      content.manifest('1', source, [{ d: fakeDigest('a'), size: 900 }], started + 100);
      content.ingestList = [{ ref: `layer-${fakeDigest('a')}`, offset: 450, total: 900, expected: '' }];
      // the progress loop reads at 5 s, 10 s, 15 s... from the start (the clock is at 1 s)
      const writes = h.statusWrites();
      await h.clock.advance(4_000);
      await waitFor(() => h.tagStatus('big')?.progress === 45, { message: 'progress 45 written at 5 s' });
      assert.equal(h.statusWrites() - writes, 1, 'one write');
      await h.clock.advance(5_000);
      assert.equal(h.statusWrites() - writes, 1, 'no write at 10 s: it did not move');
      content.ingestList = [{ ref: `layer-${fakeDigest('a')}`, offset: 810, total: 900, expected: '' }];
      await h.clock.advance(4_000);
      assert.equal(h.tagStatus('big')?.progress, 45, 'nothing between two readings');
      await h.clock.advance(1_000);
      await waitFor(() => h.tagStatus('big')?.progress === 81, { message: 'progress 81 written at 15 s' });
      assert.equal(h.statusWrites() - writes, 2);
    } finally {
      await h.controller.stop();
    }
  });
});

describe('imagepuller: a running pull that would not fit', () => {
  it('is stopped once its manifest tells its size and Failed with why, not retried', async () => {
    const content = new FakeContent();
    // 10 GiB, 70% full: 1.5 GiB more reaches kubelet's 85%
    const space: FsSpace = { capacityBytes: 10 * GiB, availableBytes: 3 * GiB };
    const h = startController([{ tag: 'big' }], {
      content,
      disk: { space: () => Promise.resolve(space) },
      hang: [ref('big')],
    });
    h.runtime.imageFs = { mountpoint: '/var/lib/containerd', usedBytes: 7 * GiB };
    try {
      await waitFor(() => h.runtime.pullsOf(ref('big')).length === 1, { message: 'the pull is in flight' });
      await h.clock.advance(1_000);
      await waitFor(() => h.tagStatus('big')?.phase === 'Pulling', { message: 'Pulling written' });
      // 0.6 GiB of layers: about 1.8 GiB on the filesystem once unpacked, past 85%
      const source = { 'containerd.io/distribution.source.127.0.0.1': 'test/busybox' };
      content.manifest('1', source, [{ d: fakeDigest('a'), size: 0.6 * GiB }], h.clock.now());
      await h.clock.advance(1_000);
      await waitFor(() => h.tagStatus('big')?.phase === 'Failed', { message: 'refused at the next reading, 1 s on' });
      assert.match(
        h.tagStatus('big')?.message ?? '',
        /^not pulled: its manifest names 614\.4 MiB of layers, and with them unpacked it would add about 1843 MiB to the image filesystem \(\/var\/lib\/containerd\), 70\.0% full now, 88\.0% after; kubelet's image GC starts at 85%/,
      );
      await waitFor(() => h.events.some((e) => e.reason === 'PullImageFailed'), { message: 'the failure event' });
      await h.clock.advance(60_000);
      assert.equal(h.runtime.pullsOf(ref('big')).length, 1, 'not retried');
      assert.equal(h.tagStatus('big')?.phase, 'Failed');
    } finally {
      await h.controller.stop();
    }
  });
});
