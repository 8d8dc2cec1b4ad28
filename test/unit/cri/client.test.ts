import assert from 'node:assert/strict';
import { join } from 'node:path';
import { status, type ServiceError } from '@grpc/grpc-js';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { CriClient, socketPathOf } from '../../../src/cri/client.js';
import { CriAuthenticationFailedError, CriError } from '../../../src/cri/errors.js';
import { defaultDeadlineMs } from '../../../src/cri/methods.js';
import { CRI_BASICS, startFakeRuntime, tempDir, type FakeRuntime } from './fake-runtime.js';

function unavailable(details: string): Partial<ServiceError> {
  return { code: status.UNAVAILABLE, details };
}

async function metricValue(registry: Registry, labels: Record<string, string>): Promise<number> {
  const metric = await registry.getSingleMetric('kruise_daemon_cri_requests_total')?.get();
  const found = metric?.values.find((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val));
  return found?.value ?? 0;
}

describe('cri client (against an in-process fake runtime)', () => {
  let tmp: { dir: string; remove(): Promise<void> };
  const started: FakeRuntime[] = [];
  const clients: CriClient[] = [];
  let n = 0;

  function socketPath(): string {
    return join(tmp.dir, `rt-${++n}.sock`);
  }
  async function fake(handlers: Parameters<typeof startFakeRuntime>[1], socket = socketPath()): Promise<FakeRuntime> {
    const f = await startFakeRuntime(socket, handlers);
    started.push(f);
    return f;
  }
  function client(options: Partial<ConstructorParameters<typeof CriClient>[0]> & { socket: string }): CriClient {
    const c = new CriClient(options);
    clients.push(c);
    return c;
  }

  before(async () => {
    tmp = await tempDir();
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    for (const f of started.splice(0)) await f.stop();
  });
  after(async () => {
    await tmp.remove();
  });

  it('sends snake_case fields as typed and decodes int64 as strings, enums as names, bytes as Buffers', async () => {
    const rt = await fake({
      runtime: {
        ...CRI_BASICS.runtime,
        PodSandboxStatus: (call, cb) =>
          cb(null, {
            status: { id: call.request.pod_sandbox_id, state: 'SANDBOX_NOTREADY', created_at: '1700000000123456789' },
            info: call.request.verbose ? { info: '{"pid":1}' } : {},
          }),
        ExecSync: (call, cb) => cb(null, { stdout: Buffer.from(call.request.cmd.join(' ')), exit_code: 3 }),
      },
    });
    const c = client({ socket: `unix://${rt.socket}` });
    assert.equal(c.socketPath, rt.socket);
    const v = await c.version();
    assert.equal(v.runtime_name, 'fake-cri');
    const s = await c.podSandboxStatus({ pod_sandbox_id: 'sb-1', verbose: true });
    assert.equal(s.status?.id, 'sb-1');
    assert.equal(s.status?.state, 'SANDBOX_NOTREADY');
    assert.equal(s.status?.created_at, '1700000000123456789');
    assert.deepEqual(s.info, { info: '{"pid":1}' });
    assert.deepEqual(s.containers_statuses, []); // defaults filled in
    const e = await c.execSync({ container_id: 'c1', cmd: ['echo', 'hi'], timeout: 5 });
    assert.ok(Buffer.isBuffer(e.stdout));
    assert.equal(e.stdout.toString(), 'echo hi');
    assert.equal(e.exit_code, 3);
    assert.deepEqual(rt.requests.at(-1)?.request, { container_id: 'c1', cmd: ['echo', 'hi'], timeout: '5' });
  });

  it('puts a deadline on every call: per call, per method, or the method default', async () => {
    const rt = await fake({ runtime: { Status: () => undefined /* never answers */ } });
    const c = client({ socket: rt.socket, deadlines: { Status: 150 } });
    const t0 = Date.now();
    const err = await c.status().catch((e: unknown) => e);
    assert.ok(err instanceof CriError);
    assert.equal(err.kind, 'DeadlineExceeded');
    assert.match(err.message, /deadline of 150 ms/);
    assert.ok(Date.now() - t0 < 5000);
    const perCall = await c.status({}, { timeoutMs: 80 }).catch((e: unknown) => e);
    assert.match(String(perCall), /deadline of 80 ms/);
    assert.equal(defaultDeadlineMs('Version'), 30_000);
    assert.equal(defaultDeadlineMs('PullImage'), 600_000);
    assert.equal(defaultDeadlineMs('StopContainer', 30), 150_000);
    assert.equal(defaultDeadlineMs('ExecSync', '10'), 130_000);
    assert.equal(defaultDeadlineMs('ExecSync', 0), 120_000);
  });

  it('retries an idempotent call once on UNAVAILABLE and counts both attempts', async () => {
    let answered = 0;
    const rt = await fake({
      image: {
        ListImages: (_call, cb) =>
          answered++ === 0 ? cb(unavailable('runtime restarting')) : cb(null, { images: [] }),
      },
    });
    const registry = new Registry();
    const c = client({ socket: rt.socket, registry });
    const r = await c.listImages();
    assert.deepEqual(r.images, []);
    assert.equal(rt.calls.get('ListImages'), 2);
    assert.equal(await metricValue(registry, { method: 'ListImages', code: 'UNAVAILABLE' }), 1);
    assert.equal(await metricValue(registry, { method: 'ListImages', code: 'OK' }), 1);
    const histogram = await registry.getSingleMetric('kruise_daemon_cri_request_duration_seconds')?.get();
    const count = histogram?.values.find(
      (v) => (v as { metricName?: string }).metricName?.endsWith('_count') && v.labels.method === 'ListImages',
    );
    assert.equal(count?.value, 2);
  });

  it('does not repeat a PullImage the runtime may have seen', async () => {
    const rt = await fake({ image: { PullImage: (_call, cb) => cb(unavailable('Connection dropped')) } });
    const c = client({ socket: rt.socket });
    const err = await c.pullImage({ image: { image: 'r.io/a:1' } }).catch((e: unknown) => e);
    assert.ok(err instanceof CriError);
    assert.equal(err.kind, 'Unavailable');
    assert.equal(rt.calls.get('PullImage'), 1);
  });

  it('retries any call, PullImage too, that never reached the runtime, once the runtime is back', async () => {
    const socket = socketPath();
    let runtimeStart: Promise<FakeRuntime> | undefined;
    // The client logs a warning before it waits for the channel: that is when the runtime "comes back".
    const logger = pino(
      { level: 'warn' },
      {
        write: (line: string) => {
          if (line.includes('retrying') && !runtimeStart) {
            runtimeStart = fake({ image: { PullImage: (_call, cb) => cb(null, { image_ref: 'sha256:abc' }) } }, socket);
          }
        },
      },
    );
    const c = client({ socket, logger });
    const r = await c.pullImage({ image: { image: 'r.io/a:1' } }, { timeoutMs: 10_000 });
    assert.equal(r.image_ref, 'sha256:abc');
    const rt = await runtimeStart;
    assert.equal(rt?.calls.get('PullImage'), 1);
  });

  it('gives up with Unavailable when the runtime does not come back within the deadline', async () => {
    const c = client({ socket: socketPath() });
    const err = await c.version({}, { timeoutMs: 300 }).catch((e: unknown) => e);
    assert.ok(err instanceof CriError);
    assert.equal(err.kind, 'Unavailable');
    assert.match(err.message, /No connection established/);
  });

  it('maps a registry 401 from the runtime to AuthenticationFailed naming the registry', async () => {
    const rt = await fake({
      image: {
        PullImage: (_call, cb) =>
          cb({
            code: status.UNKNOWN,
            details: 'pulling from host 127.0.0.1:5001 failed with status code [manifests 1.0]: 401 Unauthorized',
          }),
      },
    });
    const c = client({ socket: rt.socket });
    const err = await c
      .pullImage({
        image: { image: '127.0.0.1:5001/test/busybox:1.0' },
        auth: { username: 'u', password: 'secret-pw' },
      })
      .catch((e: unknown) => e);
    assert.ok(err instanceof CriAuthenticationFailedError);
    assert.equal(err.registry, '127.0.0.1:5001');
    assert.match(err.message, /rejected the given credentials/);
    assert.doesNotMatch(err.message, /secret-pw/);
    const request = rt.requests.find((r) => r.method === 'PullImage')?.request as { auth: { password: string } };
    assert.equal(request.auth.password, 'secret-pw');
  });

  it('cancels a call on abort, and fails calls after close', async () => {
    const rt = await fake({ runtime: { ...CRI_BASICS.runtime, Status: () => undefined } });
    const c = client({ socket: rt.socket });
    const controller = new AbortController();
    const pending = c.status({}, { signal: controller.signal, timeoutMs: 10_000 });
    await c.version(); // the Status call is out by now
    controller.abort();
    const err = await pending.catch((e: unknown) => e);
    assert.ok(err instanceof CriError);
    assert.equal(err.kind, 'Cancelled');
    c.close();
    c.close();
    const afterClose = await c.version().catch((e: unknown) => e);
    assert.ok(afterClose instanceof CriError);
    assert.equal(afterClose.kind, 'Cancelled');
    assert.match(afterClose.message, /client closed/);
  });

  it('accepts answers above gRPC default 4 MiB (limit 16 MiB)', async () => {
    const tag = 'r.io/' + 'x'.repeat(1000) + ':1';
    const images = Array.from({ length: 6000 }, (_, i) => ({ id: `sha256:${i}`, repo_tags: [tag], size: 1 }));
    const rt = await fake({ image: { ListImages: (_call, cb) => cb(null, { images }) } });
    const c = client({ socket: rt.socket });
    const r = await c.listImages();
    assert.equal(r.images.length, 6000);
    assert.equal(r.images[0]?.size, '1');
  });

  it('shares metrics collectors between clients on one registry', async () => {
    const rt = await fake(CRI_BASICS);
    const registry = new Registry();
    await client({ socket: rt.socket, registry }).version();
    await client({ socket: rt.socket, registry }).version();
    assert.equal(await metricValue(registry, { method: 'Version', code: 'OK' }), 2);
  });

  it('rejects bad options with a clear message', () => {
    assert.throws(() => new CriClient({ socket: ' ' }), /socket path is empty/);
    assert.throws(() => new CriClient({ socket: '/x.sock', timeoutMs: 0 }), /timeoutMs must be a positive number/);
    assert.throws(
      () => new CriClient({ socket: '/x.sock', deadlines: { Nope: 5 } as never }),
      /unknown CRI method Nope/,
    );
    assert.throws(
      () => new CriClient({ socket: '/x.sock', deadlines: { toString: 5 } as never }),
      /unknown CRI method toString/,
    );
    assert.equal(socketPathOf('unix:///run/x.sock'), '/run/x.sock');
    assert.equal(socketPathOf('unix:/run/x.sock'), '/run/x.sock');
    assert.ok(socketPathOf('rel.sock').startsWith('/'));
  });
});
