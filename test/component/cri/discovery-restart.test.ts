// Socket discovery among decoys with the live containerd behind a symlink, the report when nothing answers,
// and a client that keeps working across a containerd restart.
import assert from 'node:assert/strict';
import { linkSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { connectRuntime, CriDiscoveryError, discoverRuntime } from '../../../src/cri/index.js';
import { restartContainerd, useCluster, type ClusterEnv } from '../../support/cluster.js';

/** A socket file nobody listens on (hard link to a socket whose server then closed). */
async function staleSocket(path: string): Promise<void> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(`${path}.tmp`, resolve));
  linkSync(`${path}.tmp`, path);
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

describe('cri discovery and reconnect (real containerd)', function () {
  let env: ClusterEnv;
  let hostRunDir = '';

  before(async function () {
    env = await useCluster();
    hostRunDir = mkdtempSync(join(tmpdir(), 'kd-hostvarrun-'));
  });
  after(async function () {
    if (hostRunDir) await rm(hostRunDir, { recursive: true, force: true });
  });

  it('picks the live socket behind crio.sock when containerd.sock is a stale decoy', async function () {
    await staleSocket(join(hostRunDir, 'containerd.sock'));
    symlinkSync(env.runtimeSocket, join(hostRunDir, 'crio.sock'));
    const found = await discoverRuntime({ hostRunDir, timeoutMs: 2000 });
    assert.equal(found.socket, join(hostRunDir, 'crio.sock'));
    assert.equal(found.version.runtime_name, 'containerd');
    assert.equal(found.version.runtime_api_version, 'v1');
    assert.deepEqual(
      found.attempts.map((a) => [a.path.slice(hostRunDir.length + 1), a.status]),
      [
        ['containerd.sock', 'refused'],
        ['containerd/containerd.sock', 'missing'],
        ['crio.sock', 'ok'],
      ],
    );
    const client = await connectRuntime({ hostRunDir, env: {} });
    try {
      assert.equal(client.socketPath, join(hostRunDir, 'crio.sock'));
      assert.ok((await client.listImages()).images.length >= 0);
    } finally {
      client.close();
    }
  });

  it('reports every path tried and what it answered when none answers', async function () {
    const dir = mkdtempSync(join(tmpdir(), 'kd-hostvarrun-'));
    try {
      await staleSocket(join(dir, 'containerd.sock'));
      writeFileSync(join(dir, 'crio.sock'), '');
      const err = await discoverRuntime({ hostRunDir: dir, timeoutMs: 1000 }).catch((e: unknown) => e);
      assert.ok(err instanceof CriDiscoveryError);
      assert.deepEqual(
        err.attempts.map((a) => a.status),
        ['refused', 'missing', 'not-a-socket', 'missing', 'missing', 'missing'],
      );
      for (const a of err.attempts) assert.ok(err.message.includes(`${a.path}: ${a.detail}`));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('the same client keeps working after containerd restarts (reads, and a pull)', async function () {
    const registry = new Registry();
    const client = await connectRuntime({ socket: env.runtimeSocket, registry, env: {} });
    try {
      const before = await client.version();
      await client.pullImage({ image: { image: env.images.busybox1 } });
      await restartContainerd(env);
      const after = await client.version();
      assert.equal(after.runtime_version, before.runtime_version);
      assert.ok((await client.listImages()).images.some((i) => i.repo_tags.includes(env.images.busybox1)));
      const pulled = await client.pullImage({ image: { image: env.images.busybox1 } });
      assert.match(pulled.image_ref, /^sha256:/);
    } finally {
      client.close();
    }
  });
});
