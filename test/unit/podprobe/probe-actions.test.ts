// tcpSocket and httpGet probes against local servers on 127.0.0.1, exec against a fake CRI, grpc refused; the
// timeout is the FakeClock's.
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { ContainerProbeSpec } from '../../../src/api/podprobemarker.js';
import { CriError } from '../../../src/cri/errors.js';
import {
  PROBE_USER_AGENT,
  runProbe,
  truncateMessage,
  type ExecRuntime,
  type ProbeOutcome,
} from '../../../src/daemon/podprobe/probe-actions.js';
import { FakeClock } from '../../../src/util/clock.js';

const noExec: ExecRuntime = { execSync: () => Promise.reject(new Error('no exec in this test')) };

function probe(spec: ContainerProbeSpec, options: { clock?: FakeClock; runtime?: ExecRuntime; podIP?: string } = {}) {
  return runProbe(
    { probe: spec, containerId: 'c1', containerName: 'main', podIP: options.podIP ?? '127.0.0.1', timeoutMs: 2000 },
    { runtime: options.runtime ?? noExec, clock: options.clock ?? new FakeClock() },
    new AbortController().signal,
  );
}

async function listen(server: net.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

describe('podprobe actions', () => {
  const servers: net.Server[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) {
      (s as http.Server).closeAllConnections?.();
      await new Promise<void>((resolve) => s.close(() => resolve()));
    }
  });

  it('tcpSocket: a listening port succeeds, a closed one fails with the dial error', async () => {
    const server = net.createServer((socket) => socket.end());
    servers.push(server);
    const port = await listen(server);
    assert.deepEqual(await probe({ tcpSocket: { port } }), { result: 'succeeded', message: '' });
    server.close();
    const closed = await probe({ tcpSocket: { port } });
    assert.equal(closed.result, 'failed');
    assert.match(closed.message, new RegExp(`^dial tcp 127\\.0\\.0\\.1:${port}: connect ECONNREFUSED`));
    assert.deepEqual(await probe({ tcpSocket: { port: 'http' } }), {
      result: 'failed',
      message: 'invalid port "http": a number from 1 to 65535 is needed (a named port is resolved by the controller)',
    });
    assert.deepEqual(await probe({ tcpSocket: { port } }, { podIP: '' }), {
      result: 'failed',
      message: 'the pod has no IP yet',
    });
  });

  it('never dials a host other than the pod IP, nor sends a Host header (CVE-2026-24005), whatever the NodePodProbe says', async () => {
    let connections = 0;
    const server = net.createServer((socket) => {
      connections++;
      socket.end();
    });
    servers.push(server);
    const port = await listen(server);
    const refused = (host: string) => ({
      result: 'failed',
      message: `probe host ${JSON.stringify(host)} refused: the agent probes only the pod's own IP`,
    });
    assert.deepEqual(
      await probe({ tcpSocket: { port, host: '127.0.0.1' } }, { podIP: '10.0.0.9' }),
      refused('127.0.0.1'),
    );
    assert.deepEqual(
      await probe({ httpGet: { port, path: '/', host: '127.0.0.1' } }, { podIP: '10.0.0.9' }),
      refused('127.0.0.1'),
    );
    assert.deepEqual(
      await probe({ httpGet: { port, path: '/', httpHeaders: [{ name: 'Host', value: 'metadata' }] } }),
      refused('metadata'),
    );
    assert.equal(connections, 0);
    // the pod's own IP named as host is the pod
    assert.equal((await probe({ tcpSocket: { port, host: '127.0.0.1' } })).result, 'succeeded');
  });

  it('httpGet: 2xx/3xx succeed with the body as message, others fail; path, headers and User-Agent sent', async () => {
    const seen: http.IncomingHttpHeaders[] = [];
    const paths: string[] = [];
    const server = http.createServer((req, res) => {
      seen.push(req.headers);
      paths.push(req.url ?? '');
      if (req.url === '/ok') res.writeHead(200).end('fine');
      else if (req.url === '/moved') res.writeHead(302, { location: 'http://elsewhere.invalid/x' }).end('bye');
      else if (req.url === '/here') res.writeHead(301, { location: '/ok' }).end();
      else if (req.url === '/big') res.writeHead(200).end('x'.repeat(100_000));
      else res.writeHead(503).end('down');
    });
    servers.push(server);
    const port = await listen(server);
    assert.deepEqual(await probe({ httpGet: { port, path: 'ok', httpHeaders: [{ name: 'X-Probe', value: 'yes' }] } }), {
      result: 'succeeded',
      message: 'fine',
    });
    assert.equal(seen[0]!['user-agent'], PROBE_USER_AGENT);
    assert.equal(seen[0]!.accept, '*/*');
    assert.equal(seen[0]!['x-probe'], 'yes');
    assert.deepEqual(await probe({ httpGet: { port, path: '/bad', scheme: 'HTTP' } }), {
      result: 'failed',
      message: 'HTTP probe failed with statuscode: 503',
    });
    assert.deepEqual(await probe({ httpGet: { port, path: '/moved' } }), {
      result: 'succeeded',
      message: 'Probe terminated redirects, Response body: bye',
    });
    assert.ok(!paths.includes('/x'), 'an off-host redirect is not followed');
    assert.deepEqual(await probe({ httpGet: { port, path: '/here' } }), { result: 'succeeded', message: 'fine' });
    const big = await probe({ httpGet: { port, path: '/big', httpHeaders: [{ name: 'User-Agent', value: 'me' }] } });
    assert.equal(big.message.length, 1024, 'the body is kept only as far as the message');
    assert.equal(seen.at(-1)!['user-agent'], 'me');
  });

  it('httpGet: a server that never answers is cut at the timeout', async () => {
    const server = http.createServer(() => undefined);
    servers.push(server);
    const port = await listen(server);
    const clock = new FakeClock();
    const running = probe({ httpGet: { port } }, { clock });
    await clock.advance(1_999);
    let outcome: ProbeOutcome | undefined;
    void running.then((o) => (outcome = o));
    await clock.advance(0);
    assert.equal(outcome, undefined);
    await clock.advance(1);
    assert.deepEqual(await running, { result: 'timeout', message: 'probe timed out after 2s' });
  });

  it('exec: exit 0 succeeds with stdout, non-zero fails with stderr; a runtime error is not a result', async () => {
    const answers = [
      { stdout: 'fine\n', stderr: '', exit_code: 0 },
      { stdout: 'x', stderr: 'broken', exit_code: 2 },
      { stdout: '', stderr: '', exit_code: 3 },
    ];
    const requests: unknown[] = [];
    const runtime: ExecRuntime = {
      execSync: (request, options) => {
        requests.push({ request, timeoutMs: options?.timeoutMs });
        const a = answers.shift();
        if (!a) return Promise.reject(new Error('CRI ExecSync: container not found'));
        return Promise.resolve({
          stdout: Buffer.from(a.stdout),
          stderr: Buffer.from(a.stderr),
          exit_code: a.exit_code,
        });
      },
    };
    const spec = { exec: { command: ['check'] } };
    assert.deepEqual(await probe(spec, { runtime }), { result: 'succeeded', message: 'fine\n' });
    assert.deepEqual(await probe(spec, { runtime }), { result: 'failed', message: 'broken' });
    assert.deepEqual(await probe(spec, { runtime }), {
      result: 'failed',
      message: 'command ["check"] exited with 3',
    });
    assert.deepEqual(await probe(spec, { runtime }), {
      result: 'error',
      message: 'exec in container main failed: CRI ExecSync: container not found',
    });
    assert.deepEqual(requests[0], { request: { container_id: 'c1', cmd: ['check'], timeout: 2 }, timeoutMs: 2000 });
  });

  it('exec: a command the runtime cannot start in the container fails with the runtime’s words', async () => {
    const runc =
      'failed to exec in container: failed to start exec "e1": OCI runtime exec failed: exec failed: unable to start ' +
      'container process: exec: "/no/such/probe": stat /no/such/probe: no such file or directory: unknown';
    const errors = [
      new CriError('Unknown', 2, 'ExecSync', 'runtime error (UNKNOWN)', runc),
      new CriError('Unavailable', 14, 'ExecSync', 'runtime unavailable', 'connection refused'),
    ];
    const runtime: ExecRuntime = { execSync: () => Promise.reject(errors.shift()!) };
    const spec = { exec: { command: ['/no/such/probe'] } };
    assert.deepEqual(await probe(spec, { runtime }), {
      result: 'failed',
      message: `exec in container main failed: CRI ExecSync: runtime error (UNKNOWN): ${runc}`,
    });
    assert.equal((await probe(spec, { runtime })).result, 'error', 'a runtime outage is not a result');
  });

  it('grpc and an empty probe fail with a clear message', async () => {
    assert.deepEqual(await probe({ grpc: { port: 9000 } }), {
      result: 'failed',
      message: 'grpc probes are not supported by kruise-daemon (nor by OpenKruise): use exec, httpGet or tcpSocket',
    });
    assert.deepEqual(await probe({}), {
      result: 'failed',
      message: 'the probe has no exec, httpGet or tcpSocket action',
    });
  });

  it('truncates by characters, not bytes', () => {
    assert.equal(truncateMessage('ab'), 'ab');
    assert.equal([...truncateMessage('😀'.repeat(2000))].length, 1024);
  });
});
