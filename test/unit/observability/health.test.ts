import assert from 'node:assert/strict';
import { combineReports, HealthRegistry, renderReport } from '../../../src/observability/health.js';
import { FakeClock } from '../../../src/util/clock.js';

describe('HealthRegistry', () => {
  it('is healthy with no checks', async () => {
    assert.deepEqual(await new HealthRegistry().run(), { ok: true, checks: [] });
  });

  it('reports each check by name, failing with the error message', async () => {
    const health = new HealthRegistry();
    health.add('runtime', () => undefined);
    health.add('informerSynced', () => Promise.reject(new Error('not synced')));
    const report = await health.run();
    assert.equal(report.ok, false);
    assert.deepEqual(report.checks, [
      { name: 'runtime', ok: true },
      { name: 'informerSynced', ok: false, reason: 'not synced' },
    ]);
  });

  it('fails a check that does not answer within the timeout', async () => {
    const clock = new FakeClock();
    const health = new HealthRegistry({ clock, timeoutMs: 500 });
    health.add('stuck', () => new Promise<void>(() => undefined));
    health.add('quick', () => undefined);
    const running = health.run();
    await clock.advance(500);
    const report = await running;
    assert.deepEqual(report.checks, [
      { name: 'stuck', ok: false, reason: 'no answer within 500 ms' },
      { name: 'quick', ok: true },
    ]);
    assert.equal(clock.pendingTimers(), 0, 'timers of finished checks are cancelled');
  });

  it('keeps a reason on one line', async () => {
    const health = new HealthRegistry();
    health.add('multi', () => {
      throw new Error('first\n  second');
    });
    assert.equal((await health.run()).checks[0]!.reason, 'first; second');
  });

  it('removes a check with the function add() returned and refuses duplicates and bad names', async () => {
    const health = new HealthRegistry();
    const remove = health.add('a', () => {
      throw new Error('down');
    });
    assert.throws(() => health.add('a', () => undefined), /already registered/);
    assert.throws(() => health.add('has space', () => undefined), /must match/);
    remove();
    assert.deepEqual(health.names(), []);
    assert.equal((await health.run()).ok, true);
  });
});

describe('health report rendering', () => {
  const failing = {
    ok: false,
    checks: [
      { name: 'a', ok: true },
      { name: 'b', ok: false, reason: 'why' },
    ],
  };

  it('says ok when healthy, lists checks when verbose or failing', () => {
    assert.equal(renderReport({ ok: true, checks: [{ name: 'a', ok: true }] }, false), 'ok\n');
    assert.equal(renderReport({ ok: true, checks: [{ name: 'a', ok: true }] }, true), '[+]a ok\nhealthy\n');
    assert.equal(renderReport(failing, false), '[+]a ok\n[-]b failed: why\nunhealthy\n');
  });

  it('combines reports: one failure makes the whole unhealthy', () => {
    const combined = combineReports({ ok: true, checks: [{ name: 'x', ok: true }] }, failing);
    assert.equal(combined.ok, false);
    assert.deepEqual(
      combined.checks.map((c) => c.name),
      ['x', 'a', 'b'],
    );
  });
});
