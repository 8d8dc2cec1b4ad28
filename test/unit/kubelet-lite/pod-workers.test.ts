// Per-pod workers (pod_workers.go): serialised syncs, an update during a sync runs right after it, requeue after
// the retry period on failure and the resync period on success, an update cancels the pending timer.
import assert from 'node:assert/strict';
import { silentLogger } from '../../../src/observability/logger.js';
import { FakeClock, flushMicrotasks } from '../../../src/util/clock.js';
import { PodWorkers, type WorkResult } from '../../cluster/kubelet-lite/pod-workers.js';

interface Harness {
  clock: FakeClock;
  workers: PodWorkers;
  calls: string[];
  /** Results to return, in order (default success). */
  results: WorkResult[];
  /** While set, syncs wait for it. */
  gate?: Promise<void>;
}

function harness(): Harness {
  const h: Harness = { clock: new FakeClock(), calls: [], results: [] } as unknown as Harness;
  h.workers = new PodWorkers(
    async (uid) => {
      h.calls.push(uid);
      if (h.gate) await h.gate;
      return h.results.shift() ?? { failed: false };
    },
    { retryMs: 10_000, resyncMs: 60_000 },
    silentLogger,
    h.clock,
    () => 0, // no jitter
  );
  return h;
}

describe('kubelet-lite: pod workers', () => {
  it('runs an update that arrives during a sync once, right after it', async () => {
    const h = harness();
    let open!: () => void;
    h.gate = new Promise((resolve) => (open = resolve));
    h.workers.update('a');
    await flushMicrotasks();
    h.workers.update('a');
    h.workers.update('a');
    assert.deepEqual(h.calls, ['a']);
    h.gate = undefined;
    open();
    await flushMicrotasks();
    assert.deepEqual(h.calls, ['a', 'a']);
  });

  it('retries a failed sync after the retry period and resyncs a good one after the resync period', async () => {
    const h = harness();
    h.results.push({ failed: true });
    h.workers.update('a');
    await flushMicrotasks();
    await h.clock.advance(9_999);
    assert.equal(h.calls.length, 1);
    await h.clock.advance(1);
    assert.equal(h.calls.length, 2);
    await h.clock.advance(59_999);
    assert.equal(h.calls.length, 2);
    await h.clock.advance(1);
    assert.equal(h.calls.length, 3);
  });

  it('an update replaces the pending timer; a finished pod is dropped', async () => {
    const h = harness();
    h.results.push({ failed: true });
    h.workers.update('a');
    await flushMicrotasks();
    await h.clock.advance(5_000);
    h.results.push({ failed: false, finished: true });
    h.workers.update('a');
    await flushMicrotasks();
    assert.equal(h.calls.length, 2);
    assert.equal(h.workers.has('a'), false);
    await h.clock.advance(120_000);
    assert.equal(h.calls.length, 2);
    assert.equal(h.clock.pendingTimers(), 0);
  });
});
