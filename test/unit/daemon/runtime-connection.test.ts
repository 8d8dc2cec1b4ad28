import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { backoffDelay } from '../../../src/util/backoff.js';
import {
  RUNTIME_CONNECT_BACKOFF,
  RUNTIME_WATCH,
  RuntimeConnection,
  type RuntimeHandle,
} from '../../../src/daemon/runtime-connection.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { FakeClock } from '../../../src/util/clock.js';
import { until } from '../../support/wait.js';

class FakeRuntime implements RuntimeHandle {
  readonly socketPath = '/run/fake.sock';
  answering = true;
  /** Version calls that never answer (the runtime's socket accepts but nothing replies). */
  hanging = false;
  closed = 0;
  versionCalls = 0;
  version(): Promise<unknown> {
    this.versionCalls++;
    if (this.hanging) return new Promise<never>(() => undefined);
    if (!this.answering) return Promise.reject(new Error('connection refused'));
    return Promise.resolve({ runtime_name: 'fake' });
  }
  close(): void {
    this.closed++;
  }
}

/** connect() that fails `failures` times, then returns the runtime; counts attempts. */
function flakyConnect(runtime: FakeRuntime, failures: number) {
  const calls = { count: 0 };
  const connect = (): Promise<FakeRuntime> => {
    calls.count++;
    if (calls.count <= failures) {
      return Promise.reject(new Error(`no runtime socket under /hostvarrun (attempt ${calls.count})`));
    }
    return Promise.resolve(runtime);
  };
  return { connect, calls };
}

