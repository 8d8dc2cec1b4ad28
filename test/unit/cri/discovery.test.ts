import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { CANDIDATE_SOCKETS, CriDiscoveryError, connectRuntime, discoverRuntime } from '../../../src/cri/index.js';
import { probeSocket } from '../../../src/cri/socket-probe.js';
import {
  CRI_BASICS,
  httpSocket,
  regularFile,
  silentSocket,
  staleSocket,
  startFakeRuntime,
  tempDir,
  type FakeRuntime,
  type Listener,
} from './fake-runtime.js';

describe('cri socket discovery (decoys and an in-process fake runtime)', () => {
  let tmp: { dir: string; remove(): Promise<void> };
  const stops: (FakeRuntime | Listener)[] = [];
  let n = 0;

  /** A fresh host run dir. */
  function hostRunDir(): string {
    const dir = join(tmp.dir, `h${++n}`);
    mkdirSync(dir);
    return dir;
  }
  async function keep<T extends FakeRuntime | Listener>(p: Promise<T>): Promise<T> {
    const x = await p;
    stops.push(x);
    return x;
  }

  before(async () => {
    tmp = await tempDir();
  });
  afterEach(async () => {
    for (const s of stops.splice(0)) await s.stop();
  });
  after(async () => {
    await tmp.remove();
  });

  it('tries the OpenKruise paths in order', () => {
    assert.deepEqual(CANDIDATE_SOCKETS, [
      'containerd.sock',
      'containerd/containerd.sock',
      'crio.sock',
      'crio/crio.sock',
      'cri-dockerd.sock',
      'cri-dockerd/cri-dockerd.sock',
    ]);
  });

  it('skips a stale socket, a regular file, an HTTP socket, a non-CRI gRPC server and a hung socket; picks the live runtime', async () => {
    const dir = hostRunDir();
    await staleSocket(join(dir, 'containerd.sock'));
    regularFile(join(dir, 'containerd/containerd.sock'));
    await keep(httpSocket(join(dir, 'crio.sock')));
    await keep(startFakeRuntime(join(dir, 'crio/crio.sock'), {})); // gRPC, no CRI handlers
    await keep(silentSocket(join(dir, 'cri-dockerd.sock')));
    const live = await keep(startFakeRuntime(join(dir, 'cri-dockerd/cri-dockerd.sock'), CRI_BASICS));

    const found = await discoverRuntime({ hostRunDir: dir, timeoutMs: 300 });
    assert.equal(found.socket, live.socket);
    assert.equal(found.version.runtime_name, 'fake-cri');
    assert.deepEqual(
      found.attempts.map((a) => a.status),
      ['refused', 'not-a-socket', 'not-grpc', 'not-cri', 'timeout', 'ok'],
    );
    assert.equal(live.calls.get('Version'), 1);
    assert.equal(live.calls.get('ListImages'), 1);
  });

  it('takes the first live runtime and does not probe further', async () => {
    const dir = hostRunDir();
    const first = await keep(startFakeRuntime(join(dir, 'containerd/containerd.sock'), CRI_BASICS));
    const second = await keep(startFakeRuntime(join(dir, 'crio.sock'), CRI_BASICS));
    const found = await discoverRuntime({ hostRunDir: dir, timeoutMs: 1000 });
    assert.equal(found.socket, first.socket);
    assert.deepEqual(
      found.attempts.map((a) => a.status),
      ['missing', 'ok'],
    );
    assert.equal(second.calls.size, 0);
  });

  it('follows a symlinked candidate to the live socket', async () => {
    const dir = hostRunDir();
    const live = await keep(startFakeRuntime(join(tmp.dir, `live-${n}.sock`), CRI_BASICS));
    await staleSocket(join(dir, 'containerd.sock'));
    symlinkSync(live.socket, join(dir, 'crio.sock'));
    const found = await discoverRuntime({ hostRunDir: dir, timeoutMs: 1000 });
    assert.equal(found.socket, join(dir, 'crio.sock'));
    assert.match(found.attempts.at(-1)?.detail ?? '', /symlink to .*live-/);
  });

  it('a server that answers Version but not ListImages is not a CRI runtime', async () => {
    const dir = hostRunDir();
    await keep(startFakeRuntime(join(dir, 'containerd.sock'), { runtime: CRI_BASICS.runtime }));
    const err = await discoverRuntime({ hostRunDir: dir, timeoutMs: 1000 }).catch((e: unknown) => e);
    assert.ok(err instanceof CriDiscoveryError);
    assert.equal(err.attempts[0]?.status, 'not-cri');
    assert.match(err.attempts[0]?.detail ?? '', /ListImages unimplemented/);
  });

  it('when nothing answers, names every path tried and what it answered', async () => {
    const dir = hostRunDir();
    await staleSocket(join(dir, 'containerd.sock'));
    regularFile(join(dir, 'crio.sock'));
    mkdirSync(join(dir, 'crio/crio.sock'), { recursive: true });
    symlinkSync(join(dir, 'gone.sock'), join(dir, 'cri-dockerd.sock'));
    const err = await discoverRuntime({ hostRunDir: dir, timeoutMs: 300 }).catch((e: unknown) => e);
    assert.ok(err instanceof CriDiscoveryError);
    const lines = err.message.split('\n');
    assert.equal(lines[0], `no CRI runtime answered under ${dir}; tried:`);
    assert.deepEqual(lines.slice(1, 7), [
      `  ${dir}/containerd.sock: connection refused (stale socket, nothing listening)`,
      `  ${dir}/containerd/containerd.sock: missing`,
      `  ${dir}/crio.sock: not a socket (a regular file)`,
      `  ${dir}/crio/crio.sock: not a socket (a directory)`,
      `  ${dir}/cri-dockerd.sock: dangling symlink to ${dir}/gone.sock`,
      `  ${dir}/cri-dockerd/cri-dockerd.sock: missing`,
    ]);
    assert.equal(err.attempts.length, 6);
  });

  it('connectRuntime: an explicit socket (option, then RUNTIME_SOCKET) replaces discovery', async () => {
    const dir = hostRunDir();
    const decoy = await keep(startFakeRuntime(join(dir, 'containerd.sock'), CRI_BASICS));
    const wanted = await keep(startFakeRuntime(join(tmp.dir, `wanted-${n}.sock`), CRI_BASICS));

    const viaOption = await connectRuntime({ socket: `unix://${wanted.socket}`, hostRunDir: dir, env: {} });
    assert.equal(viaOption.socketPath, wanted.socket);
    assert.equal((await viaOption.version()).runtime_name, 'fake-cri');
    viaOption.close();

    const viaEnv = await connectRuntime({ hostRunDir: dir, env: { RUNTIME_SOCKET: wanted.socket } });
    assert.equal(viaEnv.socketPath, wanted.socket);
    viaEnv.close();

    const discovered = await connectRuntime({ hostRunDir: dir, env: {} });
    assert.equal(discovered.socketPath, decoy.socket);
    discovered.close();

    const err = await connectRuntime({ socket: join(dir, 'nope.sock'), env: {}, timeoutMs: 300 }).catch(
      (e: unknown) => e,
    );
    assert.ok(err instanceof CriDiscoveryError);
    assert.equal(
      err.message,
      `CRI runtime socket ${join(dir, 'nope.sock')} (runtime socket option) does not answer: missing`,
    );
    const envErr = await connectRuntime({ env: { RUNTIME_SOCKET: join(dir, 'nope.sock') } }).catch((e: unknown) => e);
    assert.match(String(envErr), /\(RUNTIME_SOCKET\) does not answer: missing/);
  });

  it('probeSocket calls a path below a regular file missing (ENOTDIR) instead of failing', async () => {
    const dir = hostRunDir();
    regularFile(join(dir, 'file'));
    assert.deepEqual(await probeSocket(join(dir, 'file', 'below.sock'), 100), {
      path: join(dir, 'file', 'below.sock'),
      status: 'missing',
      detail: 'missing',
    });
  });
});
