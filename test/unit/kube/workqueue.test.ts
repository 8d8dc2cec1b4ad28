import assert from 'node:assert/strict';
import { WorkQueue } from '../../../src/kube/workqueue/queue.js';
import { ExponentialFailureRateLimiter } from '../../../src/kube/workqueue/rate-limiter.js';
import { runWorkers } from '../../../src/kube/workqueue/workers.js';
import { FakeClock } from '../../../src/util/clock.js';
import { until } from '../../support/wait.js';

function newQueue(clock = new FakeClock(0)) {
  return { clock, q: new WorkQueue<string>({ name: 'test', clock }) };
}

describe('WorkQueue', () => {
  it('dedupes keys waiting and hands them out in order', async () => {
    const { q } = newQueue();
    q.add('a');
    q.add('b');
    q.add('a');
    assert.equal(q.len(), 2);
    assert.equal(await q.get(), 'a');
    assert.equal(await q.get(), 'b');
    assert.equal(q.len(), 0);
  });

  it('never hands out a key being processed; an add meanwhile re-queues it after done()', async () => {
    const { q, clock } = newQueue();
    q.add('a');
    const first = await q.get();
    q.add('a');
    q.add('a');
    assert.equal(q.len(), 0, 'a is in flight, so it must wait');
    let second: string | undefined;
    void q.get().then((k) => (second = k));
    await clock.advance(0); // lets pending callbacks run: a get() answered wrongly would have set `second`
    assert.equal(second, undefined);
    q.done(first!);
    await until(() => second !== undefined, 'the waiting get() answered');
    assert.equal(second, 'a');
    q.done('a');
    assert.equal(q.len(), 0, 'the two adds while processing count once');
  });

  it('addAfter waits on the clock and keeps the earliest time', async () => {
    const { q, clock } = newQueue();
    q.addAfter('a', 1000);
    q.addAfter('a', 500);
    q.addAfter('a', 2000);
    assert.equal(q.delayedLen(), 1);
    await clock.advance(499);
    assert.equal(q.len(), 0);
    await clock.advance(1);
    assert.equal(q.len(), 1);
    await clock.advance(5000);
    assert.equal(q.len(), 1, 'the later timers were dropped');
  });

  it('addRateLimited backs off per key exponentially until forget()', async () => {
    const { q, clock } = newQueue();
    const delays: number[] = [];
    for (let i = 0; i < 4; i++) {
      const start = clock.now();
      q.addRateLimited('k');
      while (q.len() === 0) await clock.advance(1);
      delays.push(clock.now() - start);
      const k = await q.get();
      q.done(k!);
    }
    assert.deepEqual(delays, [5, 10, 20, 40]);
    assert.equal(q.numRequeues('k'), 4);
    q.forget('k');
    assert.equal(q.numRequeues('k'), 0);
  });

  it('shutDownWithDrain stops accepting, lets queued and in-flight keys finish, then stops workers', async () => {
    const { q, clock } = newQueue();
    q.add('a');
    q.add('b');
    q.addAfter('c', 1000);
    const inFlight = await q.get();
    let drained = false;
    const drain = q.shutDownWithDrain().then(() => (drained = true));
    q.add('d');
    assert.equal(q.len(), 1, 'd refused after shutdown; b still queued');
    assert.equal(q.delayedLen(), 0, 'delayed keys are dropped');
    assert.equal(await q.get(), 'b');
    q.done(inFlight!);
    await clock.advance(0); // lets pending callbacks run: a drain resolved too early would have set `drained`
    assert.equal(drained, false, 'b is still in flight');
    q.done('b');
    await drain;
    assert.equal(await q.get(), undefined);
  });
});

describe('runWorkers', () => {
  it('reconciles keys, retries throws with backoff, honours requeueAfter, and drains on shutdown', async () => {
    const clock = new FakeClock(0);
    const q = new WorkQueue<string>({ name: 'w', clock });
    const calls: string[] = [];
    let failures = 2;
    const running = runWorkers(q, 2, (key) => {
      calls.push(`${key}@${clock.now()}`);
      if (key === 'flaky' && failures-- > 0) throw new Error('boom');
      if (key === 'later' && calls.filter((c) => c.startsWith('later')).length === 1) return { requeueAfter: 1000 };
      return undefined;
    });
    q.add('flaky');
    q.add('later');
    await clock.advance(0);
    await clock.advance(5);
    await clock.advance(10);
    await clock.advance(1000);
    assert.deepEqual(calls, ['flaky@0', 'later@0', 'flaky@5', 'flaky@15', 'later@1000']);
    assert.equal(q.numRequeues('flaky'), 0, 'success forgets the backoff');
    await q.shutDownWithDrain();
    await running;
  });

  it('runs one key at most once at a time with many workers', async () => {
    const clock = new FakeClock(0);
    const q = new WorkQueue<string>({ name: 'w', clock });
    const active = new Set<string>();
    let overlaps = 0;
    let runs = 0;
    const running = runWorkers(q, 4, async (key) => {
      if (active.has(key)) overlaps++;
      active.add(key);
      runs++;
      await clock.sleep(10);
      active.delete(key);
    });
    for (let i = 0; i < 20; i++) {
      q.add(`k${i % 3}`);
      await clock.advance(3);
    }
    await clock.advance(100);
    assert.equal(overlaps, 0);
    assert.ok(runs >= 3);
    q.shutDown();
    await running;
  });
});

describe('rate limiter', () => {
  it('exponential failure limiter caps at max', () => {
    const l = new ExponentialFailureRateLimiter<string>(5, 1000);
    const ds = Array.from({ length: 10 }, () => l.when('a'));
    assert.deepEqual(ds, [5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000]);
    assert.equal(l.when('b'), 5, 'per key');
    assert.equal(new ExponentialFailureRateLimiter<string>().maxMs, 1_000_000);
  });
});
