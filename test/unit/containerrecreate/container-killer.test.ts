import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ContainerKiller, type EventSink } from '../../../src/daemon/podruntime/container-killer.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { FakeClock } from '../../../src/util/clock.js';
import { until } from '../../support/wait.js';
import { FakeContainerRuntime } from './fake-runtime.js';

class Events implements EventSink {
  readonly recorded: Array<{ type: string; reason: string; message: string }> = [];
  event(_obj: KubeObject, type: string, reason: string, message: string): void {
    this.recorded.push({ type, reason, message });
  }
}

const POD = { apiVersion: 'v1', kind: 'Pod', metadata: { namespace: 'ns', name: 'p', uid: 'u1' } };

describe('ContainerKiller (kubelet killContainer)', () => {
  it('runs an exec preStop hook before StopContainer and subtracts its whole seconds from the grace', async () => {
    const clock = new FakeClock();
    const runtime = new FakeContainerRuntime();
    const c = runtime.add('u1', 'app');
    let release!: () => void;
    runtime.execResult = () =>
      new Promise((resolve) => {
        release = () => resolve({ exit: 0, stdout: '' });
      });
    const events = new Events();
    const killer = new ContainerKiller({ runtime, events, clock, logger: silentLogger });
    const done = killer.kill({
      pod: POD,
      containerId: c.id,
      containerName: 'app',
      preStop: { exec: { command: ['sh', '-c', 'echo bye'] } },
      gracePeriodSeconds: 10,
      message: 'Stopping container app',
    });
    await until(() => runtime.calls.some((x) => x.method === 'ExecSync'), 'the preStop hook runs');
    assert.deepEqual(runtime.stops(), [], 'no stop while the hook runs');
    await clock.advance(3500);
    release();
    const result = await done;
    assert.deepEqual(
      runtime.calls.filter((x) => x.method !== 'ListContainers').map((x) => x.method),
      ['ExecSync', 'StopContainer'],
    );
    assert.equal(result.stopTimeoutSeconds, 7);
    assert.deepEqual(events.recorded, [{ type: 'Normal', reason: 'Killing', message: 'Stopping container app' }]);
  });

  it('a preStop hook that outlives the grace period is abandoned: FailedPreStopHook, then a stop of 2 s', async () => {
    const clock = new FakeClock();
    const runtime = new FakeContainerRuntime();
    const c = runtime.add('u1', 'app');
    runtime.execResult = () => new Promise(() => undefined);
    const events = new Events();
    const killer = new ContainerKiller({ runtime, events, clock, logger: silentLogger });
    const done = killer.kill({
      pod: POD,
      containerId: c.id,
      containerName: 'app',
      preStop: { exec: { command: ['sleep', '100'] } },
      gracePeriodSeconds: 5,
      message: 'm',
    });
    await until(() => runtime.calls.some((x) => x.method === 'ExecSync'), 'the preStop hook runs');
    await clock.advance(5000);
    const result = await done;
    assert.equal(result.stopTimeoutSeconds, 2);
    assert.match(result.preStopError ?? '', /grace period/);
    assert.deepEqual(
      events.recorded.map((e) => e.reason),
      ['Killing', 'FailedPreStopHook'],
    );
    assert.deepEqual(runtime.stops(), [c.id]);
  });

  it('a failing hook is reported and the container is stopped anyway; no hook when the grace is 0', async () => {
    const clock = new FakeClock();
    const runtime = new FakeContainerRuntime();
    const c = runtime.add('u1', 'app');
    runtime.execResult = () => Promise.resolve({ exit: 3, stdout: 'boom' });
    const events = new Events();
    const killer = new ContainerKiller({ runtime, events, clock, logger: silentLogger });
    const result = await killer.kill({
      pod: POD,
      containerId: c.id,
      containerName: 'app',
      preStop: { exec: { command: ['false'] } },
      gracePeriodSeconds: 30,
      message: 'm',
    });
    assert.match(result.preStopError ?? '', /exited with 3: boom/);
    assert.equal(result.stopTimeoutSeconds, 30);
    const d = runtime.add('u1', 'side');
    await killer.kill({
      pod: POD,
      containerId: d.id,
      containerName: 'side',
      preStop: { exec: { command: ['x'] } },
      gracePeriodSeconds: 0,
      message: 'm',
    });
    assert.equal(runtime.calls.filter((x) => x.method === 'ExecSync').length, 1);
    assert.equal(runtime.calls.at(-1)?.method === 'StopContainer' && runtime.calls.at(-1), runtime.calls.at(-1));
  });

  it('an httpGet hook without host and without a pod IP fails with a clear message', async () => {
    const runtime = new FakeContainerRuntime();
    const c = runtime.add('u1', 'app');
    const events = new Events();
    const killer = new ContainerKiller({ runtime, events, clock: new FakeClock(), logger: silentLogger });
    const result = await killer.kill({
      pod: POD,
      containerId: c.id,
      containerName: 'app',
      preStop: { httpGet: { port: 'http' } },
      gracePeriodSeconds: 3,
      message: 'm',
    });
    assert.match(result.preStopError ?? '', /no IP/);
    assert.deepEqual(runtime.stops(), [c.id]);
  });

  it('an httpGet hook with a named port calls the pod IP before the stop', async () => {
    const runtime = new FakeContainerRuntime();
    const c = runtime.add('u1', 'app');
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url} stops=${runtime.stops().length}`);
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      const killer = new ContainerKiller({
        runtime,
        events: new Events(),
        clock: new FakeClock(),
        logger: silentLogger,
      });
      const result = await killer.kill({
        pod: POD,
        podIP: '127.0.0.1',
        containerId: c.id,
        containerName: 'app',
        preStop: { httpGet: { path: 'quit', port: 'http' } },
        ports: [{ name: 'http', containerPort: port }],
        gracePeriodSeconds: 5,
        message: 'm',
      });
      assert.equal(result.preStopError, undefined);
      assert.deepEqual(seen, ['GET /quit stops=0']);
      assert.deepEqual(runtime.stops(), [c.id]);
    } finally {
      server.close();
    }
  });
});
