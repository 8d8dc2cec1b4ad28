import assert from 'node:assert/strict';
import {
  CONTAINER_NAME_LABEL,
  POD_UID_LABEL,
  RuntimePoller,
  type ContainerSource,
  type ListedContainer,
} from '../../../src/daemon/launchpriority/runtime-poller.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { FakeClock } from '../../../src/util/clock.js';

function container(uid: string, name: string, id: string, state: string, attempt = 0): ListedContainer {
  return {
    id,
    state,
    attempt,
    createdAtNs: String(attempt + 1),
    labels: { [POD_UID_LABEL]: uid, [CONTAINER_NAME_LABEL]: name },
  };
}

class ScriptedSource implements ContainerSource {
  containers: ListedContainer[] = [];
  calls: (Record<string, string> | undefined)[] = [];
  failing = false;
  statusCalls = 0;

  list(labelSelector?: Record<string, string>): Promise<ListedContainer[]> {
    this.calls.push(labelSelector);
    if (this.failing) return Promise.reject(new Error('runtime down'));
    return Promise.resolve(
      this.containers.filter(
        (c) => !labelSelector || Object.entries(labelSelector).every(([k, v]) => c.labels[k] === v),
      ),
    );
  }

  startedAtMs(id: string): Promise<number | undefined> {
    this.statusCalls++;
    return Promise.resolve(Number(id.replace(/\D/g, '')) || undefined);
  }
}

describe('launch priority runtime poller', () => {
  let clock: FakeClock;
  let source: ScriptedSource;
  let changes: string[];
  let poller: RuntimePoller;

  beforeEach(() => {
    clock = new FakeClock();
    source = new ScriptedSource();
    changes = [];
    poller = new RuntimePoller({
      source: () => Promise.resolve(source),
      clock,
      logger: silentLogger,
      intervalMs: 50,
      perPodCallsUpTo: 2,
      onChange: (uid) => changes.push(uid),
    });
  });

  afterEach(() => poller.stop());

  it('polls only while pods are watched: one filtered call per pod, one unfiltered call above the limit', async () => {
    await clock.advance(500);
    assert.equal(source.calls.length, 0);
    poller.watch('u1');
    poller.watch('u2');
    await clock.advance(0);
    assert.deepEqual(source.calls, [{ [POD_UID_LABEL]: 'u1' }, { [POD_UID_LABEL]: 'u2' }]);
    poller.watch('u3');
    source.calls = [];
    await clock.advance(50);
    assert.deepEqual(source.calls, [undefined]);
    poller.unwatch('u1');
    poller.unwatch('u2');
    poller.unwatch('u3');
    await clock.advance(50);
    source.calls = [];
    await clock.advance(500);
    assert.deepEqual(source.calls, []);
    assert.equal(clock.pendingTimers(), 0);
  });

  it('reports a pod when its containers change, keeping the latest attempt of each, and fetches start times once', async () => {
    source.containers = [
      container('u1', 'a', 'c100', 'CONTAINER_EXITED', 0),
      container('u1', 'a', 'c200', 'CONTAINER_RUNNING', 1),
    ];
    poller.watch('u1');
    await clock.advance(0);
    assert.deepEqual(changes, ['u1']);
    assert.deepEqual(poller.view('u1')?.get('a'), { id: 'c200', state: 'CONTAINER_RUNNING', runningSinceMs: 200 });
    await clock.advance(200);
    assert.deepEqual(changes, ['u1'], 'no change, no report');
    assert.equal(source.statusCalls, 1);
    source.containers.push(container('u1', 'b', 'c300', 'CONTAINER_CREATED'));
    await clock.advance(50);
    assert.deepEqual(changes, ['u1', 'u1']);
    assert.equal(poller.view('u1')?.get('b')?.state, 'CONTAINER_CREATED');
  });

  it('backs off while the runtime fails and recovers', async () => {
    source.failing = true;
    poller.watch('u1');
    await clock.advance(0);
    const afterFirst = source.calls.length;
    await clock.advance(150);
    assert.equal(source.calls.length, afterFirst + 1, 'second try after 100 ms, not 50');
    source.failing = false;
    source.containers = [container('u1', 'a', 'c1', 'CONTAINER_RUNNING')];
    await clock.advance(1000);
    assert.equal(poller.view('u1')?.get('a')?.state, 'CONTAINER_RUNNING');
  });
});
