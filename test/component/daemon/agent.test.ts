// The agent binary against the real cluster's first node: health, readiness, metrics, waiting for a runtime that is
// not there yet, discovery under --host-run-dir, and a clean stop on SIGTERM/SIGINT. The agent runs on the host (not
// inside the node) because the tests hand it sockets and directories they make on the host: the node's containerd
// socket as the host sees it, a symlink to it in a host temp dir. It talks to the real API server with the
// kruise-daemon ServiceAccount's token, as deployed (its NodeImage informer must sync for /healthz to pass).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NodeLayout } from '../../cluster/k8s/layout.js';
import { useRealCluster, type RealCluster } from '../../support/real-cluster.js';
import { waitFor } from '../../support/wait.js';
import { CONTAINER_META_CHECK } from '../../../src/daemon/containermeta/module.js';
import { CRR_SYNCED_CHECK } from '../../../src/daemon/containerrecreate/module.js';
import { NODE_IMAGE_SYNCED_CHECK } from '../../../src/daemon/imagepuller/module.js';
import { LAUNCH_PRIORITY_CHECK } from '../../../src/daemon/launchpriority/module.js';
import { AgentProcess, httpGet } from './agent-process.js';

/** The agent stops within this (its own deadline is 8 s; an idle agent takes far less). */
const STOP_DEADLINE_MS = 10_000;

