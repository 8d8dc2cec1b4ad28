// The CRI client against the local cluster's real containerd and registries: pulls (open registry, auth
// registry with right, wrong and no credentials, missing tag), list, ImageStatus, RemoveImage, ImageFsInfo.
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import {
  connectRuntime,
  CriAuthenticationFailedError,
  CriImageNotFoundError,
  type CriClient,
} from '../../../src/cri/index.js';
import { useCluster, type ClusterEnv } from '../../support/cluster.js';

describe('cri client: images (real containerd)', function () {
  let env: ClusterEnv;
  let client: CriClient;
  const registry = new Registry();

  before(async function () {
    env = await useCluster();
    client = await connectRuntime({ socket: env.runtimeSocket, registry, env: {} });
  });
  after(function () {
    client?.close();
  });

  it('pulls from the open registry and lists the image by tag', async function () {
    const pulled = await client.pullImage({ image: { image: env.images.busybox1 } });
    assert.match(pulled.image_ref, /^sha256:[0-9a-f]{64}$/);
    const { images } = await client.listImages();
    const listed = images.find((i) => i.repo_tags.includes(env.images.busybox1));
    assert.ok(listed, `${env.images.busybox1} not listed`);
    assert.equal(listed.id, pulled.image_ref);
    assert.ok(Number(listed.size) > 0);
    const status = await client.imageStatus({ image: { image: env.images.busybox1 } });
    assert.equal(status.image?.id, pulled.image_ref);
    const filtered = await client.listImages({ filter: { image: { image: env.images.busybox1 } } });
    assert.ok(filtered.images.some((i) => i.id === pulled.image_ref));
  });

  it('pulls from the auth registry with the right credentials; the wrong or none give AuthenticationFailed naming it', async function () {
    const image = env.images.authBusybox1;
    const wrong = await client
      .pullImage({ image: { image }, auth: { username: env.authUser, password: `${env.authPassword}-wrong` } })
      .catch((e: unknown) => e);
    assert.ok(wrong instanceof CriAuthenticationFailedError, String(wrong));
    assert.equal(wrong.registry, env.authRegistry);
    assert.match(
      wrong.message,
      new RegExp(`registry ${env.authRegistry.replace(/\./g, '\\.')} rejected the given credentials`),
    );
    assert.match(wrong.runtimeMessage, /401 Unauthorized/);
    assert.ok(!wrong.message.includes(env.authPassword));

    const none = await client.pullImage({ image: { image } }).catch((e: unknown) => e);
    assert.ok(none instanceof CriAuthenticationFailedError);
    assert.match(none.message, /requires credentials and none were given/);

    const ok = await client.pullImage({
      image: { image },
      auth: { username: env.authUser, password: env.authPassword },
    });
    assert.match(ok.image_ref, /^sha256:/);
    const byBase64 = await client.pullImage({
      image: { image },
      auth: { auth: Buffer.from(`${env.authUser}:${env.authPassword}`).toString('base64') },
    });
    assert.equal(byBase64.image_ref, ok.image_ref);
  });

  it('a tag the registry does not have is ImageNotFound', async function () {
    const image = `${env.registry}/test/busybox:no-such-tag`;
    const err = await client.pullImage({ image: { image } }).catch((e: unknown) => e);
    assert.ok(err instanceof CriImageNotFoundError, String(err));
    assert.equal(err.registry, env.registry);
    assert.match(err.runtimeMessage, /not found/);
  });

  it('ImageStatus of a missing image is null, not an error; RemoveImage removes and is idempotent', async function () {
    const missing = await client.imageStatus({ image: { image: `${env.registry}/test/never-pushed:1` } });
    assert.equal(missing.image, null);

    const image = env.images.busybox2;
    const wasPresent = (await client.imageStatus({ image: { image } })).image !== null;
    try {
      await client.pullImage({ image: { image } });
      assert.notEqual((await client.imageStatus({ image: { image } })).image, null);
      await client.removeImage({ image: { image } });
      assert.equal((await client.imageStatus({ image: { image } })).image, null);
      await client.removeImage({ image: { image } }); // again: no error
      const { images } = await client.listImages();
      assert.ok(!images.some((i) => i.repo_tags.includes(image)));
    } finally {
      if (wasPresent) await client.pullImage({ image: { image } }); // leave the node as we found it
    }
  });

  it('reports the image filesystem and counts calls in the metrics', async function () {
    const fs = await client.imageFsInfo();
    assert.ok(fs.image_filesystems.length > 0);
    assert.ok(fs.image_filesystems[0]?.fs_id?.mountpoint.startsWith(env.dir));
    const text = await registry.metrics();
    assert.match(text, /kruise_daemon_cri_requests_total\{method="PullImage",code="OK"\} \d+/);
    assert.match(text, /kruise_daemon_cri_requests_total\{method="PullImage",code="UNKNOWN"\} \d+/);
    assert.match(text, /kruise_daemon_cri_request_duration_seconds_count\{method="ImageStatus"\} \d+/);
  });
});
