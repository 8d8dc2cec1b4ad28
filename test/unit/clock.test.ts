import assert from 'node:assert/strict';
import { FakeClock } from '../../src/util/clock.js';

describe('FakeClock', () => {
  it('fires due timers in time order and only when advanced', async () => {
    const clock = new FakeClock(0);
    const fired: string[] = [];
    clock.setTimer(() => fired.push('b'), 200);
    clock.setTimer(() => fired.push('a'), 100);
    const cancelled = clock.setTimer(() => fired.push('never'), 150);
    cancelled.cancel();
    await clock.advance(99);
    assert.deepEqual(fired, []);
    await clock.advance(101);
    assert.deepEqual(fired, ['a', 'b']);
    assert.equal(clock.now(), 200);
  });

  it('sleep resolves at the due time and rejects when aborted', async () => {
    const clock = new FakeClock(0);
    let done = false;
    const p = clock.sleep(50).then(() => (done = true));
    await clock.advance(49);
    assert.equal(done, false);
    await clock.advance(1);
    await p;
    assert.equal(done, true);
    const ac = new AbortController();
    const q = clock.sleep(1000, ac.signal);
    ac.abort(new Error('stop'));
    await assert.rejects(q, /stop/);
  });
});
