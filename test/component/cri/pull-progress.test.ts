// A pull's progress on the real containerd (src/daemon/imagepuller/pull-progress.ts over src/cri/containerd-content.ts):
// with the layers held half-way by a registry proxy, the content store shows the pull's manifest (found by its labels)
// and the layers' ingests by digest; once let go, every blob is committed. containerd 2.4 moves an ingest's offset
// in chunks: a 1 MB layer held half-way reads 0 bytes written, so the test image cannot show a partial figure. On a runtime without the content API the
// store is undefined (no progress is shown there).
import assert from 'node:assert/strict';
import { connectRuntime, type CriClient } from '../../../src/cri/index.js';
import type { ContentStore } from '../../../src/cri/containerd-content.js';
import { pullProgress } from '../../../src/daemon/imagepuller/pull-progress.js';
import { contentStoreFor } from '../../../src/daemon/imagepuller/runtime-stores.js';
import { useCluster, type ClusterEnv } from '../../support/cluster.js';
import { startRegistryProxy, type RegistryProxy } from '../../support/registry-proxy.js';
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
    const image = { imageName: `${proxy.host}/test/busybox`, tag: '2.0' };
    const ref = `${image.imageName}:${image.tag}`;
    // the same image under the registry's own name (other tests pull it): its blobs would make the pull instant
    const direct = `${env.registry}/test/busybox:2.0`;
    await client.pullImage({ image: { image: direct } });
    const manifestDigest = (await client.imageStatus({ image: { image: direct } })).image?.repo_digests?.[0]?.split(
      '@',
    )[1];
    assert.ok(manifestDigest, 'the manifest digest of test/busybox:2.0');
    const blobs = JSON.parse((await store.read(manifestDigest)).toString('utf8')) as {
      config: { digest: string };
      layers: { digest: string }[];
    };
    for (const name of [direct, ref]) {
      const found = await client.imageStatus({ image: { image: name } });
      if (found.image?.id) await client.removeImage({ image: { image: found.image.id } });
    }
    // containerd's garbage collector takes the blobs shortly after their last image goes
    await waitFor(
      async () => {
        for (const blob of [blobs.config, ...blobs.layers]) if (await store.info(blob.digest)) return false;
        return true;
      },
      { timeoutMs: 30_000, message: "containerd's GC removed the image's blobs" },
    );
    const since = Date.now();
    proxy.halfBlobs = true;
    const pull = client.pullImage({ image: { image: ref } }, { timeoutMs: 60_000 });
    pull.catch(() => undefined);
    try {
      // what the progress is built on: the pull's manifest found by its labels (a number, not undefined), and the
      // held layer's ingest named by its digest with the manifest's size for it
      const layers = blobs.layers.map((layer) => layer.digest);
      const ingest = await waitFor(
        async () => (await store.ingests()).find((s) => layers.some((digest) => s.ref.endsWith(digest))),
        { timeoutMs: 30_000, intervalMs: 200, message: 'an ingest of one of the layers while they are held' },
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
    assert.equal(await pullProgress(store, image, since), 99, 'every blob in (the puller says 100 at Succeeded)');
  });
});
