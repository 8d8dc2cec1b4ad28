import assert from 'node:assert/strict';
import type { ContainerRecreateRequest } from '../../../src/api/containerrecreaterequest.js';
import {
  currentStates,
  nextStep,
  NOT_FOUND_ON_NODE,
  phaseWeight,
  type ReportedContainer,
} from '../../../src/daemon/containerrecreate/recreate-states.js';
import type { RuntimeContainer } from '../../../src/daemon/podruntime/pod-containers.js';

const NOW = 1_700_000_100_000;

function rc(name: string, id: string, extra: Partial<RuntimeContainer> = {}): RuntimeContainer {
  return {
    id,
    name,
    state: 'running',
    createdAtNs: 1n,
    startedAtMs: NOW - 60_000,
    restartCount: 0,
    plainHash: 0,
    labels: {},
    annotations: {},
    ...extra,
  };
}

function crr(
  names: string[],
  strategy: ContainerRecreateRequest['spec']['strategy'] = {},
  states?: NonNullable<ContainerRecreateRequest['status']>['containerRecreateStates'],
): ContainerRecreateRequest {
  return {
    metadata: { name: 'r', namespace: 'ns' },
    spec: {
      podName: 'p',
      containers: names.map((n) => ({
        name: n,
        statusContext: { containerID: `containerd://old-${n}`, restartCount: 0 },
      })),
      strategy,
    },
    status: { phase: 'Recreating', containerRecreateStates: states },
  };
}

const runtimeOf = (...cs: RuntimeContainer[]): Map<string, RuntimeContainer> => new Map(cs.map((c) => [c.name, c]));
const reportedOf = (entries: Record<string, ReportedContainer>): Map<string, ReportedContainer> =>
  new Map(Object.entries(entries));

