// Pins on the real runtime (src/cri/containerd-images.ts, src/daemon/imagepuller/image-pins.ts): on containerd 1.7+
// a reference labelled by the image puller is reported pinned by CRI's ImageStatus (what kubelet's image GC reads),
// the sandbox image's own pin is left alone, the pin is released, and `kruise-daemon pins ls|release` sees the same.
// A runtime without pinning (CRI-O, containerd 1.6) says why, and nothing is written. containerd's CRI plugin learns a
// label change from the runtime's image events (internal/cri/server/events.go: ImageUpdate → UpdateImage), so CRI's
// `pinned` follows a write a moment later: the test waits for it, with a deadline.
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { ContainerdImages } from '../../../src/cri/containerd-images.js';
import { connectRuntime, type CriClient } from '../../../src/cri/index.js';
import { ImagePins, releaseAllPins, type PinStore } from '../../../src/daemon/imagepuller/image-pins.js';
import { pinStoreFor } from '../../../src/daemon/imagepuller/runtime-stores.js';
import { runPinsCommand } from '../../../src/daemon/imagepuller/pins-command.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { systemClock } from '../../../src/util/clock.js';
import { useCluster, type ClusterEnv } from '../../support/cluster.js';
import { waitFor } from '../../support/wait.js';

describe('image pins (real runtime)', function () {
  let env: ClusterEnv;
  let client: CriClient;
  let store: PinStore;

  async function pinned(reference: string): Promise<boolean | undefined> {
    return (await client.imageStatus({ image: { image: reference } })).image?.pinned;
  }

  /** CRI's ImageStatus reports `want` for the reference (it follows containerd's image events). */
  async function reportsPinned(reference: string, want: boolean, why = ''): Promise<void> {
    await waitFor(async () => (await pinned(reference)) === want, {
      message: `CRI ImageStatus of ${reference} pinned=${want}${why ? ` (${why})` : ''}`,
    });
  }

  async function pinsCommand(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    let stdout = '';
    let stderr = '';
    const code = await runPinsCommand(argv, {
      stdin: Readable.from([]),
      stdout: { write: (s: string) => (stdout += s) } as unknown as NodeJS.WritableStream,
      stderr: { write: (s: string) => (stderr += s) } as unknown as NodeJS.WritableStream,
      env: { RUNTIME_SOCKET: env.runtimeSocket },
    });
    return { code, stdout, stderr };
  }

  before(async function () {
    env = await useCluster();
    client = await connectRuntime({ socket: env.runtimeSocket, env: {} });
    store = await pinStoreFor(client);
    await client.pullImage({ image: { image: env.images.busybox2 } });
    await client.pullImage({ image: { image: env.sandboxImage } });
  });
  after(async function () {
    if (store && !('unsupported' in store)) {
      await releaseAllPins(store);
      store.close?.();
    }
    client?.close();
  });

  it('pins and marks a pulled reference (CRI reports it pinned), leaves the sandbox pin, and releases it', async function () {
    const version = await client.version();
    if ('unsupported' in store) {
      // the runtime says why; this is what every Succeeded tag's status then carries
      assert.notEqual(version.runtime_name === 'containerd' && !/^v?1\.6\./.test(version.runtime_version), true);
      assert.match(store.unsupported, new RegExp(`^${version.runtime_name} `));
      const ls = await pinsCommand(['ls']);
      assert.equal(ls.code, 0, ls.stderr);
      assert.match(ls.stderr, /nothing to do/);
      return;
    }
    assert.ok(store instanceof ContainerdImages);
    assert.equal(await pinned(env.images.busybox2), false);
    assert.equal(await pinned(env.sandboxImage), true, 'containerd pins its sandbox image (pinned_images.sandbox)');
    let changes = 0;
    // the pins own their connection (closed with them), as in the agent
    const pins = new ImagePins({
      store: () => Promise.resolve(new ContainerdImages(env.runtimeSocket)),
      clock: systemClock,
      logger: silentLogger,
      onChange: () => changes++,
    });
    try {
      pins.want([env.images.busybox2, env.sandboxImage]);
      await pins.idle();
      assert.deepEqual(pins.state(env.images.busybox2), { kind: 'pinned' });
      assert.deepEqual(pins.state(env.sandboxImage), { kind: 'pinned-by-others' });
      assert.equal(changes, 1);
      await reportsPinned(env.images.busybox2, true, 'the pin kubelet reads');
      const ls = await pinsCommand(['ls']);
      assert.equal(ls.code, 0, ls.stderr);
      assert.equal(ls.stdout, `${env.images.busybox2}\n`);

      pins.want([]);
      await pins.idle();
      await reportsPinned(env.images.busybox2, false);
      assert.equal(await pinned(env.sandboxImage), true, 'the runtime pin stays');
    } finally {
      pins.close();
    }

    // an agent that is gone: `pins release` takes what it left
    const again = new ImagePins({
      store: () => Promise.resolve(new ContainerdImages(env.runtimeSocket)),
      clock: systemClock,
      logger: silentLogger,
      onChange: () => undefined,
    });
    again.want([env.images.busybox2]);
    await again.idle();
    again.close();
    await reportsPinned(env.images.busybox2, true);
    const release = await pinsCommand(['release']);
    assert.equal(release.code, 0, release.stderr);
    assert.equal(release.stdout, `${env.images.busybox2}\n`);
    assert.match(release.stderr, /released 1 pin/);
    await reportsPinned(env.images.busybox2, false);
    assert.equal(await pinned(env.sandboxImage), true);
  });
});
