// `npm run dev` (test/cluster/dev.ts, as a process on a cluster directory of its own: real Kubernetes, one node)
// supervises what it runs as kubelet would: the controller killed with SIGKILL, then an agent, each is started again
// at once (said on the terminal with the cause) and healthy within seconds, dev still running; killed again, each
// waits kubelet's 10 s back-off. Then every direct child of dev is killed with SIGKILL (the cluster's daemons too:
// etcd, kube-apiserver, the node's holder, containerd, kubelet) and Ctrl-C tears everything down: exit 0, `all down`,
// no process of the node left (its containerd, kubelet, shims and pods: everything that ran in the node's mount
// namespace, and their descendants), no process naming the cluster directory. The figures are printed.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageRoot } from '../../../src/util/repo-root.js';
import { downCluster } from '../../cluster/components.js';
import { binaryPathsOf } from '../../cluster/k8s/binaries.js';
import { childrenOf, processesIn, stillRunning, type ProcessId } from '../../support/processes.js';
import { waitFor } from '../../support/wait.js';

const DEV = fileURLToPath(new URL('../../cluster/dev.js', import.meta.url));
const CLUSTER_DIR = join(packageRoot(), '.cluster-dev-supervision');

async function healthy(url: string): Promise<boolean> {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(2_000) })).status === 200;
  } catch {
    return false;
  }
}

/** The value of `export NAME='value'` in dev.env. */
function devEnvValue(name: string): string {
  const text = readFileSync(join(CLUSTER_DIR, 'dev.env'), 'utf8');
  const match = new RegExp(`^export ${name}='([^']*)'`, 'm').exec(text);
  assert.ok(match, `dev.env exports ${name}`);
  return match[1]!;
}

