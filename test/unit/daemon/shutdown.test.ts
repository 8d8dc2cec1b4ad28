import assert from 'node:assert/strict';
import { ShutdownHooks } from '../../../src/daemon/shutdown.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { FakeClock } from '../../../src/util/clock.js';

describe('ShutdownHooks', () => {
  it('runs hooks last-added-first, once', async () => {
    const order: string[] = [];
    const hooks = new ShutdownHooks(new FakeClock());
    hooks.add('server', () => order.push('server'));
    hooks.add('runtime', () => {
      order.push('runtime');
      return Promise.resolve();
    });
    hooks.add('controller', () => order.push('controller'));
    const first = hooks.run(silentLogger, 1000);
    const second = hooks.run(silentLogger, 1000);
    assert.deepEqual(await first, { clean: true, failed: [] });
    assert.equal(await second, await first);
    assert.deepEqual(order, ['controller', 'runtime', 'server']);
    assert.throws(() => hooks.add('late', () => undefined), /shutdown has begun/);
  });

  it('keeps going after a failing hook and reports it', async () => {
    const order: string[] = [];
    const hooks = new ShutdownHooks(new FakeClock());
    hooks.add('a', () => order.push('a'));
    hooks.add('b', () => {
      throw new Error('boom');
    });
    assert.deepEqual(await hooks.run(silentLogger, 1000), { clean: false, failed: ['b'] });
    assert.deepEqual(order, ['a']);
  });

  it('gives up on a hook at the deadline and skips what is left', async () => {
    const clock = new FakeClock();
    const hooks = new ShutdownHooks(clock);
    const ran: string[] = [];
    hooks.add('never-reached', () => ran.push('never-reached'));
    hooks.add('stuck', () => new Promise(() => undefined));
    const outcome = hooks.run(silentLogger, 5000);
    await clock.advance(5000);
    assert.deepEqual(await outcome, { clean: false, failed: ['stuck', 'never-reached'] });
    assert.deepEqual(ran, []);
  });
});