function checkReason(connection: RuntimeConnection<FakeRuntime>, check = connection.check): string | undefined {
  try {
    check();
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

describe('RuntimeConnection', () => {
  it('connects at once when the runtime answers, and the check passes', async () => {
    const runtime = new FakeRuntime();
    const { connect, calls } = flakyConnect(runtime, 0);
    const registry = new Registry();
    const connection = new RuntimeConnection({ connect, logger: silentLogger, clock: new FakeClock(), registry });
    connection.start();
    assert.equal(await connection.connected(), runtime);
    assert.equal(calls.count, 1);
    assert.equal(checkReason(connection), undefined);
    assert.match(await registry.metrics(), /kruise_daemon_runtime_connected 1/);
    await connection.close();
    assert.equal(runtime.closed, 1);
    assert.match(await registry.metrics(), /kruise_daemon_runtime_connected 0/);
  });

  it('retries with growing delays and says why on the check until the runtime answers', async () => {
    const clock = new FakeClock();
    const runtime = new FakeRuntime();
    const { connect, calls } = flakyConnect(runtime, 3);
    const connection = new RuntimeConnection({ connect, logger: silentLogger, clock, random: () => 0 }); // no jitter
    connection.start();
    await until(() => clock.pendingTimers() === 1, 'the first attempt failed and a retry is scheduled');
    assert.equal(calls.count, 1);
    assert.equal(connection.client, undefined);
    assert.equal(
      checkReason(connection),
      'no container runtime yet (1 failed attempt, next attempt in 1 s): no runtime socket under /hostvarrun (attempt 1)',
    );

    await clock.advance(999);
    assert.equal(calls.count, 1, 'no retry before the first delay (1 s)');
    await clock.advance(1);
    assert.equal(calls.count, 2);
    assert.match(checkReason(connection)!, /2 failed attempts, next attempt in 2 s/);

    await clock.advance(1999);
    assert.equal(calls.count, 2, 'the second delay is 2 s');
    await clock.advance(1);
    assert.equal(calls.count, 3);
    await clock.advance(4000);
    assert.equal(calls.count, 4);
    assert.equal(connection.client, runtime);
    assert.equal(checkReason(connection), undefined);
    assert.equal(clock.pendingTimers(), 1, 'no more attempts once connected: only the runtime watch waits');
    await connection.close();
    assert.equal(clock.pendingTimers(), 0);
  });

  it('follows a connected runtime in the background: the check reads its last answer, never calls it', async () => {
    const clock = new FakeClock();
    const runtime = new FakeRuntime();
    const registry = new Registry();
    const connection = new RuntimeConnection({
      connect: flakyConnect(runtime, 0).connect,
      logger: silentLogger,
      clock,
      registry,
    });
    connection.start();
    await connection.connected();
    runtime.answering = false;
    const calls = runtime.versionCalls;
    assert.equal(checkReason(connection), undefined, 'still the last known answer');
    assert.equal(runtime.versionCalls, calls, 'the check did not call the runtime');

    await clock.advance(RUNTIME_WATCH.answeringEveryMs);
    await until(() => checkReason(connection) !== undefined, 'the watch saw the runtime stop answering');
    assert.equal(checkReason(connection), 'runtime at /run/fake.sock does not answer (for 0 s): connection refused');
    assert.match(await registry.metrics(), /kruise_daemon_runtime_answering 0/);
    assert.match(await registry.metrics(), /kruise_daemon_runtime_connected 1/);
    assert.equal(checkReason(connection, connection.checkLoop), undefined, 'a runtime down is no liveness failure');

    await clock.advance(10 * RUNTIME_WATCH.silentEveryMs);
    await until(() => runtime.versionCalls >= calls + 11, 'asked every second while silent');
    assert.match(checkReason(connection)!, /does not answer \(for 10 s\)/);

    runtime.answering = true;
    await clock.advance(RUNTIME_WATCH.silentEveryMs);
    await until(() => checkReason(connection) === undefined, 'its return seen within a second');
    assert.match(await registry.metrics(), /kruise_daemon_runtime_answering 1/);
    await connection.close();
    assert.equal(clock.pendingTimers(), 0);
  });

  it('asks with a deadline, and fails liveness only when one step of its loop is stuck', async () => {
    const clock = new FakeClock();
    const runtime = new FakeRuntime();
    const seen: Array<{ timeoutMs?: number } | undefined> = [];
    const version = runtime.version.bind(runtime);
    runtime.version = (_request?: unknown, options?: { timeoutMs?: number }) => {
      seen.push(options);
      return version();
    };
    const connection = new RuntimeConnection({
      connect: flakyConnect(runtime, 0).connect,
      logger: silentLogger,
      clock,
    });
    connection.start();
    await connection.connected();
    runtime.hanging = true; // a CRI client whose deadline does not fire (a bug): the loop is stuck
    await clock.advance(RUNTIME_WATCH.answeringEveryMs);
    await until(() => seen.length === 1, 'the watch asked');
    assert.equal(seen[0]?.timeoutMs, RUNTIME_WATCH.deadlineMs);
    await clock.advance(RUNTIME_WATCH.stuckAfterMs);
    assert.equal(checkReason(connection, connection.checkLoop), undefined, 'not yet past the limit');
    await clock.advance(1000);
    assert.equal(checkReason(connection, connection.checkLoop), 'the runtime loop has been stuck in one step for 61 s');
    void connection.close();
  });

  it('close() stops the retries and rejects waiters', async () => {
    const clock = new FakeClock();
    const { connect, calls } = flakyConnect(new FakeRuntime(), 1000);
    const connection = new RuntimeConnection({ connect, logger: silentLogger, clock });
    connection.start();
    await until(() => clock.pendingTimers() === 1, 'the first attempt failed and a retry is scheduled');
    const waiting = connection.connected();
    await connection.close();
    await assert.rejects(waiting, /closed/);
    await clock.advance(120_000);
    assert.equal(calls.count, 1);
    assert.match(checkReason(connection)!, /closed/);
  });

  it('closes a client that arrives after close()', async () => {
    const runtime = new FakeRuntime();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const connection = new RuntimeConnection({
      connect: async () => {
        await gate;
        return runtime;
      },
      logger: silentLogger,
    });
    connection.start();
    const closing = connection.close();
    release();
    await closing;
    assert.equal(runtime.closed, 1);
    assert.equal(connection.client, undefined);
  });
});

describe('RUNTIME_CONNECT_BACKOFF', () => {
  it('doubles from 1 s up to 30 s, jitter taken off', () => {
    const none = () => 0;
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6, 7, 50].map((n) => backoffDelay(RUNTIME_CONNECT_BACKOFF, n, none)),
      [1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000],
    );
    assert.equal(
      backoffDelay(RUNTIME_CONNECT_BACKOFF, 1, () => 1),
      800,
    );
  });
});
