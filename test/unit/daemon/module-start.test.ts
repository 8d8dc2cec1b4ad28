// Each feature of the agent, alone on an agent with fakes (no runtime, no API credentials, a fake clock): a feature
// that cannot start is named in /healthz with its cause, and the agent starts and serves anyway. The four features
// on the Kubernetes API together, in the real agent process: test/component/daemon/agent.test.ts.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import type { CriClient } from '../../../src/cri/client.js';
import { startAgent, type AgentModule, type RunningAgent } from '../../../src/daemon/agent.js';
import { CONTAINER_META_CHECK, containerMetaModule } from '../../../src/daemon/containermeta/module.js';
import { containerRecreateModule, CRR_SYNCED_CHECK } from '../../../src/daemon/containerrecreate/module.js';
import { imagePullerModule, NODE_IMAGE_SYNCED_CHECK } from '../../../src/daemon/imagepuller/module.js';
import { IP_RESERVATION_CHECK, ipReservationModule } from '../../../src/daemon/ipreservation/module.js';
import { LAUNCH_PRIORITY_CHECK, launchPriorityModule } from '../../../src/daemon/launchpriority/module.js';
import { parseDaemonCommandLine } from '../../../src/daemon/options.js';
import { NODE_POD_PROBE_SYNCED_CHECK, podProbeModule } from '../../../src/daemon/podprobe/module.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { FakeClock } from '../../../src/util/clock.js';
import { waitFor } from '../../support/wait.js';

const NO_CREDENTIALS = 'no Kubernetes API credentials in this test';

describe('agent modules: a failed start is named in /healthz', () => {
  let agent: RunningAgent<CriClient> | undefined;
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'module-start-'));
  });
  afterEach(async () => {
    await agent?.stop(5000);
    agent = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  /** An agent running only `module`, on 127.0.0.1 (any port), with these extra flags. */
  async function start(module: AgentModule<CriClient>, flags: string[] = []): Promise<RunningAgent<CriClient>> {
    const parsed = parseDaemonCommandLine(
      ['--addr', '127.0.0.1:0', ...flags],
      { NODE_NAME: 'node-m' },
      () => undefined,
    );
    assert.equal(parsed.kind, 'run');
    agent = await startAgent(parsed.options, {
      logger: silentLogger,
      metrics: new Registry(),
      clock: new FakeClock(Date.parse('2026-01-01T00:00:00Z')),
      connectRuntime: () => Promise.reject(new Error('no container runtime in this test')),
      kube: () => Promise.reject(new Error(NO_CREDENTIALS)),
      modules: [module],
    });
    return agent;
  }

  async function healthz(running: RunningAgent<CriClient>): Promise<{ status: number; body: string }> {
    const res = await fetch(`http://127.0.0.1:${running.address.port}/healthz?verbose`);
    return { status: res.status, body: await res.text() };
  }

  /** Waits for the check's line in /healthz?verbose and returns it. */
  async function checkLine(running: RunningAgent<CriClient>, check: string, failed: boolean): Promise<string> {
    const line = new RegExp(`^\\[${failed ? '-' : '\\+'}\\]${check} (?:failed: .*|ok)$`, 'm');
    return waitFor(async () => line.exec((await healthz(running)).body)?.[0], { message: `${check} in /healthz` });
  }

  const cannotStart = (check: string, title: string, cause: string): string =>
    `[-]${check} failed: ${title} cannot start: ${cause}`;

  it('the image puller', async () => {
    const running = await start(imagePullerModule);
    assert.equal(
      await checkLine(running, NODE_IMAGE_SYNCED_CHECK, true),
      cannotStart(NODE_IMAGE_SYNCED_CHECK, 'the image puller', NO_CREDENTIALS),
    );
    assert.equal((await healthz(running)).status, 500);
  });

  it('the CRR executor', async () => {
    const running = await start(containerRecreateModule);
    assert.equal(
      await checkLine(running, CRR_SYNCED_CHECK, true),
      cannotStart(CRR_SYNCED_CHECK, 'the CRR executor', NO_CREDENTIALS),
    );
  });

  it('container meta', async () => {
    const running = await start(containerMetaModule);
    assert.equal(
      await checkLine(running, CONTAINER_META_CHECK, true),
      cannotStart(CONTAINER_META_CHECK, 'the container meta controller', NO_CREDENTIALS),
    );
  });

  it('launch priority', async () => {
    const running = await start(launchPriorityModule);
    assert.equal(
      await checkLine(running, LAUNCH_PRIORITY_CHECK, true),
      cannotStart(LAUNCH_PRIORITY_CHECK, 'launch priority', NO_CREDENTIALS),
    );
  });

  it('the custom probes; no check with --pod-probe=false', async () => {
    const running = await start(podProbeModule);
    assert.equal(
      await checkLine(running, NODE_POD_PROBE_SYNCED_CHECK, true),
      cannotStart(NODE_POD_PROBE_SYNCED_CHECK, 'the custom probes', NO_CREDENTIALS),
    );
    await running.stop(5000);
    const off = await start(podProbeModule, ['--pod-probe=false']);
    assert.doesNotMatch((await healthz(off)).body, new RegExp(NODE_POD_PROBE_SYNCED_CHECK));
  });

  it('IP reservation: a failed plugin install does not stop the agent; the check names it and why', async () => {
    const notADirectory = join(dir, 'a-file');
    writeFileSync(notADirectory, '');
    const cniBinDir = join(notADirectory, 'bin');
    const running = await start(ipReservationModule, [
      '--ipam-install',
      '--cni-bin-dir',
      cniBinDir,
      '--ipam-data-dir',
      join(dir, 'data'),
    ]);
    const line = await checkLine(running, IP_RESERVATION_CHECK, true);
    assert.ok(line.startsWith(cannotStart(IP_RESERVATION_CHECK, 'IP reservation', 'ENOTDIR: not a directory')), line);
    assert.ok(line.includes(cniBinDir), `names the directory: ${line}`);
    const { status, body } = await healthz(running);
    assert.equal(status, 500);
    assert.match(body, /^\[-\]runtime failed: /m, 'the agent serves its other checks');
  });

  it('IP reservation: runs and says so when it starts; no check without --ipam', async () => {
    const running = await start(ipReservationModule, ['--ipam', '--ipam-data-dir', join(dir, 'data')]);
    assert.equal(await checkLine(running, IP_RESERVATION_CHECK, false), `[+]${IP_RESERVATION_CHECK} ok`);
    await running.stop(5000);
    const without = await start(ipReservationModule);
    assert.doesNotMatch((await healthz(without)).body, new RegExp(IP_RESERVATION_CHECK));
  });
});