describe('kruise-daemon agent (real containerd)', function () {
  this.timeout(60_000);
  let runtimeSocket = '';
  let cluster: RealCluster;
  let node: NodeLayout;
  const agents: AgentProcess[] = [];
  const tmpDirs: string[] = [];

  before(async () => {
    cluster = await useRealCluster();
    node = cluster.nodes[0]!;
    runtimeSocket = node.hostPaths.runtimeSocket;
  });
  after(async () => {
    await Promise.all(agents.map((a) => a.stop()));
    for (const dir of tmpDirs) rmSync(dir, { recursive: true, force: true });
  });

  function startAgent(env: Record<string, string>, args?: string[]): AgentProcess {
    const agent = new AgentProcess({
      env: { NODE_NAME: node.name, KUBECONFIG: cluster.agentKubeconfig, ...env },
      args,
    });
    agents.push(agent);
    return agent;
  }

  function tmpDir(): string {
    const dir = mkdtempSync(join(tmpdir(), 'kruise-daemon-test-'));
    tmpDirs.push(dir);
    return dir;
  }

  it('names in /healthz each feature that could not start, and why (here: no Kubernetes API credentials)', async () => {
    // no KUBECONFIG and not in a pod: the agent's Kubernetes client cannot be made, so no controller can start
    const agent = startAgent({ RUNTIME_SOCKET: runtimeSocket, KUBECONFIG: '' });
    const base = await agent.baseUrl();
    const features: [check: string, title: string][] = [
      [NODE_IMAGE_SYNCED_CHECK, 'the image puller'],
      [CRR_SYNCED_CHECK, 'the CRR executor'],
      [CONTAINER_META_CHECK, 'the container meta controller'],
      [LAUNCH_PRIORITY_CHECK, 'launch priority'],
    ];
    const body = await waitFor(
      async () => {
        const res = await httpGet(`${base}/healthz?verbose`);
        const reported = features.every(([check]) => res.body.includes(`[-]${check} failed: `));
        return reported && /^\[\+\]runtime ok$/m.test(res.body) ? res.body : undefined;
      },
      { message: 'every feature reported in /healthz, the runtime connected' },
    );
    assert.equal((await httpGet(`${base}/healthz`)).status, 500);
    for (const [check, title] of features) {
      assert.match(body, new RegExp(`^\\[-\\]${check} failed: ${title} cannot start: .+$`, 'm'));
    }
  });

  it('is healthy and ready once the runtime answers, serves metrics, and exits 0 on SIGTERM', async () => {
    const agent = startAgent({ RUNTIME_SOCKET: runtimeSocket });
    const base = await agent.baseUrl();
    await waitFor(async () => (await httpGet(`${base}/healthz`)).status === 200, { message: '/healthz 200' });

    const verbose = await httpGet(`${base}/healthz?verbose`);
    // every check passes, whichever controllers the agent runs: the liveness check (runtimeLoop), then readiness:
    // shutdown, runtime, each module's check
    assert.match(
      verbose.body,
      /^\[\+\]runtimeLoop ok\n\[\+\]shutdown ok\n\[\+\]runtime ok\n(?:\[\+\]\w+ ok\n)*healthy\n$/,
    );
    assert.match(verbose.body, /^\[\+\]nodeImageInformerSynced ok$/m);
    const ready = await httpGet(`${base}/readyz?verbose`);
    assert.equal(ready.status, 200);
    assert.equal(ready.body, verbose.body, '/readyz and /healthz: the same report');
    const live = await httpGet(`${base}/livez?verbose`);
    assert.equal(live.body, '[+]runtimeLoop ok\nhealthy\n', '/livez: the liveness check only');

    // the runtime loop asks for the version every 5 s
    const metrics = await waitFor(
      async () => {
        const got = await httpGet(`${base}/metrics`);
        return /^kruise_daemon_cri_requests_total\{[^}]*method="Version"/m.test(got.body) && got;
      },
      { timeoutMs: 15_000, message: 'a Version call counted' },
    );
    assert.equal(metrics.status, 200);
    assert.match(metrics.contentType, /^text\/plain/);
    assert.match(metrics.body, /^kruise_daemon_cri_requests_total\{[^}]*method="Version"[^}]*\} [1-9]\d*$/m);
    assert.match(metrics.body, /^kruise_daemon_cri_request_duration_seconds_bucket\{/m);
    assert.match(metrics.body, /^kruise_daemon_runtime_connected 1$/m);
    assert.match(metrics.body, /^process_resident_memory_bytes \d+/m);
    assert.match(metrics.body, /^nodejs_heap_size_used_bytes \d+/m);

    const connected = agent.findLog(/^connected to the container runtime$/);
    assert.equal(connected?.socket, runtimeSocket);
    assert.equal(connected?.node, node.name);

    agent.child.kill('SIGTERM');
    const exit = await waitFor(() => agent.hasExited && agent.exited, {
      timeoutMs: STOP_DEADLINE_MS,
      message: 'the agent to exit after SIGTERM',
    });
    assert.deepEqual(exit, { code: 0, signal: null });
    assert.ok(agent.findLog(/^stopped$/), 'logs that it stopped');
    await assert.rejects(httpGet(`${base}/healthz`), 'the listener is closed');
    assert.deepEqual(agent.otherOutput, [], 'stdout carries only JSON log lines');
  });

  it('keeps running without a runtime, says why on /readyz (not /livez), and recovers when the runtime appears', async () => {
    const dir = tmpDir();
    const socket = join(dir, 'runtime.sock'); // nothing there yet
    const agent = startAgent({ RUNTIME_SOCKET: socket });
    const base = await agent.baseUrl();

    const unhealthy = await waitFor(
      async () => {
        const r = await httpGet(`${base}/readyz`);
        return r.status === 500 && /no container runtime yet/.test(r.body) && r;
      },
      { message: '/readyz to report the missing runtime' },
    );
    assert.ok(unhealthy.body.includes(socket), `the reason names the socket: ${unhealthy.body}`);
    assert.equal((await httpGet(`${base}/healthz`)).status, 500, '/healthz: every check');
    assert.equal((await httpGet(`${base}/livez`)).status, 200, 'no restart would bring the runtime');
    assert.match((await httpGet(`${base}/metrics`)).body, /^kruise_daemon_runtime_connected 0$/m);
    assert.ok(agent.findLog(/container runtime not reachable; will retry/), 'logs the failed attempt');
    assert.equal(agent.hasExited, false, 'does not exit');

    symlinkSync(runtimeSocket, socket);
    await waitFor(async () => (await httpGet(`${base}/healthz`)).status === 200, {
      timeoutMs: 20_000,
      message: '/healthz 200 after the runtime appeared (next retry within the backoff)',
    });
    assert.equal((await httpGet(`${base}/readyz`)).status, 200);

    agent.child.kill('SIGINT');
    const exit = await waitFor(() => agent.hasExited && agent.exited, {
      timeoutMs: STOP_DEADLINE_MS,
      message: 'the agent to exit after SIGINT',
    });
    assert.deepEqual(exit, { code: 0, signal: null });
  });

  it('finds the runtime under --host-run-dir as OpenKruise does', async () => {
    const hostRunDir = tmpDir();
    symlinkSync(runtimeSocket, join(hostRunDir, 'containerd.sock'));
    const agent = startAgent({}, ['--addr', '127.0.0.1:0', '--host-run-dir', hostRunDir]);
    const base = await agent.baseUrl();
    await waitFor(async () => (await httpGet(`${base}/healthz`)).status === 200, { message: '/healthz 200' });
    assert.equal(agent.findLog(/^connected to the container runtime$/)?.socket, join(hostRunDir, 'containerd.sock'));
    assert.deepEqual(await agent.stop(STOP_DEADLINE_MS), { code: 0, signal: null });
  });

  it('stops promptly on SIGTERM while still retrying the runtime', async () => {
    const agent = startAgent({ RUNTIME_SOCKET: join(tmpDir(), 'never.sock') });
    const base = await agent.baseUrl();
    await waitFor(async () => (await httpGet(`${base}/healthz`)).status === 500, { message: '/healthz 500' });
    agent.child.kill('SIGTERM');
    const exit = await waitFor(() => agent.hasExited && agent.exited, {
      timeoutMs: STOP_DEADLINE_MS,
      message: 'the agent to exit after SIGTERM',
    });
    assert.deepEqual(exit, { code: 0, signal: null });
  });
});