describe('npm run dev supervises what it runs, and every way it ends tears everything down', function () {
  this.timeout(600_000);
  let dev: ChildProcess | undefined;
  let devLog = '';
  const figures: string[] = [];

  before(async function () {
    this.timeout(20 * 60_000);
    await downCluster({ dir: CLUSTER_DIR, log: () => undefined, purge: true });
    dev = spawn(process.execPath, [DEV, '--nodes', '1'], {
      env: { ...process.env, CLUSTER_DIR, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // a process group of its own, as in a terminal
    });
    dev.stdout!.on('data', (c: Buffer) => (devLog += c.toString()));
    dev.stderr!.on('data', (c: Buffer) => (devLog += c.toString()));
    await waitFor(
      () => {
        if (dev?.exitCode !== null) throw new Error(`npm run dev exited: ${devLog}`);
        return devLog.includes('[dev] ready');
      },
      { timeoutMs: 15 * 60_000, intervalMs: 200, message: 'npm run dev ready' },
    );
  });

  after(async () => {
    if (dev && dev.exitCode === null && dev.signalCode === null) process.kill(-dev.pid!, 'SIGINT');
    await waitFor(() => dev?.exitCode !== null || dev.signalCode !== null, { timeoutMs: 180_000, intervalMs: 200 });
    await downCluster({ dir: CLUSTER_DIR, log: () => undefined, purge: true });
    process.stdout.write(`      ${figures.join('\n      ')}\n`);
  });

  function running(name: 'controller' | 'agent'): number {
    const script = name === 'controller' ? '/kruise-controller.js' : '/kruise-daemon.js';
    const found = childrenOf(dev!.pid!).filter((p) => p.argv.some((a) => a.endsWith(script)));
    assert.ok(found.length <= 1, `at most one ${name}: ${found.map((p) => p.pid).join(', ')}`);
    return found[0]?.pid ?? 0;
  }

  /** SIGKILL `name`; wait until another one runs and answers 200 on `url`; returns the milliseconds that took. */
  async function killAndWaitBack(name: 'controller' | 'agent', url: string, said: RegExp): Promise<number> {
    const pid = running(name);
    assert.ok(pid > 0, `${name} runs`);
    const logBefore = devLog.length;
    const killed = Date.now();
    process.kill(pid, 'SIGKILL');
    await waitFor(
      async () => {
        const now = running(name);
        return now !== 0 && now !== pid && (await healthy(url));
      },
      { timeoutMs: 60_000, intervalMs: 100, message: `${name} back and healthy at ${url}` },
    );
    const ms = Date.now() - killed;
    assert.match(devLog.slice(logBefore), said, 'dev said it, with the cause');
    assert.equal(dev!.exitCode, null, 'dev still runs');
    return ms;
  }

  it('starts the controller again at once after a SIGKILL, healthy within seconds', async () => {
    const url = `${devEnvValue('KRUISE_CONTROLLER_URL')}/readyz`;
    const ms = await killAndWaitBack(
      'controller',
      url,
      /^controller exited \(SIGKILL\) unasked; starting it again now, restart 1$/m,
    );
    figures.push(`controller SIGKILLed: running again and /readyz ok after ${(ms / 1000).toFixed(1)} s`);
    assert.ok(ms < 30_000, `within 30 s (${ms} ms)`);
  });

  it('starts an agent again at once after a SIGKILL, healthy within seconds', async () => {
    const [node, agentUrl] = devEnvValue('KRUISE_NODE_AGENTS').split(',')[0]!.split('=');
    const ms = await killAndWaitBack(
      'agent',
      `${agentUrl}/readyz`,
      new RegExp(`^agent/${node} exited \\(SIGKILL\\) unasked; starting it again now, restart 1$`, 'm'),
    );
    figures.push(`agent/${node} SIGKILLed: running again and /readyz ok after ${(ms / 1000).toFixed(1)} s`);
    assert.ok(ms < 30_000, `within 30 s (${ms} ms)`);
  });

  it("waits kubelet's back-off on a second crash, then starts it again", async () => {
    const url = `${devEnvValue('KRUISE_CONTROLLER_URL')}/readyz`;
    const ms = await killAndWaitBack(
      'controller',
      url,
      /^controller exited \(SIGKILL\) unasked; starting it again in 10 s \(back-off\), restart 2$/m,
    );
    figures.push(`controller SIGKILLed again: 10 s back-off, /readyz ok after ${(ms / 1000).toFixed(1)} s`);
    assert.ok(ms >= 10_000, `not before the back-off (${ms} ms)`);
  });

  it("Ctrl-C after a SIGKILL of every one of dev's children: all down, nothing left running", async () => {
    // the node's holder: its mount namespace is the node's (the holder binary, started by `up` as dev's child)
    const holder = childrenOf(dev!.pid!).find((p) => p.argv[0] === binaryPathsOf(CLUSTER_DIR).holder)?.pid;
    assert.ok(
      holder !== undefined,
      `the node's holder process among ${JSON.stringify(childrenOf(dev!.pid!).map((p) => p.argv[0]))}`,
    );
    const nodeProcesses: ProcessId[] = processesIn(readlinkSync(`/proc/${holder}/ns/mnt`));
    assert.ok(nodeProcesses.length >= 3, `the node runs containerd, kubelet, shims: ${nodeProcesses.length}`);
    const children = childrenOf(dev!.pid!);
    assert.ok(children.length >= 5, `dev runs the cluster and ours: ${children.map((c) => c.argv[0]).join(', ')}`);
    for (const child of children) {
      try {
        process.kill(child.pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      dev!.once('exit', (code, signal) => resolve([code, signal])),
    );
    process.kill(-dev!.pid!, 'SIGINT'); // Ctrl-C in dev's terminal
    const stopStarted = Date.now();
    const [code, signal] = await exited;
    figures.push(
      `SIGKILL of dev's ${children.length} children, then Ctrl-C: all down in ${((Date.now() - stopStarted) / 1000).toFixed(1)} s`,
    );
    assert.match(devLog, /\[dev\] all down/);
    assert.deepEqual([code, signal], [0, null], `exit 0 on Ctrl-C; log tail:\n${devLog.slice(-3000)}`);
    assert.deepEqual(
      stillRunning(nodeProcesses).map((p) => `${p.pid} ${p.argv}`),
      [],
      `nothing of the node is left running (containerd, kubelet, shims, pods' processes); log tail:\n${devLog.slice(-3000)}`,
    );
    const naming = readdirSync('/proc')
      .filter((e) => /^\d+$/.test(e))
      .filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(CLUSTER_DIR);
        } catch {
          return false;
        }
      });
    assert.deepEqual(naming, [], `no process names ${CLUSTER_DIR}`);
    assert.ok(!existsSync(join(CLUSTER_DIR, 'dev.env')), 'dev.env is gone');
  });
});
