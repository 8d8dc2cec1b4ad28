import assert from 'node:assert/strict';
import { createRegistry } from '../../../src/observability/metrics.js';
import {
  BARRIER_RELEASED_ANNOTATION,
  EVENT_REASON_BARRIER_INVALID,
  EVENT_REASON_BARRIER_OF_EARLIER_POD,
  EVENT_REASON_BARRIER_RECREATED,
  RETOUCH_AFTER_MS,
} from '../../../src/daemon/launchpriority/controller.js';
import { launchPriorityMetrics } from '../../../src/daemon/launchpriority/metrics.js';
import { capturingLogger } from '../../support/capturing-logger.js';
import { barrierPod, harness, setContainerStatus, type Harness } from './fakes.js';

const COMPLETED = 'apps.kruise.io/container-launch-priority-completed';
const NS = 'ns';

describe('launch priority controller', () => {
  let h: Harness;

  afterEach(async () => {
    await h?.stop();
  });

  function annotations(name: string): Record<string, string> {
    return h.pods.get(`${NS}/${name}`)?.metadata?.annotations ?? {};
  }

  it('releases 10, 0, -5 one level at a time as the runtime shows each level running, then marks it completed', async () => {
    h = harness();
    const pod = h.pods.set(
      barrierPod('web', [
        { name: 'app', key: 'p_-5' },
        { name: 'proxy', key: 'p_10' },
        { name: 'conf', key: 'p_0' },
      ]),
    );
    const uid = pod.metadata!.uid!;
    await h.run();
    assert.deepEqual(h.api.keysOf(NS, 'web-barrier'), ['p_10']);
    const cm = h.api.configMaps.get(`${NS}/web-barrier`)!;
    assert.deepEqual(cm.metadata?.ownerReferences, [{ apiVersion: 'v1', kind: 'Pod', name: 'web', uid }]);
    assert.match(annotations('web')[BARRIER_RELEASED_ANNOTATION] ?? '', /^p_10@\d+$/);
    assert.equal(annotations('web')[COMPLETED], undefined);

    h.runtime.set(uid, 'proxy', 'CONTAINER_CREATED');
    await h.run();
    assert.deepEqual(h.api.keysOf(NS, 'web-barrier'), ['p_10'], 'created is not running');
    h.runtime.set(uid, 'proxy', 'CONTAINER_RUNNING');
    await h.run();
    assert.deepEqual(h.api.keysOf(NS, 'web-barrier'), ['p_0', 'p_10']);
    assert.match(annotations('web')[BARRIER_RELEASED_ANNOTATION] ?? '', /^p_0@/);

    h.runtime.set(uid, 'conf', 'CONTAINER_RUNNING');
    await h.run();
    assert.deepEqual(h.api.keysOf(NS, 'web-barrier'), ['p_-5', 'p_0', 'p_10']);
    assert.equal(annotations('web')[COMPLETED], 'true');
    assert.match(annotations('web')[BARRIER_RELEASED_ANNOTATION] ?? '', /^p_-5@/);
    // one create, then one key per level; one pod patch per level
    assert.equal(h.api.count('create'), 1);
    assert.equal(h.api.count('addKeys'), 2);
    assert.equal(h.api.count('annotatePod'), 3);

    h.runtime.set(uid, 'app', 'CONTAINER_RUNNING');
    await h.run(RETOUCH_AFTER_MS + 500);
    assert.equal(h.controller.trackedPods(), 0, 'a completed pod is forgotten');
    const lists = h.runtime.lists;
    await h.run(1000);
    assert.equal(h.runtime.lists, lists, 'no runtime polling once nothing waits');
    assert.equal(h.clock.pendingTimers(), 0);
  });

  it('releases equal priorities together and waits for every container of a level', async () => {
    h = harness();
    const pod = h.pods.set(
      barrierPod('eq', [
        { name: 'a', key: 'p_5' },
        { name: 'b', key: 'p_5' },
        { name: 'c', key: 'p_1' },
        { name: 'd', key: 'p_1' },
      ]),
    );
    const uid = pod.metadata!.uid!;
    await h.run();
    assert.deepEqual(h.api.keysOf(NS, 'eq-barrier'), ['p_5']);
    h.runtime.set(uid, 'a', 'CONTAINER_RUNNING');
    await h.run();
    assert.deepEqual(h.api.keysOf(NS, 'eq-barrier'), ['p_5'], 'b is not running yet');
    h.runtime.set(uid, 'b', 'CONTAINER_RUNNING');
    await h.run();
    assert.deepEqual(h.api.keysOf(NS, 'eq-barrier'), ['p_1', 'p_5']);
    assert.equal(annotations('eq')[COMPLETED], 'true');
  });

  it('takes readiness of a probed container from the pod status only', async () => {
    h = harness();
    const pod = h.pods.set(
      barrierPod('probed', [
        { name: 'db', key: 'p_1', probed: true },
        { name: 'app', key: 'p_0' },
      ]),
    );
    const uid = pod.metadata!.uid!;
    await h.run();
    h.runtime.set(uid, 'db', 'CONTAINER_RUNNING');
    await h.run();
    assert.deepEqual(h.api.keysOf(NS, 'probed-barrier'), ['p_1'], 'running is not ready for a probed container');
    setContainerStatus(h.pods, `${NS}/probed`, 'db', { ready: true });
    await h.run();
    assert.deepEqual(h.api.keysOf(NS, 'probed-barrier'), ['p_0', 'p_1']);
  });

  it('waits for the pod status of a container with a postStart hook (kubelet reports it ready after the hook)', async () => {
    h = harness();
    const pod = h.pods.set(
      barrierPod('hook', [
        { name: 'proxy', key: 'p_1', postStart: true },
        { name: 'app', key: 'p_0' },
      ]),
    );
    await h.run();
    h.runtime.set(pod.metadata!.uid!, 'proxy', 'CONTAINER_RUNNING');
    await h.run();
    assert.deepEqual(h.api.keysOf(NS, 'hook-barrier'), ['p_1']);
    setContainerStatus(h.pods, `${NS}/hook`, 'proxy', { ready: true });
    await h.run();
    assert.deepEqual(h.api.keysOf(NS, 'hook-barrier'), ['p_0', 'p_1']);
  });

  it('takes readiness from the pod status when the runtime has not been seen (status tells first)', async () => {
    h = harness();
    h.pods.set(
      barrierPod('st', [
        { name: 'a', key: 'p_1' },
        { name: 'b', key: 'p_0' },
      ]),
    );
    await h.run();
    setContainerStatus(h.pods, `${NS}/st`, 'a', { ready: true });
    await h.run(20);
    assert.deepEqual(h.api.keysOf(NS, 'st-barrier'), ['p_0', 'p_1']);
  });

  it('does not release while a higher container restarted, even if the status still says ready', async () => {
    h = harness();
    const pod = h.pods.set(
      barrierPod('rs', [
        { name: 'a', key: 'p_1', probed: true },
        { name: 'b', key: 'p_0' },
      ]),
    );
    const uid = pod.metadata!.uid!;
    await h.run();
    h.runtime.set(uid, 'a', 'CONTAINER_EXITED');
    await h.run();
    setContainerStatus(h.pods, `${NS}/rs`, 'a', { ready: true }); // stale: the status lags the runtime
    await h.run();
    assert.deepEqual(h.api.keysOf(NS, 'rs-barrier'), ['p_1']);
    h.runtime.set(uid, 'a', 'CONTAINER_RUNNING', { restart: true });
    await h.run();
    assert.deepEqual(h.api.keysOf(NS, 'rs-barrier'), ['p_0', 'p_1']);
  });

  it('recreates a barrier ConfigMap deleted mid-way with every key released so far', async () => {
    h = harness();
    const pod = h.pods.set(
      barrierPod('del', [
        { name: 'a', key: 'p_2' },
        { name: 'b', key: 'p_1' },
        { name: 'c', key: 'p_0' },
      ]),
    );
    const uid = pod.metadata!.uid!;
    await h.run();
    h.runtime.set(uid, 'a', 'CONTAINER_RUNNING');
    await h.run();
    assert.deepEqual(h.api.keysOf(NS, 'del-barrier'), ['p_1', 'p_2']);
    h.api.configMaps.delete(`${NS}/del-barrier`);
    h.runtime.set(uid, 'b', 'CONTAINER_RUNNING');
    await h.run();
    assert.deepEqual(h.api.keysOf(NS, 'del-barrier'), ['p_0', 'p_1', 'p_2']);
    const cm = h.api.configMaps.get(`${NS}/del-barrier`)!;
    assert.equal(cm.metadata?.ownerReferences?.[0]?.uid, uid);
    assert.ok(h.events.events.some((e) => e.reason === EVENT_REASON_BARRIER_RECREATED));
    assert.equal(annotations('del')[COMPLETED], 'true');
  });

  it('restores a deleted ConfigMap when a released container waits on it (restart after completion) and touches the pod', async () => {
    h = harness();
    const pod = h.pods.set(
      barrierPod('late', [
        { name: 'a', key: 'p_1' },
        { name: 'b', key: 'p_0' },
      ]),
    );
    const uid = pod.metadata!.uid!;
    await h.run();
    h.runtime.set(uid, 'a', 'CONTAINER_RUNNING');
    await h.run();
    h.runtime.set(uid, 'b', 'CONTAINER_RUNNING');
    await h.run(RETOUCH_AFTER_MS + 500);
    assert.equal(h.controller.trackedPods(), 0);
    h.api.configMaps.delete(`${NS}/late-barrier`);
    const touches = h.api.count('annotatePod');
    // kubelet restarts b and cannot find its key: the exited instance stays in the runtime
    h.runtime.set(uid, 'b', 'CONTAINER_EXITED');
    setContainerStatus(h.pods, `${NS}/late`, 'b', {
      ready: false,
      waiting: {
        reason: 'CreateContainerConfigError',
        message: `couldn't find key p_0 in ConfigMap ${NS}/late-barrier`,
      },
    });
    await h.run();
    assert.deepEqual(h.api.keysOf(NS, 'late-barrier'), ['p_0', 'p_1']);
    assert.equal(h.api.count('annotatePod'), touches + 1);
    assert.ok(h.events.events.some((e) => e.name === 'late' && e.reason === EVENT_REASON_BARRIER_RECREATED));
  });

  it('touches the pod again, with a new value, while kubelet reports a released container blocked on its key', async () => {
    h = harness();
    const pod = h.pods.set(
      barrierPod('slow', [
        { name: 'a', key: 'p_1' },
        { name: 'b', key: 'p_0' },
      ]),
    );
    const uid = pod.metadata!.uid!;
    await h.run();
    const first = annotations('slow')[BARRIER_RELEASED_ANNOTATION];
    assert.equal(h.api.count('annotatePod'), 1);
    // kubelet's sync ran before its ConfigMap cache had p_1
    const blocked = {
      reason: 'CreateContainerConfigError',
      message: `couldn't find key p_1 in ConfigMap ${NS}/slow-barrier`,
    };
    setContainerStatus(h.pods, `${NS}/slow`, 'a', { ready: false, waiting: blocked });
    setContainerStatus(h.pods, `${NS}/slow`, 'b', { ready: false, waiting: { ...blocked, message: 'p_0' } });
    await h.run(RETOUCH_AFTER_MS + 100);
    assert.equal(h.api.count('annotatePod'), 2, 'one re-touch after the delay');
    assert.notEqual(annotations('slow')[BARRIER_RELEASED_ANNOTATION], first);
    await h.run(RETOUCH_AFTER_MS + 100);
    assert.equal(h.api.count('annotatePod'), 2, 'the delay doubles');
    await h.run(RETOUCH_AFTER_MS * 2);
    assert.equal(h.api.count('annotatePod'), 3);
    h.runtime.set(uid, 'a', 'CONTAINER_RUNNING');
    await h.run(RETOUCH_AFTER_MS * 10);
    assert.deepEqual(h.api.keysOf(NS, 'slow-barrier'), ['p_0', 'p_1']);
    assert.equal(h.api.count('annotatePod'), 4, 'no more re-touches once it runs (the last patch released p_0)');
  });

  it('does not re-touch, just after a start, a container whose blocked status is older than the runtime shows', async () => {
    // an agent restarted while kubelet's status still says "blocked on p_1" although kubelet has started the
    // container since: the runtime is listed before any re-touch
    h = harness();
    const template = barrierPod('restarted', [
      { name: 'a', key: 'p_1' },
      { name: 'b', key: 'p_0' },
    ]);
    const uid = template.metadata!.uid!;
    h.api.configMaps.set(`${NS}/restarted-barrier`, {
      metadata: {
        name: 'restarted-barrier',
        namespace: NS,
        uid: 'cm-1',
        ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'restarted', uid }],
      },
      data: { p_1: 'true' },
    });
    template.metadata!.annotations = { [BARRIER_RELEASED_ANNOTATION]: 'p_1@1' };
    template.status = {
      ...template.status,
      containerStatuses: [
        {
          name: 'a',
          ready: false,
          image: 'busybox',
          imageID: '',
          restartCount: 0,
          state: {
            waiting: {
              reason: 'CreateContainerConfigError',
              message: `couldn't find key p_1 in ConfigMap ${NS}/restarted-barrier`,
            },
          },
        },
      ],
    };
    h.runtime.set(uid, 'a', 'CONTAINER_CREATED');
    h.pods.set(template);
    await h.run(RETOUCH_AFTER_MS * 2);
    assert.equal(h.api.count('annotatePod'), 0, 'the runtime shows a: not blocked, no touch');
  });

  it('does not re-touch a pod whose released container is merely not created yet (busy kubelet, no status)', async () => {
    h = harness();
    const pod = h.pods.set(
      barrierPod('busy', [
        { name: 'a', key: 'p_1' },
        { name: 'b', key: 'p_0' },
      ]),
    );
    h.runtime.set(pod.metadata!.uid!, 'other', 'CONTAINER_RUNNING');
    await h.run(RETOUCH_AFTER_MS * 4);
    assert.equal(h.api.count('annotatePod'), 1);
  });

  it('stops work on a pod deleted mid-way and never writes for it again', async () => {
    h = harness();
    const pod = h.pods.set(
      barrierPod('gone', [
        { name: 'a', key: 'p_1' },
        { name: 'b', key: 'p_0' },
      ]),
    );
    const uid = pod.metadata!.uid!;
    await h.run();
    assert.equal(h.controller.trackedPods(), 1);
    h.pods.delete(`${NS}/gone`);
    await h.run();
    assert.equal(h.controller.trackedPods(), 0);
    const calls = h.api.calls.length;
    h.runtime.set(uid, 'a', 'CONTAINER_RUNNING');
    await h.run(RETOUCH_AFTER_MS * 3);
    assert.equal(h.api.calls.length, calls);
    assert.equal(h.poller.watchedCount(), 0);
  });

  it('stops on a pod marked for deletion', async () => {
    h = harness();
    h.pods.set(
      barrierPod('term', [
        { name: 'a', key: 'p_1' },
        { name: 'b', key: 'p_0' },
      ]),
    );
    await h.run();
    h.pods.update(`${NS}/term`, (p) => {
      p.metadata!.deletionTimestamp = new Date(h.clock.now()).toISOString();
    });
    await h.run();
    assert.equal(h.controller.trackedPods(), 0);
  });

  it('takes a failed pod-patch guard (a bare 422 from the real API server) as a changed pod: no warning, looks again', async () => {
    const lines: string[] = [];
    h = harness({ logger: capturingLogger(lines, 'debug') });
    const { ApiError } = await import('../../../src/kube/errors.js');
    // kube-apiserver's answer to a JSON patch whose test op fails: no details, no cause
    h.api.failNext.annotatePod = new ApiError(
      { code: 422, reason: 'Invalid', message: 'the server rejected our request due to an error in our request' },
      'patch',
      '/api/v1/namespaces/ns/pods/moved',
    );
    h.pods.set(
      barrierPod('moved', [
        { name: 'a', key: 'p_1' },
        { name: 'b', key: 'p_0' },
      ]),
    );
    await h.run(500);
    assert.equal(h.api.count('annotatePod'), 2, 'touched again once the pod was looked at again');
    assert.match(annotations('moved')[BARRIER_RELEASED_ANNOTATION] ?? '', /^p_1@/);
    const levels = lines.map((l) => (JSON.parse(l) as { level: number; msg: string }).level);
    assert.ok(
      levels.every((level) => level < 40),
      `no warning or error: ${lines.join('\n')}`,
    );
    assert.ok(lines.some((l) => l.includes('the pod changed since the cache saw it; touching it again')));
  });

  it('continues where an earlier run of the agent stopped (ConfigMap already holds some keys)', async () => {
    h = harness();
    const template = barrierPod('resume', [
      { name: 'a', key: 'p_3' },
      { name: 'b', key: 'p_2' },
      { name: 'c', key: 'p_1' },
    ]);
    const uid = template.metadata!.uid!;
    h.api.put(NS, 'resume-barrier', { p_3: 'true', p_2: 'true' }, uid);
    h.runtime.set(uid, 'a', 'CONTAINER_RUNNING');
    h.runtime.set(uid, 'b', 'CONTAINER_CREATED');
    h.pods.set(template);
    await h.run();
    assert.deepEqual(h.api.keysOf(NS, 'resume-barrier'), ['p_2', 'p_3']);
    assert.equal(h.api.count('create'), 0);
    h.runtime.set(uid, 'b', 'CONTAINER_RUNNING');
    await h.run();
    assert.deepEqual(h.api.keysOf(NS, 'resume-barrier'), ['p_1', 'p_2', 'p_3']);
    assert.equal(annotations('resume')[COMPLETED], 'true');
  });

  it('leaves a ConfigMap of an earlier pod of the same name alone (no key removed, config.yaml kept) until it is gone', async () => {
    h = harness();
    // before: the agent "reset" it by replacing its whole data, which removed a user's config.yaml (issue 26, hole 5)
    h.api.put(NS, 'again-barrier', { 'config.yaml': 'a: 1', p_1: 'true', p_0: 'true' }, 'uid-of-the-old-pod');
    h.pods.set(
      barrierPod('again', [
        { name: 'a', key: 'p_1' },
        { name: 'b', key: 'p_0' },
      ]),
    );
    await h.run();
    assert.deepEqual(h.api.keysOf(NS, 'again-barrier'), ['config.yaml', 'p_0', 'p_1']);
    assert.equal(
      h.api.configMaps.get(`${NS}/again-barrier`)?.metadata?.ownerReferences?.[0]?.uid,
      'uid-of-the-old-pod',
    );
    assert.equal(h.api.count('create') + h.api.count('addKeys'), 0);
    assert.equal(annotations('again')[COMPLETED], undefined);
    assert.equal(h.events.events.filter((e) => e.reason === EVENT_REASON_BARRIER_OF_EARLIER_POD).length, 1);
    // the garbage collector removes it with its owner: the pod's own barrier is created
    h.api.configMaps.delete(`${NS}/again-barrier`);
    await h.run(5000); // the loop's backoff after the refusals
    assert.deepEqual(h.api.keysOf(NS, 'again-barrier'), ['p_1']);
    assert.equal(h.api.configMaps.get(`${NS}/again-barrier`)?.metadata?.ownerReferences?.[0]?.uid, 'uid-again');
  });

  it("adds only p_<n> keys to a user's barrier: its other keys stay as they are", async () => {
    h = harness();
    h.api.put(NS, 'conf-barrier', { 'config.yaml': 'a: 1' });
    const pod = h.pods.set(
      barrierPod('conf', [
        { name: 'a', key: 'p_1' },
        { name: 'b', key: 'p_0' },
      ]),
    );
    await h.run();
    h.runtime.set(pod.metadata!.uid!, 'a', 'CONTAINER_RUNNING');
    await h.run();
    assert.deepEqual(h.api.configMaps.get(`${NS}/conf-barrier`)?.data, {
      'config.yaml': 'a: 1',
      p_1: 'true',
      p_0: 'true',
    });
    assert.equal(annotations('conf')[COMPLETED], 'true');
  });

  it('works with a user-made ConfigMap holding odd keys (no crash) and does not own it', async () => {
    h = harness();
    h.api.put(NS, 'odd-barrier', { p_: 'x', 'p_not-a-number': 'true', p_99999999999: 'true', other: 'y' });
    const pod = h.pods.set(
      barrierPod('odd', [
        { name: 'a', key: 'p_1' },
        { name: 'b', key: 'p_0' },
      ]),
    );
    await h.run();
    h.runtime.set(pod.metadata!.uid!, 'a', 'CONTAINER_RUNNING');
    await h.run();
    assert.deepEqual(h.api.keysOf(NS, 'odd-barrier'), ['other', 'p_', 'p_0', 'p_1', 'p_99999999999', 'p_not-a-number']);
    assert.equal(annotations('odd')[COMPLETED], 'true');
  });

  it('reports containers with an unusable barrier env and orders the others', async () => {
    h = harness();
    const pod = h.pods.set(
      barrierPod('bad', [
        { name: 'short', key: 'p' },
        { name: 'word', key: 'p_abc' },
        { name: 'huge', key: 'p_2147483648' },
        {
          name: 'other-cm',
          env: [
            { name: 'KRUISE_CONTAINER_BARRIER', valueFrom: { configMapKeyRef: { name: 'elsewhere', key: 'p_1' } } },
          ],
        },
        { name: 'plain', env: [{ name: 'KRUISE_CONTAINER_BARRIER', value: 'p_1' }] },
        { name: 'a', key: 'p_1' },
        { name: 'b', key: 'p_0' },
      ]),
    );
    await h.run();
    const warnings = h.events.events.filter((e) => e.reason === EVENT_REASON_BARRIER_INVALID);
    assert.equal(warnings.length, 5);
    for (const name of ['short', 'word', 'huge', 'other-cm', 'plain']) {
      assert.ok(
        warnings.some((w) => w.message.startsWith(`container ${name}:`)),
        `a warning names ${name}`,
      );
    }
    h.runtime.set(pod.metadata!.uid!, 'a', 'CONTAINER_RUNNING');
    await h.run();
    assert.deepEqual(h.api.keysOf(NS, 'bad-barrier'), ['p_0', 'p_1']);
    assert.equal(warnings.length, h.events.events.filter((e) => e.reason === EVENT_REASON_BARRIER_INVALID).length);
  });

  it('reports a pod whose every barrier env is unusable once, however often it changes', async () => {
    h = harness();
    h.pods.set(
      barrierPod('allbad', [
        { name: 'a', key: 'p_x' },
        { name: 'b', key: 'q' },
      ]),
    );
    await h.run();
    for (let i = 0; i < 3; i++) {
      setContainerStatus(h.pods, `${NS}/allbad`, 'a', { ready: i % 2 === 0 });
      await h.run(50);
    }
    assert.equal(h.events.events.length, 2);
    assert.equal(h.api.calls.length, 0);
    assert.equal(h.controller.trackedPods(), 0);
  });

  it('ignores pods without a barrier and completed pods with nothing waiting', async () => {
    h = harness();
    h.pods.set(barrierPod('plain', [{ name: 'a' }, { name: 'b' }]));
    const done = barrierPod('done', [
      { name: 'a', key: 'p_1' },
      { name: 'b', key: 'p_0' },
    ]);
    done.metadata!.annotations = { [COMPLETED]: 'true' };
    h.pods.set(done);
    await h.run();
    assert.equal(h.api.calls.length, 0);
    assert.equal(h.runtime.lists, 0);
  });

  it('retries a failed write with backoff and counts it', async () => {
    const registry = createRegistry();
    h = harness({ metrics: launchPriorityMetrics(registry) });
    h.api.failNext.create = new (await import('../../../src/kube/errors.js')).ApiError(
      { code: 500, reason: 'InternalError', message: 'etcd hiccup' },
      'post',
      '/x',
    );
    h.pods.set(
      barrierPod('flaky', [
        { name: 'a', key: 'p_1' },
        { name: 'b', key: 'p_0' },
      ]),
    );
    await h.run(500);
    assert.deepEqual(h.api.keysOf(NS, 'flaky-barrier'), ['p_1']);
    const text = await registry.metrics();
    assert.match(text, /kruise_daemon_launch_priority_releases_total\{result="error"\} 1/);
    assert.match(text, /kruise_daemon_launch_priority_releases_total\{result="ok"\} 1/);
  });

  it('measures from the higher level ready (runtime start time) to the next key written', async () => {
    const registry = createRegistry();
    h = harness({ metrics: launchPriorityMetrics(registry), pollIntervalMs: 50 });
    const pod = h.pods.set(
      barrierPod('m', [
        { name: 'a', key: 'p_1' },
        { name: 'b', key: 'p_0' },
      ]),
    );
    await h.run();
    h.runtime.set(pod.metadata!.uid!, 'a', 'CONTAINER_RUNNING');
    await h.run();
    const text = await registry.metrics();
    assert.match(text, /kruise_daemon_launch_priority_release_delay_seconds_count 1/);
    const sum = Number(/kruise_daemon_launch_priority_release_delay_seconds_sum (\S+)/.exec(text)?.[1]);
    assert.ok(sum > 0 && sum <= 0.06, `delay ${sum}s is within one poll period`);
    assert.match(text, /kruise_daemon_launch_priority_pod_touches_total\{reason="release"\} 2/);
  });
});
