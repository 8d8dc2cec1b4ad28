// Pins on pre-pulled images (src/daemon/imagepuller/image-pins.ts) against containerd's labels as a map: what is
// pinned and marked ours, what is left alone (the runtime's or an admin's pins), what is released and when, and
// what a failure or a runtime without pinning says.
import assert from 'node:assert/strict';
import { CONTAINERD_PINNED_LABEL } from '../../../src/cri/containerd-images.js';
import {
  ImagePins,
  PINNED_BY_LABEL,
  PINNED_BY_VALUE,
  releaseAllPins,
  type PinStore,
} from '../../../src/daemon/imagepuller/image-pins.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { FakeClock } from '../../../src/util/clock.js';
import { FakeLabelStore } from './fakes.js';

const A = 'docker.io/library/nginx:1.25';
const B = 'registry.example/app:2';
const PAUSE = 'registry.k8s.io/pause:3.10';
const ours = { [CONTAINERD_PINNED_LABEL]: 'pinned', [PINNED_BY_LABEL]: PINNED_BY_VALUE };

function pinsOn(store: PinStore, clock = new FakeClock()) {
  let changes = 0;
  const failures: string[] = [];
  const pins = new ImagePins({
    store: () => Promise.resolve(store),
    clock,
    logger: silentLogger,
    onChange: () => changes++,
    onFailure: (reference, action, message) => failures.push(`${action} ${reference}: ${message}`),
  });
  return { pins, failures, changes: () => changes, clock };
}

describe('imagepuller pins', () => {
  it("pins what is wanted and marks it ours; a pin of the runtime's (the sandbox image) is left as it is", async () => {
    const store = new FakeLabelStore();
    store.images.set(A, { 'io.cri-containerd.image': 'managed' });
    store.images.set(PAUSE, { [CONTAINERD_PINNED_LABEL]: 'pinned' });
    const { pins, changes } = pinsOn(store);
    pins.want([A, PAUSE]);
    await pins.idle();
    assert.deepEqual(store.images.get(A), { 'io.cri-containerd.image': 'managed', ...ours });
    assert.deepEqual(store.images.get(PAUSE), { [CONTAINERD_PINNED_LABEL]: 'pinned' });
    assert.deepEqual(pins.state(A), { kind: 'pinned' });
    assert.deepEqual(pins.state(PAUSE), { kind: 'pinned-by-others' });
    assert.equal(changes(), 1);
    // the same set again: no call, no write
    const writes = store.writes.length;
    pins.want([PAUSE, A]);
    await pins.idle();
    assert.equal(store.writes.length, writes);

    // both leave the spec: ours is released, the runtime's never
    pins.want([]);
    await pins.idle();
    assert.deepEqual(store.images.get(A), { 'io.cri-containerd.image': 'managed' });
    assert.deepEqual(store.images.get(PAUSE), { [CONTAINERD_PINNED_LABEL]: 'pinned' });
    assert.deepEqual([...pins.pinnedByUs()], []);
  });

  it("an earlier agent's pins: kept while wanted (no write), released when not", async () => {
    const store = new FakeLabelStore();
    store.images.set(A, { ...ours });
    store.images.set(B, { ...ours });
    const { pins } = pinsOn(store);
    pins.want([A]);
    await pins.idle();
    assert.deepEqual(store.writes, [{ name: B, labels: { [CONTAINERD_PINNED_LABEL]: '', [PINNED_BY_LABEL]: '' } }]);
    assert.deepEqual(store.images.get(A), ours);
    assert.deepEqual(store.images.get(B), {});
  });

  it('a reference the runtime does not have is missing, and pinned once it is there and asked again', async () => {
    const store = new FakeLabelStore();
    const { pins } = pinsOn(store);
    pins.want([A]);
    await pins.idle();
    assert.deepEqual(pins.state(A), { kind: 'missing' });
    store.images.set(A, {});
    pins.want([A]);
    await pins.idle();
    assert.deepEqual(pins.state(A), { kind: 'pinned' });
  });

  it('a failed pin is a state with its message (one failure report), tried again after 30 s', async () => {
    const store = new FakeLabelStore();
    store.images.set(A, {});
    store.failWrites = 'permission denied';
    const { pins, failures, clock } = pinsOn(store);
    pins.want([A]);
    await pins.idle();
    assert.deepEqual(pins.state(A), { kind: 'failed', message: 'permission denied' });
    assert.deepEqual(failures, [`pin ${A}: permission denied`]);
    pins.want([A]); // asked again before the retry: waits for it
    await pins.idle();
    await clock.advance(29_000);
    await pins.idle();
    assert.equal(pins.state(A)?.kind, 'failed');
    assert.equal(failures.length, 1);
    store.failWrites = undefined;
    await clock.advance(1_000);
    await pins.idle();
    assert.deepEqual(pins.state(A), { kind: 'pinned' });
    assert.deepEqual(store.images.get(A), ours);
  });

  it('a failed unpin is tried again until it holds', async () => {
    const store = new FakeLabelStore();
    store.images.set(A, {});
    const { pins, failures, clock } = pinsOn(store);
    pins.want([A]);
    await pins.idle();
    store.failWrites = 'deadline exceeded';
    pins.want([]);
    await pins.idle();
    assert.deepEqual(store.images.get(A), ours);
    assert.deepEqual(failures, [`unpin ${A}: deadline exceeded`]);
    store.failWrites = undefined;
    await clock.advance(30_000);
    await pins.idle();
    assert.deepEqual(store.images.get(A), {});
  });

  it('a runtime that cannot pin: every wanted reference says why', async () => {
    const { pins } = pinsOn({ unsupported: 'cri-o 1.36.1 pins only pinned_images' });
    pins.want([A, B]);
    await pins.idle();
    assert.deepEqual(pins.state(B), { kind: 'unsupported', message: 'cri-o 1.36.1 pins only pinned_images' });
    assert.deepEqual(pins.counts(), { pinned: 0, 'pinned-by-others': 0, missing: 0, failed: 0, unsupported: 2 });
  });

  it('`pins release` takes every pin of ours off, and only ours', async () => {
    const store = new FakeLabelStore();
    store.images.set(A, { ...ours });
    store.images.set(B, { ...ours });
    store.images.set(PAUSE, { [CONTAINERD_PINNED_LABEL]: 'pinned' });
    assert.deepEqual(await releaseAllPins(store), [A, B]);
    assert.deepEqual(store.images.get(A), {});
    assert.deepEqual(store.images.get(PAUSE), { [CONTAINERD_PINNED_LABEL]: 'pinned' });
  });
});
