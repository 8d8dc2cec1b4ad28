// The probe worker on a FakeClock and a fake CRI: when it runs, what it reports, how it is cut and capped.
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { MAX_PROBE_MESSAGE_LENGTH } from '../../../src/api/constants.js';
import type { ContainerProbeSpec } from '../../../src/api/podprobemarker.js';
import { podProbeMetrics } from '../../../src/daemon/podprobe/metrics.js';
import type { ProbeTarget } from '../../../src/daemon/podprobe/probe-spec.js';
import { ProbeWorker, type ProbeResult } from '../../../src/daemon/podprobe/probe-worker.js';
import { RunSlots } from '../../../src/daemon/run-slots.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { FakeClock } from '../../../src/util/clock.js';
import { waitFor } from '../../support/wait.js';
import { FakeContainerRuntime, type FakeContainer } from '../containerrecreate/fake-runtime.js';

const UID = 'uid-1';

interface Harness {
  clock: FakeClock;
  runtime: FakeContainerRuntime;
  slots: RunSlots;
  registry: Registry;
  /** ExecSync calls: when (ms after t0) and in which container. */
  execs: { at: number; id: string }[];
  changes: { state: string; message: string; stateChanged: boolean }[];
  t0: number;
  worker(probe: ContainerProbeSpec, options?: { jitter?: number; name?: string; container?: string }): ProbeWorker;
  /** The container, started `msAgo` ms before now. */
  container(name?: string, msAgo?: number): FakeContainer;
}

const workers: ProbeWorker[] = [];

function harness(cap = 16): Harness {
  const clock = new FakeClock();
  const runtime = new FakeContainerRuntime();
  const slots = new RunSlots(cap);
  const registry = new Registry();
  const metrics = podProbeMetrics(registry);
  const t0 = clock.now();
  const h: Harness = {
    clock,
    runtime,
    slots,
    registry,
    execs: [],
    changes: [],
    t0,
    worker(probe, options = {}) {
      const target: ProbeTarget = {
        podNamespace: 'ns',
        podName: 'pod',
        podUid: UID,
        podIP: '127.0.0.1',
        containerName: options.container ?? 'main',
        probeName: options.name ?? 'ppm#healthy',
        probe,
      };
      const worker = new ProbeWorker(target, {
        runtime,
        clock,
        logger: silentLogger,
        slots,
        metrics,
        random: () => options.jitter ?? 0,
        onChange: (w, stateChanged) => {
          const r = w.result()!;
          h.changes.push({ state: r.state, message: r.message, stateChanged });
        },
      });
      workers.push(worker);
      worker.start();
      return worker;
    },
    container(name = 'main', msAgo = 0) {
      const c = runtime.add(UID, name);
      c.startedNs = BigInt(clock.now() - msAgo) * 1_000_000n;
      c.createdNs = c.startedNs;
      return c;
    },
  };
  runtime.execResult = (id) => {
    h.execs.push({ at: clock.now() - t0, id });
    return Promise.resolve({ exit: 0, stdout: 'ok' });
  };
  return h;
}

const exec = (extra: Partial<ContainerProbeSpec> = {}): ContainerProbeSpec => ({
  exec: { command: ['cat', '/tmp/healthy'] },
  ...extra,
});

function state(worker: ProbeWorker): ProbeResult['state'] | undefined {
  return worker.result()?.state;
}

