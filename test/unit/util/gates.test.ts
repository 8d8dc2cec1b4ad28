// Small helpers of the agent's loops: WakeList (waits ended by one wake, or by their signal), SerialRun (never two
// runs at once, no request lost), repeatEvery (a step every interval on a clock, until aborted).
import assert from 'node:assert/strict';
import { FakeClock, repeatEvery } from '../../../src/util/clock.js';
import { SerialRun } from '../../../src/util/serial-run.js';
import { WakeList } from '../../../src/util/wake-list.js';

describe('util: WakeList, SerialRun, repeatEvery', () => {
  it('WakeList: wakeAll ends every wait; an aborted wait rejects and is not woken', async () => {
    const list = new WakeList();
    const abort = new AbortController();
    const woken: string[] = [];
    const a = list.wait(new AbortController().signal).then(() => woken.push('a'));
    const b = list.wait(abort.signal).then(
      () => woken.push('b'),
      (err: Error) => woken.push(`b aborted: ${err.message}`),
    );
    abort.abort(new Error('stop'));
    await b;
    list.wakeAll();
    await a;
    assert.deepEqual(woken, ['b aborted: stop', 'a']);
    const late = new AbortController();
    late.abort(new Error('already'));
    await assert.rejects(list.wait(late.signal), /already/);
  });

  it('SerialRun: requests while running make exactly one more run; none while disabled', async () => {
    let runs = 0;
    let active = 0;
    let enabled = true;
    let release: () => void = () => undefined;
    const job = new SerialRun(
      async () => {
        runs++;
        active++;
        assert.equal(active, 1, 'never two at once');
        await new Promise<void>((resolve) => (release = resolve));
        active--;
      },
      () => enabled,
    );
    job.run();
    job.run();
    job.run();
    release();
    await new Promise((resolve) => setImmediate(resolve));
    release();
    await job.idle();
    assert.equal(runs, 2);
    enabled = false;
    job.run();
    await job.idle();
    assert.equal(runs, 2);
  });

  it('repeatEvery: at once or after one interval, then every interval, until aborted', async () => {
    const clock = new FakeClock();
    const abort = new AbortController();
    const t0 = clock.now();
    const at: number[] = [];
    const loop = repeatEvery(clock, 5_000, abort.signal, () => Promise.resolve(void at.push(clock.now() - t0)), true);
    await clock.advance(10_000);
    abort.abort();
    await loop;
    assert.deepEqual(at, [0, 5_000, 10_000]);
  });
});
