import assert from 'node:assert/strict';
import { LeaderElector, type LeaseLock, type LeaseRecord } from '../../../src/kube/leader-election.js';
import { microTime } from '../../../src/util/time.js';
import { FakeClock } from '../../../src/util/clock.js';
import { until } from '../../support/wait.js';

/** An in-memory lease with optimistic concurrency; `down` makes every call fail (API outage). */
class FakeLeaseStore {
  record?: LeaseRecord;
  rv = 0;
  down = false;
  writes = 0;

  lock(): LeaseLock {
    return {
      get: () =>
        this.down
          ? Promise.reject(new Error('api down'))
          : Promise.resolve(this.record && { record: structuredClone(this.record), resourceVersion: String(this.rv) }),
      create: (r) => {
        if (this.down) return Promise.reject(new Error('api down'));
        if (this.record) return Promise.reject(new Error('AlreadyExists'));
        this.record = structuredClone(r);
        this.rv++;
        this.writes++;
        return Promise.resolve();
      },
      update: (r, rv) => {
        if (this.down) return Promise.reject(new Error('api down'));
        if (rv !== String(this.rv)) return Promise.reject(new Error('Conflict'));
        this.record = structuredClone(r);
        this.rv++;
        this.writes++;
        return Promise.resolve();
      },
      describe: () => 'fake lease',
    };
  }
}

function candidate(store: FakeLeaseStore, clock: FakeClock, identity: string) {
  const log: string[] = [];
  let signal: AbortSignal | undefined;
  const elector = new LeaderElector({
    lock: store.lock(),
    identity,
    clock,
    random: () => 0,
    callbacks: {
      onStartedLeading: (s) => {
        signal = s;
        log.push('started');
      },
      onStoppedLeading: () => log.push('stopped'),
      onNewLeader: (id) => log.push(`leader ${id}`),
    },
  });
  const done = elector.run();
  return { elector, log, done, signal: () => signal };
}

describe('LeaderElector', () => {
  it('one of two candidates leads; the other takes over when the leader releases on stop', async () => {
    const clock = new FakeClock(0);
    const store = new FakeLeaseStore();
    const a = candidate(store, clock, 'a');
    await until(() => a.elector.isLeader(), 'a leads');
    const b = candidate(store, clock, 'b');
    await clock.advance(10_000);
    assert.ok(a.elector.isLeader());
    assert.ok(!b.elector.isLeader());
    assert.deepEqual(a.log, ['leader a', 'started']);
    assert.deepEqual(b.log, ['leader a']);
    assert.equal(store.record?.leaseDurationSeconds, 15);
    await a.elector.stop();
    await a.done;
    assert.deepEqual(a.log, ['leader a', 'started', 'stopped']);
    assert.ok(a.signal()?.aborted);
    assert.equal(store.record?.holderIdentity, '', 'released');
    await clock.advance(3_000);
    assert.ok(b.elector.isLeader(), 'b took the released lease within a retry period');
    assert.equal(store.record?.holderIdentity, 'b');
    assert.equal(store.record?.leaseTransitions, 1);
    await b.elector.stop();
  });

  it('takes over a lease whose holder stopped renewing only after the lease duration', async () => {
    const clock = new FakeClock(0);
    const store = new FakeLeaseStore();
    store.record = {
      holderIdentity: 'ghost',
      leaseDurationSeconds: 15,
      renewTime: microTime(0),
      acquireTime: microTime(0),
      leaseTransitions: 3,
    };
    store.rv = 1;
    const b = candidate(store, clock, 'b');
    await clock.advance(14_000);
    assert.ok(!b.elector.isLeader(), 'the lease still counts as held');
    await clock.advance(4_000);
    assert.ok(b.elector.isLeader());
    assert.equal(store.record?.leaseTransitions, 4);
    assert.notEqual(store.record?.acquireTime, microTime(0), 'a new holder gets a new acquireTime');
    assert.ok(Date.parse(store.record.acquireTime!) >= 15_000);
    await b.elector.stop();
  });

  it('renews every retry period and gives up leading when it cannot renew within the renew deadline', async () => {
    const clock = new FakeClock(0);
    const store = new FakeLeaseStore();
    const a = candidate(store, clock, 'a');
    await clock.advance(100);
    assert.ok(a.elector.isLeader());
    const writes = store.writes;
    await clock.advance(10_000);
    assert.equal(store.writes - writes, 5, 'one renewal each 2 s');
    store.down = true;
    await clock.advance(11_000);
    assert.ok(a.elector.isLeader(), 'still within retry period + renew deadline');
    await clock.advance(1_000);
    assert.ok(!a.elector.isLeader(), 'stops leading before the lease (15 s) can expire for others');
    assert.deepEqual(a.log, ['leader a', 'started', 'stopped']);
    await a.done;
  });

  it('rejects timings that cannot work', () => {
    const store = new FakeLeaseStore();
    const callbacks = { onStartedLeading: () => undefined, onStoppedLeading: () => undefined };
    assert.throws(
      () =>
        new LeaderElector({
          lock: store.lock(),
          identity: 'a',
          callbacks,
          leaseDurationMs: 5000,
          renewDeadlineMs: 5000,
        }),
      /leaseDuration must be greater/,
    );
    assert.throws(
      () =>
        new LeaderElector({ lock: store.lock(), identity: 'a', callbacks, renewDeadlineMs: 2000, retryPeriodMs: 2000 }),
      /renewDeadline must be greater/,
    );
    assert.throws(() => new LeaderElector({ lock: store.lock(), identity: '', callbacks }), /identity/);
  });

  it('formats MicroTime with microseconds', () => {
    assert.equal(microTime(Date.UTC(2024, 0, 2, 3, 4, 5, 678)), '2024-01-02T03:04:05.678000Z');
  });
});
