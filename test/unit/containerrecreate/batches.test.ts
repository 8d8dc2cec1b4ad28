import assert from 'node:assert/strict';
import type { WirePod } from '../../../src/api/wire.js';
import { containerPriority, planBatch } from '../../../src/daemon/containermeta/batches.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');

describe('env-from-metadata restart batches', () => {
  it('launch priority: barrier key, else KRUISE_CONTAINER_PRIORITY, else Ordered annotation order', () => {
    const pod: WirePod = {
      metadata: { annotations: { 'apps.kruise.io/container-launch-priority': 'Ordered' } },
      spec: {
        containers: [
          {
            name: 'a',
            env: [
              { name: 'KRUISE_CONTAINER_BARRIER', valueFrom: { configMapKeyRef: { name: 'x-barrier', key: 'p_5' } } },
            ],
          },
          { name: 'b', env: [{ name: 'KRUISE_CONTAINER_PRIORITY', value: ' -2 ' }] },
          { name: 'c' },
        ],
      },
    };
    const [a, b, c] = pod.spec!.containers;
    assert.equal(containerPriority(pod, a!), 5);
    assert.equal(containerPriority(pod, b!), -2);
    assert.equal(containerPriority(pod, c!), -2, 'third in Ordered order');
    delete pod.metadata!.annotations;
    assert.equal(containerPriority(pod, c!), undefined);
    assert.equal(
      containerPriority(pod, { name: 'd', env: [{ name: 'KRUISE_CONTAINER_PRIORITY', value: 'high' }] }),
      undefined,
    );
  });

  const always = (): boolean => true;

  it('highest priority first, containers without a priority with it; a new batch is recorded', () => {
    const plan = planBatch({
      stale: [{ name: 'low', priority: 1 }, { name: 'free' }, { name: 'high', priority: 9 }],
      updateStartedAtMs: T0,
      exists: always,
      isDone: always,
    });
    assert.deepEqual(plan, { kind: 'restart', containers: ['free', 'high'], record: true });
  });

  it('the next batch waits until every container of the last batch of this update is done', () => {
    const lastBatch = { timestamp: '2026-01-01T00:00:05Z', containers: ['high'] };
    const input = { stale: [{ name: 'low', priority: 1 }], lastBatch, updateStartedAtMs: T0, exists: always };
    assert.deepEqual(planBatch({ ...input, isDone: () => false }), { kind: 'wait', waitingFor: ['high'] });
    assert.deepEqual(planBatch({ ...input, isDone: always }), { kind: 'restart', containers: ['low'], record: true });
  });

  it('a recorded batch not fully restarted is resumed without a second record', () => {
    const lastBatch = { timestamp: '2026-01-01T00:00:05Z', containers: ['a', 'b'] };
    const plan = planBatch({
      stale: [{ name: 'b' }],
      lastBatch,
      updateStartedAtMs: T0,
      exists: always,
      isDone: () => false,
    });
    assert.deepEqual(plan, { kind: 'restart', containers: ['b'], record: false });
  });

  it('batches of an earlier update neither block nor get resumed', () => {
    const lastBatch = { timestamp: '2025-12-31T23:00:00Z', containers: ['a'] };
    const plan = planBatch({
      stale: [{ name: 'a' }],
      lastBatch,
      updateStartedAtMs: T0,
      exists: always,
      isDone: () => false,
    });
    assert.deepEqual(plan, { kind: 'restart', containers: ['a'], record: true });
    assert.deepEqual(planBatch({ stale: [], updateStartedAtMs: T0, exists: always, isDone: always }), { kind: 'none' });
  });
});
