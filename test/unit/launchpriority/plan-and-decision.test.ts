import assert from 'node:assert/strict';
import { barrierPlan, presentKeys, priorityOfKey } from '../../../src/daemon/launchpriority/barrier-plan.js';
import { decide, readinessOf, type ContainerReadiness } from '../../../src/daemon/launchpriority/launch-decision.js';
import { barrierPod } from './fakes.js';

describe('launch priority plan and decision (pure)', () => {
  it('parses barrier keys as Go Atoi would, inside the documented range', () => {
    assert.equal(priorityOfKey('p_0'), 0);
    assert.equal(priorityOfKey('p_-5'), -5);
    assert.equal(priorityOfKey('p_+7'), 7);
    assert.equal(priorityOfKey('p_2147483647'), 2147483647);
    assert.equal(priorityOfKey('p_-2147483647'), -2147483647);
    for (const bad of ['p_-2147483648', 'p_2147483648', 'p_', 'p', '', 'x_1', 'p_1.5', 'p_ 1', 'p_1e3', 'p_0x10']) {
      assert.equal(priorityOfKey(bad), undefined, bad);
    }
  });

  it('groups containers into levels, highest first, with every key of a level', () => {
    const plan = barrierPlan(
      barrierPod('p', [
        { name: 'a', key: 'p_3' },
        { name: 'b', key: 'p_5' },
        { name: 'c', key: 'p_0' },
        { name: 'd' },
        { name: 'e', key: 'p_-1' },
        { name: 'f', key: 'p_3' },
        { name: 'g', key: 'p_+3' },
      ]),
    );
    assert.equal(plan.configMapName, 'p-barrier');
    assert.deepEqual(
      plan.levels.map((l) => [l.priority, l.keys, l.containers]),
      [
        [5, ['p_5'], ['b']],
        [3, ['p_3', 'p_+3'], ['a', 'f', 'g']],
        [0, ['p_0'], ['c']],
        [-1, ['p_-1'], ['e']],
      ],
    );
    assert.deepEqual(plan.problems, []);
  });

  it('survives any shape of spec and data', () => {
    for (const spec of [
      undefined,
      {},
      { containers: 'x' },
      { containers: [null, 1, 'x', { env: 'y' }, { env: [null, 3] }] },
    ]) {
      assert.deepEqual(barrierPlan({ metadata: { name: 'x' }, spec }).levels, []);
    }
    assert.deepEqual([...presentKeys({ a: 'true', b: 3, c: null })], ['a']);
    assert.deepEqual([...presentKeys('nope')], []);
    assert.deepEqual([...presentKeys(undefined)], []);
  });

  // OpenKruise's controller test: a=3, b=5, c=0, d=none, e=-1, f=3
  const plan = barrierPlan(
    barrierPod('ok', [
      { name: 'a', key: 'p_3' },
      { name: 'b', key: 'p_5' },
      { name: 'c', key: 'p_0' },
      { name: 'd' },
      { name: 'e', key: 'p_-1' },
      { name: 'f', key: 'p_3' },
    ]),
  );
  const readyOf =
    (...ready: string[]) =>
    (name: string): ContainerReadiness =>
      ready.includes(name) ? { ready: true, source: 'status', readySinceMs: 1000 } : { ready: false, source: 'none' };

  it('follows the worked examples of OpenKruise', () => {
    let d = decide(plan, new Set(), readyOf());
    assert.equal(d.release?.priority, 5);
    assert.equal(d.higherReadySinceMs, undefined);
    d = decide(plan, new Set(['p_5', 'p_3']), readyOf('b', 'f'));
    assert.equal(d.release, undefined);
    assert.deepEqual(d.waitingFor, ['a']);
    d = decide(plan, new Set(['p_5', 'p_3']), readyOf('a', 'b', 'f'));
    assert.equal(d.release?.priority, 0);
    assert.equal(d.complete, false);
    assert.equal(d.higherReadySinceMs, 1000);
    d = decide(plan, new Set(['p_5', 'p_3', 'p_0']), readyOf('a', 'b', 'c', 'f'));
    assert.equal(d.release?.priority, -1);
    assert.equal(d.complete, true);
    d = decide(plan, new Set(['p_5', 'p_3', 'p_0', 'p_-1']), readyOf());
    assert.equal(d.release, undefined);
    assert.equal(d.complete, true);
  });

  it('fills a gap left by a user-made ConfigMap in order', () => {
    const d = decide(plan, new Set(['p_5', 'p_0']), readyOf('b'));
    assert.equal(d.release?.priority, 3);
    assert.equal(d.complete, false);
  });

  it('reads readiness from the runtime for unprobed containers and from the status otherwise', () => {
    const runtime = new Map([
      ['a', { id: '1', state: 'CONTAINER_RUNNING' as const, runningSinceMs: 5 }],
      ['b', { id: '2', state: 'CONTAINER_RUNNING' as const, runningSinceMs: 6 }],
      ['c', { id: '3', state: 'CONTAINER_EXITED' as const }],
    ]);
    const inputs = {
      probed: new Set(['b']),
      status: new Map([
        ['b', { name: 'b', ready: true }],
        ['c', { name: 'c', ready: true }],
        ['d', { name: 'd', ready: true }],
      ]),
      runtime,
      statusReadySince: new Map([['b', 9]]),
    };
    assert.deepEqual(readinessOf('a', inputs), { ready: true, source: 'runtime', readySinceMs: 5 });
    assert.deepEqual(readinessOf('b', inputs), { ready: true, source: 'status', readySinceMs: 9 });
    assert.deepEqual(readinessOf('c', inputs), { ready: false, source: 'runtime' });
    assert.equal(readinessOf('d', inputs).ready, true);
    assert.equal(readinessOf('e', inputs).ready, false);
  });
});
