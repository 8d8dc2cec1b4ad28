import assert from 'node:assert/strict';
import { Counter, Histogram, Registry } from 'prom-client';
import { ControllerLoop, type ReconcileMetrics } from '../../../src/kube/controller-loop.js';
import type { ReconcileResult } from '../../../src/kube/workqueue/workers.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { FakeClock } from '../../../src/util/clock.js';

function reconcileMetrics(): ReconcileMetrics & { registry: Registry } {
  const registry = new Registry();
  return {
    registry,
    reconciles: new Counter({
      name: 'test_reconciles_total',
      help: 'h',
      labelNames: ['controller', 'result'],
      registers: [registry],
    }),
    reconcileSeconds: new Histogram({
      name: 'test_reconcile_seconds',
      help: 'h',
      labelNames: ['controller'],
      registers: [registry],
    }),
  };
}

async function counted(metrics: ReconcileMetrics, result: string): Promise<number> {
  const values = (await metrics.reconciles.get()).values;
  return values.find((v) => v.labels.result === result)?.value ?? 0;
}

describe('ControllerLoop', () => {
  it('reconciles each added key, later ones after addAfter, and counts results when given metrics', async () => {
    const clock = new FakeClock(0);
    const metrics = reconcileMetrics();
    const seen: string[] = [];
    let failOnce = true;
    const loop = new ControllerLoop(
      'test',
      {
        workers: 2,
        clock,
        logger: silentLogger,
        metrics,
      },
      (key): ReconcileResult | void => {
        seen.push(key);
        if (key === 'boom' && failOnce) {
          failOnce = false;
          throw new Error('boom');
        }
        if (key === 'again' && seen.filter((k) => k === 'again').length === 1) return { requeueAfter: 1000 };
      },
    );
    loop.add('a');
    loop.start();
    loop.start(); // once only
    loop.add('a');
    loop.add('boom');
    loop.add('again');
    loop.addAfter('later', 500);
    await clock.advance(0);
    assert.deepEqual(seen.slice(0, 3).sort(), ['a', 'again', 'boom']);
    assert.ok(!seen.includes('later'));
    await clock.advance(500);
    assert.ok(seen.includes('later'));
    await clock.advance(500);
    assert.equal(seen.filter((k) => k === 'again').length, 2, 'requeued after 1 s');
    assert.equal(seen.filter((k) => k === 'boom').length, 2, 'an error retries the key with backoff');
    assert.equal(await counted(metrics, 'error'), 1);
    assert.equal(await counted(metrics, 'requeue'), 1);
    assert.equal(await counted(metrics, 'ok'), seen.length - 2);
    await loop.stop();
    loop.add('x');
    await clock.advance(10);
    assert.ok(!seen.includes('x'), 'nothing after stop');
  });

  it('runs without reconcile metrics (the agent)', async () => {
    const clock = new FakeClock(0);
    const seen: string[] = [];
    const loop = new ControllerLoop(
      'agent',
      {
        workers: 1,
        clock,
        logger: silentLogger,
      },
      (key) => {
        seen.push(key);
      },
    );
    loop.start();
    loop.add('k');
    await clock.advance(0);
    assert.deepEqual(seen, ['k']);
    await loop.stop();
  });
});