describe('podprobe worker', () => {
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
  });

  it('runs first max(initialDelaySeconds,1) after the container started (plus its jitter), then every period', async () => {
    const h = harness();
    h.container('main', 0);
    const w = h.worker(exec({ initialDelaySeconds: 5, periodSeconds: 10 }), { jitter: 0.3 });
    // first look at 0.3 * period = 3 s: inside the initial delay, so the run waits for 5 s + 3 s of jitter
    await h.clock.advance(7_999);
    assert.equal(h.execs.length, 0);
    assert.equal(state(w), 'Unknown', 'Unknown once the container is seen, until a result is decided');
    await h.clock.advance(1);
    await waitFor(() => h.execs.length === 1, { message: 'first run at 8 s' });
    assert.equal(h.execs[0]!.at, 8_000);
    await h.clock.advance(30_000);
    await waitFor(() => h.execs.length === 4);
    assert.deepEqual(
      h.execs.map((e) => e.at),
      [8_000, 18_000, 28_000, 38_000],
    );
    assert.equal(state(w), 'Succeeded');
    assert.equal(w.result()!.message, 'ok');
  });

  it("reads a container's start time once (one ContainerStatus per container), then only lists the pod's containers", async () => {
    const h = harness();
    let statusCalls = 0;
    const status = h.runtime.containerStatus.bind(h.runtime);
    h.runtime.containerStatus = (request) => {
      statusCalls++;
      return status(request);
    };
    const first = h.container('main', 60_000);
    h.worker(exec({ periodSeconds: 1 }));
    await h.clock.advance(5_000);
    await waitFor(() => h.execs.length >= 5, { message: 'five runs' });
    assert.equal(statusCalls, 1);
    // a restart: the new container's start time is read, once
    first.state = 'CONTAINER_EXITED';
    h.container('main', 0);
    await h.clock.advance(5_000);
    await waitFor(() => h.execs.some((e) => e.id !== first.id), { message: 'a run in the new container' });
    assert.equal(statusCalls, 2);
  });

  it('floors period, delay and timeout at 1 s, and spreads workers by their jitter', async () => {
    const h = harness();
    h.container('main', 60_000);
    h.worker(exec({ periodSeconds: 0, initialDelaySeconds: -3 }), { jitter: 0, name: 'a' });
    h.worker(exec({ periodSeconds: 0 }), { jitter: 0.5, name: 'b' });
    await h.clock.advance(2_000);
    await waitFor(() => h.execs.length >= 4);
    assert.deepEqual(
      h.execs.map((e) => e.at).sort((a, b) => a - b),
      [0, 500, 1_000, 1_500, 2_000],
    );
  });

  it('moves the state only after successThreshold/failureThreshold equal results in a row', async () => {
    const h = harness();
    h.container('main', 60_000);
    const script = [0, 1, 1, 0, 1, 1, 1, 0, 0];
    let n = 0;
    h.runtime.execResult = () => {
      const exit = script[n++] ?? 0;
      return Promise.resolve({ exit, stdout: exit === 0 ? 'up' : 'down' });
    };
    const w = h.worker(exec({ periodSeconds: 1, successThreshold: 2, failureThreshold: 3 }));
    const seen: (string | undefined)[] = [];
    for (let i = 0; i < script.length; i++) {
      await h.clock.advance(i === 0 ? 0 : 1_000);
      await waitFor(() => n === i + 1, { message: `run ${i + 1}` });
      seen.push(state(w));
    }
    // 0 → one success (threshold 2): Unknown; 1,1 → two failures: still Unknown; 0 → reset; 1,1,1 → Failed; 0,0 → Succeeded
    assert.deepEqual(seen, [
      'Unknown',
      'Unknown',
      'Unknown',
      'Unknown',
      'Unknown',
      'Unknown',
      'Failed',
      'Failed',
      'Succeeded',
    ]);
    assert.equal(w.result()!.message, 'up');
  });

  it('cuts a hanging probe at its timeout and frees its slot for the next run', async () => {
    const h = harness(1);
    h.container('main', 60_000);
    h.container('side', 60_000);
    let inFlight = 0;
    h.runtime.execResult = (id) => {
      h.execs.push({ at: h.clock.now() - h.t0, id });
      if (id.endsWith('-main')) {
        inFlight++;
        return new Promise(() => undefined); // never answers; the worker must not wait for it
      }
      return Promise.resolve({ exit: 0, stdout: '' });
    };
    const hung = h.worker(exec({ timeoutSeconds: 3, periodSeconds: 60 }), { name: 'hang', container: 'main' });
    const other = h.worker(exec({ periodSeconds: 60 }), { name: 'other', container: 'side', jitter: 0.001 });
    await h.clock.advance(100);
    await waitFor(() => inFlight === 1);
    assert.equal(h.slots.inUse, 1);
    assert.equal(state(other), 'Unknown', 'the other probe waits for the only slot');
    await h.clock.advance(2_899);
    assert.equal(state(hung), 'Unknown');
    await h.clock.advance(1);
    await waitFor(() => state(hung) === 'Failed' && state(other) === 'Succeeded', {
      message: 'cut, then the other ran',
    });
    assert.equal(hung.result()!.message, 'probe timed out after 3s');
    assert.equal(h.execs.find((e) => e.id.endsWith('-side'))!.at, 3_000, 'the slot was freed at the timeout');
    await waitFor(() => h.slots.inUse === 0);
    const text = await h.registry.metrics();
    assert.match(text, /kruise_daemon_pod_probe_runs_total\{type="exec",result="timeout"\} 1/);
    assert.match(text, /kruise_daemon_pod_probe_slot_wait_seconds_sum 2\.9/);
  });

  it('runs at most the cap of probes at once', async () => {
    const h = harness(2);
    let inFlight = 0;
    let most = 0;
    const finish: (() => void)[] = [];
    h.runtime.execResult = () => {
      inFlight++;
      most = Math.max(most, inFlight);
      return new Promise((resolve) =>
        finish.push(() => {
          inFlight--;
          resolve({ exit: 0, stdout: '' });
        }),
      );
    };
    for (const name of ['a', 'b', 'c', 'd', 'e']) {
      h.container(name, 60_000);
      h.worker(exec({ periodSeconds: 60, timeoutSeconds: 30 }), { container: name, name });
    }
    await h.clock.advance(0);
    await waitFor(() => inFlight === 2);
    while (finish.length > 0 || inFlight > 0) {
      finish.shift()?.();
      await h.clock.advance(0);
    }
    await waitFor(() => h.changes.filter((c) => c.state === 'Succeeded').length === 5);
    assert.equal(most, 2);
  });

  it('resets to Unknown when the container restarts (new ID) and waits for the initial delay again', async () => {
    const h = harness();
    const first = h.container('main', 60_000);
    const w = h.worker(exec({ periodSeconds: 10, initialDelaySeconds: 15 }));
    await h.clock.advance(0);
    await waitFor(() => state(w) === 'Succeeded');
    first.state = 'CONTAINER_EXITED';
    const second = h.container('main', 0);
    // the new instance started at 0 s; the worker sees it at its next look (10 s) and runs it at 15 s
    await h.clock.advance(10_000);
    await waitFor(() => state(w) === 'Unknown');
    assert.ok(h.execs.every((e) => e.id === first.id));
    await h.clock.advance(4_999);
    assert.ok(
      h.execs.every((e) => e.id === first.id),
      'nothing runs before the initial delay',
    );
    await h.clock.advance(1);
    await waitFor(() => state(w) === 'Succeeded');
    assert.equal(h.execs.at(-1)!.id, second.id);
    assert.deepEqual(
      h.changes.map((c) => c.state),
      ['Unknown', 'Succeeded', 'Unknown', 'Succeeded'],
    );
  });

  it("a container not running is Failed with OpenKruise's message, and nothing is exec'd in it", async () => {
    const h = harness();
    const c = h.container('main', 60_000);
    c.state = 'CONTAINER_EXITED';
    const w = h.worker(exec());
    await h.clock.advance(5_000);
    await waitFor(() => state(w) === 'Failed');
    assert.equal(w.result()!.message, 'Container(main) is Non-running');
    assert.equal(h.execs.length, 0);
    assert.equal(h.changes.length, 2, 'Unknown when seen, then Failed once (no write per look)');
  });

  it('no container found: no run and no result', async () => {
    const h = harness();
    const w = h.worker(exec());
    await h.clock.advance(5_000);
    assert.equal(w.result(), undefined);
    assert.equal(h.execs.length, 0);
    assert.ok(
      h.runtime.calls.some((c) => c.method === 'ListContainers'),
      'it looked',
    );
  });

  it('cuts the message to MAX_PROBE_MESSAGE_LENGTH characters; failure says stderr/stdout', async () => {
    const h = harness();
    h.container('main', 60_000);
    h.runtime.execResult = () => Promise.resolve({ exit: 1, stdout: 'é'.repeat(MAX_PROBE_MESSAGE_LENGTH + 50) });
    const w = h.worker(exec());
    await h.clock.advance(0);
    await waitFor(() => state(w) === 'Failed');
    assert.equal(w.result()!.message, 'é'.repeat(MAX_PROBE_MESSAGE_LENGTH));
  });

  it('stop() ends the worker: no timer left, no later run', async () => {
    const h = harness();
    h.container('main', 60_000);
    const w = h.worker(exec({ periodSeconds: 1 }));
    await h.clock.advance(0);
    await waitFor(() => h.execs.length === 1);
    await w.stop();
    assert.equal(h.clock.pendingTimers(), 0);
    await h.clock.advance(10_000);
    assert.equal(h.execs.length, 1);
  });

  it('keeps a result adopted from the object when it was measured on the running container', async () => {
    const h = harness();
    const clockStart = h.clock.now();
    h.container('main', 60_000);
    const previous = {
      name: 'ppm#healthy',
      state: 'Succeeded' as const,
      lastProbeTime: new Date(clockStart - 30_000).toISOString(),
      lastTransitionTime: new Date(clockStart - 30_000).toISOString(),
      message: 'ok',
    };
    const make = (lastProbe: number): ProbeWorker => {
      const w = new ProbeWorker(
        {
          podNamespace: 'ns',
          podName: 'pod',
          podUid: UID,
          podIP: undefined,
          containerName: 'main',
          probeName: 'ppm#healthy',
          probe: exec({ periodSeconds: 10, failureThreshold: 2 }),
        },
        {
          runtime: h.runtime,
          clock: h.clock,
          logger: silentLogger,
          slots: h.slots,
          metrics: podProbeMetrics(h.registry),
          random: () => 0.5,
          onChange: (_w, stateChanged) => h.changes.push({ state: '', message: '', stateChanged }),
        },
        { ...previous, lastProbeTime: new Date(lastProbe).toISOString() },
      );
      workers.push(w);
      w.start();
      return w;
    };
    h.runtime.execResult = () => new Promise(() => undefined); // no run decides anything in this test
    const fresh = make(clockStart - 30_000);
    const stale = make(clockStart - 90_000); // before the container started: an older container's result
    await h.clock.advance(5_000);
    assert.equal(state(fresh), 'Succeeded');
    await waitFor(() => state(stale) === 'Unknown');
    assert.equal(h.changes.length, 1, 'only the stale one reported a change');
  });
});