describe('CRR container states', () => {
  it('a stopped container kubelet holds waiting says why in its state; an ordinary start says nothing', () => {
    const exited = runtimeOf(rc('a', 'old-a', { state: 'exited' }));
    const waiting = (reason: string, message?: string): Map<string, ReportedContainer> =>
      reportedOf({ a: { id: 'old-a', ready: false, running: false, waiting: { reason, message } } });
    const backOff = currentStates({
      crr: crr(['a'], {}, [{ name: 'a', phase: 'Recreating', isKilled: true }]),
      runtime: exited,
      reported: waiting('CrashLoopBackOff', 'back-off 10s restarting failed container=a pod=p_ns(u)'),
      nowMs: NOW,
    });
    assert.deepEqual(backOff, [
      {
        name: 'a',
        phase: 'Recreating',
        isKilled: true,
        message:
          'kubelet has not started the container again: CrashLoopBackOff (back-off 10s restarting failed container=a pod=p_ns(u))',
      },
    ]);
    const creating = currentStates({
      crr: crr(['a'], {}, [{ name: 'a', phase: 'Recreating', isKilled: true }]),
      runtime: exited,
      reported: waiting('ContainerCreating'),
      nowMs: NOW,
    });
    assert.deepEqual(creating, [{ name: 'a', phase: 'Recreating', isKilled: true }]);
  });

  it('a container still the one of statusContext is Pending; its kill is the next step', () => {
    const input = { crr: crr(['a']), runtime: runtimeOf(rc('a', 'old-a')), reported: new Map(), nowMs: NOW };
    assert.deepEqual(currentStates(input), [{ name: 'a', phase: 'Pending' }]);
    const step = nextStep(input);
    assert.equal(step.kind, 'kill');
    assert.deepEqual(step.kind === 'kill' && step.states, [{ name: 'a', phase: 'Recreating', isKilled: true }]);
  });

  it('a missing container is Pending with "not found container on Node" and nothing is killed', () => {
    const step = nextStep({ crr: crr(['a']), runtime: new Map(), reported: new Map(), nowMs: NOW });
    assert.equal(step.kind, 'wait');
    assert.deepEqual(step.states, [{ name: 'a', phase: 'Pending', message: NOT_FOUND_ON_NODE }]);
  });

  it('a stopped instance that kubelet itself restarted less than 10 minutes ago is waiting for its back-off, and says so', () => {
    const stopped = (restartCount: number, restartedAgoMs: number): RuntimeContainer =>
      rc('a', 'old-a', { state: 'exited', restartCount, createdAtNs: BigInt(NOW - restartedAgoMs) * 1_000_000n });
    const statesOf = (c: RuntimeContainer) =>
      currentStates({
        crr: crr(['a'], {}, [{ name: 'a', phase: 'Recreating', isKilled: true }]),
        runtime: runtimeOf(c),
        reported: reportedOf({ a: { id: 'old-a', ready: false, running: false } }), // kubelet: terminated, no reason
        nowMs: NOW,
      });
    assert.deepEqual(statesOf(stopped(1, 2_000)), [
      {
        name: 'a',
        phase: 'Recreating',
        isKilled: true,
        message:
          "waiting for kubelet's crash-loop back-off: kubelet restarted this container 2 s before (restart 1), so it " +
          'starts it again only 10 s or more after the stop (doubling with each restart within 10 minutes, up to 5 minutes)',
      },
    ]);
    // the first restart of the container, or one kubelet made over 10 minutes ago: no back-off
    assert.deepEqual(statesOf(stopped(0, 2_000)), [{ name: 'a', phase: 'Recreating', isKilled: true }]);
    assert.deepEqual(statesOf(stopped(3, 10 * 60_000)), [{ name: 'a', phase: 'Recreating', isKilled: true }]);
  });

  it('an exited container is Recreating and keeps isKilled', () => {
    const states = currentStates({
      crr: crr(['a'], {}, [{ name: 'a', phase: 'Recreating', isKilled: true }]),
      runtime: runtimeOf(rc('a', 'old-a', { state: 'exited' })),
      reported: new Map(),
      nowMs: NOW,
    });
    assert.deepEqual(states, [{ name: 'a', phase: 'Recreating', isKilled: true }]);
  });

  it('a new instance succeeds only once kubelet reports it running and ready', () => {
    const base = {
      crr: crr(['a'], {}, [{ name: 'a', phase: 'Recreating', isKilled: true }]),
      runtime: runtimeOf(rc('a', 'new-a', { restartCount: 1 })),
      nowMs: NOW,
    };
    assert.equal(
      currentStates({ ...base, reported: reportedOf({ a: { id: 'old-a', ready: true, running: true } }) })[0]?.phase,
      'Recreating',
    );
    assert.equal(
      currentStates({ ...base, reported: reportedOf({ a: { id: 'new-a', ready: false, running: true } }) })[0]?.phase,
      'Recreating',
    );
    assert.deepEqual(
      currentStates({ ...base, reported: reportedOf({ a: { id: 'new-a', ready: true, running: true } }) }),
      [{ name: 'a', phase: 'Succeeded', isKilled: true }],
    );
  });

  it('minStartedSeconds holds Succeeded back until the new instance has run long enough, and asks for a recheck', () => {
    const input = {
      crr: crr(['a'], { minStartedSeconds: 10 }, [{ name: 'a', phase: 'Recreating', isKilled: true }]),
      runtime: runtimeOf(rc('a', 'new-a', { startedAtMs: NOW - 9000 })),
      reported: reportedOf({ a: { id: 'new-a', ready: true, running: true } }),
      nowMs: NOW,
    };
    const step = nextStep(input);
    assert.equal(step.kind, 'wait');
    assert.equal(step.kind === 'wait' && step.recheckMs, 1001);
    assert.equal(nextStep({ ...input, nowMs: NOW + 1001 }).kind, 'complete');
  });

  it('orderedRecreate: the second container waits until the first succeeded', () => {
    const states = [{ name: 'a', phase: 'Recreating' as const, isKilled: true }];
    const running = runtimeOf(rc('a', 'new-a'), rc('b', 'old-b'));
    const waiting = nextStep({
      crr: crr(['a', 'b'], { orderedRecreate: true }, states),
      runtime: running,
      reported: reportedOf({ a: { id: 'new-a', ready: false, running: true } }),
      nowMs: NOW,
    });
    assert.equal(waiting.kind, 'wait');
    const unordered = nextStep({ crr: crr(['a', 'b'], {}, states), runtime: running, reported: new Map(), nowMs: NOW });
    assert.equal(unordered.kind === 'kill' && unordered.container, 'b');
    const ready = nextStep({
      crr: crr(['a', 'b'], { orderedRecreate: true }, states),
      runtime: running,
      reported: reportedOf({ a: { id: 'new-a', ready: true, running: true } }),
      nowMs: NOW,
    });
    assert.equal(ready.kind === 'kill' && ready.container, 'b');
  });

  it('forceRecreate kills a container that already looks restarted, once', () => {
    const already = runtimeOf(rc('a', 'other-a', { restartCount: 3 }));
    const first = nextStep({
      crr: crr(['a'], { forceRecreate: true }),
      runtime: already,
      reported: new Map(),
      nowMs: NOW,
    });
    assert.equal(first.kind, 'kill');
    const plain = nextStep({ crr: crr(['a']), runtime: already, reported: new Map(), nowMs: NOW });
    assert.equal(plain.kind, 'wait');
    const afterKill = nextStep({
      crr: crr(['a'], { forceRecreate: true }, [{ name: 'a', phase: 'Recreating', isKilled: true }]),
      runtime: runtimeOf(rc('a', 'newer-a', { restartCount: 4 })),
      reported: new Map(),
      nowMs: NOW,
    });
    assert.equal(afterKill.kind, 'wait');
  });

  it('an agent restarted between recording the intent and the stop stops the container (once) after all', () => {
    const step = nextStep({
      crr: crr(['a'], {}, [{ name: 'a', phase: 'Recreating', isKilled: true }]),
      runtime: runtimeOf(rc('a', 'old-a')),
      reported: new Map(),
      nowMs: NOW,
    });
    assert.equal(step.kind, 'kill');
  });

  it('failurePolicy Fail completes on the first failed container; Ignore goes on', () => {
    const failed = [{ name: 'a', phase: 'Failed' as const, message: 'kill container error: x' }];
    const running = runtimeOf(rc('a', 'old-a'), rc('b', 'old-b'));
    assert.equal(
      nextStep({ crr: crr(['a', 'b'], {}, failed), runtime: running, reported: new Map(), nowMs: NOW }).kind,
      'complete',
    );
    const ignore = nextStep({
      crr: crr(['a', 'b'], { failurePolicy: 'Ignore' }, failed),
      runtime: running,
      reported: new Map(),
      nowMs: NOW,
    });
    assert.equal(ignore.kind === 'kill' && ignore.container, 'b');
  });

  it('CRRs of a pod are taken Completed, Recreating, Pending, new', () => {
    assert.deepEqual(
      ['', 'Pending', 'Recreating', 'Completed'].sort((a, b) => phaseWeight(a) - phaseWeight(b)),
      ['Completed', 'Recreating', 'Pending', ''],
    );
  });
});
