// A pull's progress on the real containerd (src/daemon/imagepuller/pull-progress.ts over src/cri/containerd-content.ts):
// with the layer of a freshly pushed image (no blob shared with another image, so no earlier test's image makes the
// pull instant) held half-way by a registry proxy, the content store shows the pull's manifest (found by its labels)
// and the layer's ingest by digest; once let go, every blob is committed. containerd 2.4 moves an ingest's offset in
// chunks: a 1 MB layer held half-way reads 0 bytes written, so the test cannot show a partial figure. On a runtime
// without the content API the store is undefined (no progress is shown there).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { connectRuntime, type CriClient } from '../../../src/cri/index.js';
import type { ContentStore } from '../../../src/cri/containerd-content.js';
import { pullProgress } from '../../../src/daemon/imagepuller/pull-progress.js';
import { contentStoreFor } from '../../../src/daemon/imagepuller/runtime-stores.js';
import { useCluster, type ClusterEnv } from '../../support/cluster.js';
import { startRegistryProxy, type RegistryProxy } from '../../support/registry-proxy.js';
import { pushUniqueImage } from '../../support/unique-image.js';
import { waitFor } from '../../support/wait.js';

describe('pull progress (real containerd)', function () {
  let env: ClusterEnv;
  let client: CriClient;
  let content: ContentStore | undefined;
  let proxy: RegistryProxy;

  before(async function () {
    env = await useCluster();
    client = await connectRuntime({ socket: env.runtimeSocket, env: {} });
    content = await contentStoreFor(client);
    proxy = await startRegistryProxy(env.registry);
  });
  after(async function () {
    content?.close?.();
    client?.close();
    await proxy?.close();
  });

  it("finds a held pull by its manifest and its layers' ingests, then every blob in", async function () {
    if (!content) {
      assert.notEqual((await client.version()).runtime_name, 'containerd');
      this.skip();
    }
    const store = content;
    // a fresh image: no other image on the node holds its blobs, so the pull fetches them all through the proxy
    const pushed = await pushUniqueImage(env.registry, `test/progress-${randomBytes(4).toString('hex')}`);
    const image = { imageName: pushed.imageName.replace(env.registry, proxy.host), tag: pushed.tag };
    const ref = `${image.imageName}:${image.tag}`;
    const since = Date.now();
    proxy.halfBlobs = true;
    const pull = client.pullImage({ image: { image: ref } }, { timeoutMs: 60_000 });
    pull.catch(() => undefined);
    try {
      // what the progress is built on: the pull's manifest found by its labels (a number, not undefined), and the
      // held layer's ingest named by its digest with the manifest's size for it
      const ingest = await waitFor(
        async () => (await store.ingests()).find((s) => s.ref.endsWith(pushed.layerDigest)),
        { timeoutMs: 30_000, intervalMs: 200, message: 'an ingest of the layer while it is held' },
      );
      const percent = await pullProgress(store, image, since);
      assert.ok(percent !== undefined && percent < 100, `the pull's manifest identified: ${percent} %`);
      assert.ok(ingest.total > 0);
      process.stderr.write(
        `      [progress] held half-way: ${percent} % (ingest ${ingest.ref.slice(0, 20)}… at ${ingest.offset} of ${ingest.total} bytes)\n`,
      );
    } finally {
      proxy.halfBlobs = false;
    }
    await pull;
    assert.ok(await store.info(pushed.layerDigest), 'the layer is in the content store');
    assert.equal(await pullProgress(store, image, since), 99, 'every blob in (the puller says 100 at Succeeded)');
    const found = await client.imageStatus({ image: { image: ref } });
    if (found.image?.id) await client.removeImage({ image: { image: found.image.id } });
  });
});
