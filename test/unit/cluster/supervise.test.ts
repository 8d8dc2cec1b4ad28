import assert from 'node:assert/strict';
import { KUBELET_RESTART_BACKOFF, nextRestart, Supervised, type RestartHistory } from '../../cluster/supervise.js';
import { waitFor } from '../../support/wait.js';

describe("npm run dev's supervision: kubelet's crash-loop back-off", () => {
  /** The waits before each restart of a process that exits `gapsMs` after each of its starts. */
  function waits(gapsMs: number[]): number[] {
    let history: RestartHistory | undefined;
    let now = 0;
    const delays: number[] = [];
    for (const gap of gapsMs) {
      now += gap; // it ran this long, then exited
      const next = nextRestart(history, now);
      delays.push(next.delayMs);
      now += next.delayMs;
      history = next.history(now);
    }
    return delays;
  }

  it('starts a crashed process again at once, then after 10 s doubling up to 300 s', () => {
    assert.deepEqual(
      waits(Array<number>(9).fill(1000)),
      [0, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000, 300_000],
    );
  });

  it('starts over once the process ran more than 10 minutes since its last restart', () => {
    const stable = KUBELET_RESTART_BACKOFF.stableAfterMs;
    assert.deepEqual(waits([1000, 1000, 1000, stable + 1, 1000]), [0, 10_000, 20_000, 0, 10_000]);
    assert.deepEqual(waits([1000, 1000, stable]), [0, 10_000, 20_000], 'exactly 10 minutes is not yet stable');
  });
});

describe("npm run dev's supervision: a process", () => {
  const node = (code: string) => ({ command: process.execPath, args: ['-e', code], env: process.env });

  it('is started again at once after its first crash, said with the cause, and not after stop()', async () => {
    const said: string[] = [];
    const lines: string[] = [];
    const fatal: string[] = [];
    const crashing = new Supervised({
      name: 'agent/kd-node-1',
      launch: node('console.log("up"); process.kill(process.pid, "SIGKILL")'),
      line: (name, line) => lines.push(`${name} ${line}`),
      say: (m) => said.push(m),
      onFatal: (reason) => fatal.push(reason),
    });
    await waitFor(() => said.length >= 2, { timeoutMs: 10_000, message: 'two exits' });
    assert.equal(said[0], 'agent/kd-node-1 exited (SIGKILL) unasked; starting it again now, restart 1');
    assert.equal(said[1], 'agent/kd-node-1 exited (SIGKILL) unasked; starting it again in 10 s (back-off), restart 2');
    assert.equal(crashing.restartCount, 1, 'the second restart waits its back-off');
    assert.equal(lines.filter((l) => l === 'agent/kd-node-1 up').length, 2);
    await crashing.stop(); // during the back-off: no restart after this
    assert.equal(crashing.restartCount, 1);
    assert.equal(crashing.pid, undefined);
    assert.deepEqual(fatal, []);
  });

  it('is stopped with one SIGTERM, said as a plain exit', async () => {
    const said: string[] = [];
    const lines: string[] = [];
    const running = new Supervised({
      name: 'controller',
      launch: node('process.on("SIGTERM", () => process.exit(0)); console.log("ready"); setInterval(() => {}, 1000)'),
      line: (_name, line) => lines.push(line),
      say: (m) => said.push(m),
      onFatal: () => undefined,
    });
    await waitFor(() => lines.includes('ready'), { timeoutMs: 10_000, message: 'its SIGTERM handler set' });
    await running.stop();
    assert.deepEqual(said, ['controller exited (0)']);
  });

  it('is not started again when it cannot be (its node is gone): dev is told, with the cause', async () => {
    const fatal: string[] = [];
    const supervised = new Supervised({
      name: 'agent/kd-node-2',
      launch: node('process.exit(3)'),
      line: () => undefined,
      say: () => undefined,
      canRestart: () => Promise.resolve('the holder process of kd-node-2 is gone'),
      onFatal: (reason) => fatal.push(reason),
    });
    await waitFor(() => fatal.length === 1, { timeoutMs: 10_000, message: 'the fatal reason' });
    assert.deepEqual(fatal, ['agent/kd-node-2 cannot be started again: the holder process of kd-node-2 is gone']);
    assert.equal(supervised.restartCount, 0);
    await supervised.stop();
  });
});
