// A pull under the agent's own lease on the real containerd (src/cri/containerd-leases.ts): CRI PullImage sent with
// the `containerd-lease` header writes under that lease instead of one it deletes when the pull ends. So a pull the
// agent cancels (for kubelet's pull) keeps the layers it fetched through containerd's garbage collection, and the
// next pull fetches only the rest. Without the lease, the same cancel loses them (the control). A registry proxy
// holds the image's last layer; a lease deleted with sync makes the collector run at once.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { connectRuntime, type CriClient } from '../../../src/cri/index.js';
import { ContainerdChannel } from '../../../src/cri/containerd-api.js';
import { ContainerdContent } from '../../../src/cri/containerd-content.js';
import { ContainerdLeases, CONTAINERD_GC_EXPIRE_LABEL } from '../../../src/cri/containerd-leases.js';
import { useCluster, type ClusterEnv } from '../../support/cluster.js';
import { startRegistryProxy, type RegistryProxy } from '../../support/registry-proxy.js';
import { pushUniqueImage, type UniqueImage } from '../../support/unique-image.js';
import { waitFor } from '../../support/wait.js';

const LAYER_BYTES = 4 * 1024 * 1024;
const LAYERS = 3;

describe('pulls under a lease of ours (real containerd)', function () {
  let env: ClusterEnv;
  let client: CriClient;
  let content: ContainerdContent | undefined;
  let leases: ContainerdLeases | undefined;
  let proxy: RegistryProxy;

  before(async function () {
    env = await useCluster();
    client = await connectRuntime({ socket: env.runtimeSocket, env: {} });
    if ((await client.version()).runtime_name === 'containerd') {
      content = new ContainerdContent(new ContainerdChannel(env.runtimeSocket));
      leases = new ContainerdLeases(env.runtimeSocket);
    }
    proxy = await startRegistryProxy(env.registry);
  });
  after(async function () {
    content?.close();
    leases?.close();
    client?.close();
    await proxy?.close();
  });

  /** Run containerd's garbage collector now: a lease of nothing, deleted synchronously. */
  async function collectGarbage(): Promise<void> {
    const id = `kd-test-gc-${randomUUID()}`;
    await leases!.create(id, {});
    await leases!.delete(id, true);
  }

  async function committed(digest: string): Promise<boolean> {
    return (await content!.info(digest)) !== undefined;
  }

  /** Pull `pushed` through the proxy with its last layer held; cancel once the others are in; the reference. */
  async function cancelWithLastLayerHeld(pushed: UniqueImage, lease: string | undefined): Promise<string> {
    const ref = `${pushed.imageName.replace(env.registry, proxy.host)}:${pushed.tag}`;
    const last = pushed.layers[pushed.layers.length - 1]!;
    proxy.holdDigests([last.digest]);
    const cancel = new AbortController();
    const ended = client
      .pullImage({ image: { image: ref } }, { timeoutMs: 60_000, signal: cancel.signal, containerdLease: lease })
      .then(
        () => 'pulled',
        (err: unknown) => String(err),
      );
    try {
      await waitFor(
        async () => {
          for (const layer of pushed.layers.slice(0, -1)) if (!(await committed(layer.digest))) return false;
          return true;
        },
        { timeoutMs: 30_000, intervalMs: 100, message: 'every layer but the held one in the content store' },
      );
      cancel.abort();
      assert.match(await ended, /cancel/i, 'the pull ended by the cancel');
    } finally {
      proxy.releaseDigests();
    }
    return ref;
  }

  async function freshImage(): Promise<UniqueImage> {
    const name = `test/lease-${randomBytes(4).toString('hex')}`;
    return pushUniqueImage(env.registry, name, 'v1', LAYER_BYTES, LAYERS);
  }

  it('a cancelled pull keeps the layers it fetched under our lease through a collection; the next pull fetches only the rest', async function () {
    if (!content || !leases) this.skip();
    const pushed = await freshImage();
    const lease = `kd-test-pull-${randomUUID()}`;
    await leases.create(lease, { [CONTAINERD_GC_EXPIRE_LABEL]: new Date(Date.now() + 600_000).toISOString() });
    try {
      const ref = await cancelWithLastLayerHeld(pushed, lease);
      await collectGarbage();
      for (const layer of pushed.layers.slice(0, -1)) {
        assert.ok(await committed(layer.digest), `${layer.digest} kept by the lease through the collection`);
      }
      const before = proxy.blobBytes();
      const done = await client.pullImage({ image: { image: ref } }, { timeoutMs: 60_000, containerdLease: lease });
      assert.match(done.image_ref, /^sha256:/);
      const fetched = proxy.blobBytes() - before;
      const total = pushed.layers.reduce((sum, l) => sum + l.size, 0);
      const rest = pushed.layers[pushed.layers.length - 1]!.size;
      process.stderr.write(
        `      [lease] the pull again fetched ${(fetched / 1048576).toFixed(1)} MiB of the image's ` +
          `${(total / 1048576).toFixed(1)} MiB\n`,
      );
      assert.ok(fetched <= rest + 64 * 1024, `only the held layer fetched again: ${fetched} bytes, that layer ${rest}`);
    } finally {
      await leases.delete(lease);
      await client.removeImage({ image: { image: `${pushed.imageName}:${pushed.tag}` } }).catch(() => undefined);
    }
  });

  it("without our lease (the control), the cancelled pull's layers are collected", async function () {
    if (!content || !leases) this.skip();
    const pushed = await freshImage();
    await cancelWithLastLayerHeld(pushed, undefined);
    await collectGarbage();
    for (const layer of pushed.layers.slice(0, -1)) {
      assert.equal(await committed(layer.digest), false, `${layer.digest} collected`);
    }
  });
});
