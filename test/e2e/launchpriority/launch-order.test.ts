// Container launch priority end to end on the real cluster: pods created through kube-apiserver, whose pod-create
// admission calls kruise-controller's webhook (it injects the barrier), run by the node's real kubelet, barriers
// released by the agent running inside that node. Start order is read from the node's containerd (CRI started_at),
// not from the agent.
import assert from 'node:assert/strict';
import { ApiError } from '../../../src/kube/errors.js';
import { CoreResources } from '../../../src/kube/resource.js';
import { waitFor } from '../../support/wait.js';
import {
  allReady,
  containerId,
  deletePods,
  getBarrier,
  getPod,
  podManifest,
  runtimeStartTimes,
  startLaunchStack,
  type ContainerDef,
  type LaunchStack,
  type PodObject,
} from './stack.js';

const COMPLETED = 'apps.kruise.io/container-launch-priority-completed';

describe('launch priority e2e: the real kubelet, the agent in the node releases barriers', function () {
  this.timeout(180_000);
  let stack: LaunchStack;
  const created: string[] = [];

  before(async () => {
    stack = await startLaunchStack({ namespacePrefix: 'kd-lp-e2e' });
  });

  after(async () => {
    if (stack) {
      await deletePods(stack, created);
      await stack.close();
    }
  });

  async function create(
    containers: ContainerDef[],
    metadata: { name?: string; generateName?: string; annotations?: Record<string, string> },
  ): Promise<PodObject> {
    const pod = await stack.client.create<PodObject>(
      CoreResources.pods,
      podManifest(stack.node.name, containers, metadata, stack.cluster.images.busybox1),
      { namespace: stack.namespace },
    );
    created.push(pod.metadata!.name!);
    return pod;
  }

  async function runningAndCompleted(name: string, timeoutMs = 90_000): Promise<PodObject> {
    return waitFor(
      async () => {
        const pod = await getPod(stack, name);
        return allReady(pod) && pod?.metadata?.annotations?.[COMPLETED] === 'true' ? pod : undefined;
      },
      { timeoutMs, intervalMs: 100, message: `pod ${name} running, every container ready, launch priority completed` },
    );
  }

  /** Container names ordered by their runtime start time; every start is distinct. */
  async function startOrder(pod: PodObject): Promise<string[]> {
    const times = await runtimeStartTimes(stack.cri, pod.metadata!.uid!);
    const order = [...times.entries()].sort((a, b) => (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
    for (let i = 1; i < order.length; i++) {
      assert.ok(order[i]![1] > order[i - 1]![1], `${order[i]![0]} started strictly after ${order[i - 1]![0]}`);
    }
    return order.map(([name]) => name);
  }

  it('starts containers of priorities 10, 0 and -5 strictly in that order (runtime start times)', async () => {
    const pod = await create(
      [
        { name: 'app', priority: '-5' },
        { name: 'proxy', priority: '10' },
        { name: 'conf', priority: '0' },
      ],
      { name: 'lp-priorities' },
    );
    const injected = pod.spec?.containers?.map((c) => JSON.stringify(c.env));
    assert.ok(
      injected?.every((env) => env?.includes('KRUISE_CONTAINER_BARRIER')),
      'the webhook injected the barrier',
    );
    const running = await runningAndCompleted('lp-priorities');
    assert.deepEqual(await startOrder(running), ['proxy', 'conf', 'app']);
    const barrier = await getBarrier(stack, 'lp-priorities');
    assert.deepEqual(Object.keys(barrier?.data ?? {}).sort(), ['p_-5', 'p_0', 'p_10']);
    assert.deepEqual(barrier?.metadata?.ownerReferences, [
      { apiVersion: 'v1', kind: 'Pod', name: 'lp-priorities', uid: running.metadata!.uid },
    ]);
  });

  it('starts containers in spec order with Ordered', async () => {
    await create([{ name: 'first' }, { name: 'second' }, { name: 'third' }], {
      name: 'lp-ordered',
      annotations: { 'apps.kruise.io/container-launch-priority': 'Ordered' },
    });
    const running = await runningAndCompleted('lp-ordered');
    assert.deepEqual(await startOrder(running), ['first', 'second', 'third']);
  });

  it('orders a pod created with generateName (the webhook names it first)', async () => {
    const pod = await create(
      [
        { name: 'late', priority: '1' },
        { name: 'early', priority: '2' },
      ],
      {
        generateName: 'lp-gen-',
      },
    );
    const name = pod.metadata!.name!;
    assert.match(name, /^lp-gen-[a-z0-9]{5}$/);
    const env = JSON.stringify(pod.spec?.containers?.[0]?.env);
    assert.ok(env.includes(`"${name}-barrier"`), `the barrier env names ${name}-barrier: ${env}`);
    const running = await runningAndCompleted(name);
    assert.deepEqual(await startOrder(running), ['early', 'late']);
    assert.equal((await getBarrier(stack, name))?.metadata?.ownerReferences?.[0]?.uid, running.metadata!.uid);
  });

  it('denies invalid priorities with a message naming the container', async () => {
    for (const value of ['high', '2147483648', '1.5']) {
      const err = await stack.client
        .create(
          CoreResources.pods,
          podManifest(
            stack.node.name,
            [
              { name: 'ok', priority: '1' },
              { name: 'broken', priority: value },
            ],
            { name: 'lp-bad' },
            'x',
          ),
          { namespace: stack.namespace },
        )
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      assert.ok(err instanceof ApiError, `${value} is denied`);
      assert.equal(err.code, 400);
      assert.match(err.message, /mpod\.kb\.io/);
      assert.match(err.message, /container "broken"/);
      assert.match(err.message, /KRUISE_CONTAINER_PRIORITY/);
    }
    assert.equal(await getPod(stack, 'lp-bad'), undefined);
  });

  it('recreates a barrier ConfigMap deleted mid-way and finishes the order', async () => {
    const pod = await create(
      [
        { name: 'top', priority: '2' },
        { name: 'middle', priority: '1', readyWhenFile: true },
        { name: 'bottom', priority: '0' },
      ],
      { name: 'lp-deleted' },
    );
    const uid = pod.metadata!.uid!;
    // the middle level is released and running, but not ready: the agent waits on it
    const middle = await waitFor(() => containerId(stack.cri, uid, 'middle'), {
      timeoutMs: 60_000,
      message: 'middle running',
    });
    const before = await getBarrier(stack, 'lp-deleted');
    assert.deepEqual(Object.keys(before?.data ?? {}).sort(), ['p_1', 'p_2']);
    await stack.client.delete(CoreResources.configMaps, 'lp-deleted-barrier', { namespace: stack.namespace });
    assert.equal(await containerId(stack.cri, uid, 'bottom'), undefined, 'bottom waits');

    await stack.cri.execSync({ container_id: middle, cmd: ['touch', '/tmp/ready'], timeout: 10 });
    const running = await runningAndCompleted('lp-deleted');
    const after = await getBarrier(stack, 'lp-deleted');
    assert.ok(after, 'the barrier exists again');
    assert.notEqual(after.metadata?.uid, before?.metadata?.uid, 'a new ConfigMap');
    assert.deepEqual(Object.keys(after.data ?? {}).sort(), ['p_0', 'p_1', 'p_2']);
    assert.equal(after.metadata?.ownerReferences?.[0]?.uid, uid);
    assert.deepEqual(await startOrder(running), ['top', 'middle', 'bottom']);
  });

  it('continues after the agent is killed mid-way (state rebuilt from the ConfigMap and the runtime)', async () => {
    const pod = await create(
      [
        { name: 'one', priority: '3' },
        { name: 'two', priority: '2', readyWhenFile: true },
        { name: 'three', priority: '1' },
      ],
      { name: 'lp-restart' },
    );
    const uid = pod.metadata!.uid!;
    const two = await waitFor(() => containerId(stack.cri, uid, 'two'), { timeoutMs: 60_000, message: 'two running' });
    const before = stack.agent;
    const after = await stack.killAgentAndStartAnother();
    assert.notEqual(after.pid, before.pid);
    await stack.cri.execSync({ container_id: two, cmd: ['touch', '/tmp/ready'], timeout: 10 });
    const running = await runningAndCompleted('lp-restart');
    assert.deepEqual(await startOrder(running), ['one', 'two', 'three']);
    const barrier = await getBarrier(stack, 'lp-restart');
    assert.deepEqual(Object.keys(barrier?.data ?? {}).sort(), ['p_1', 'p_2', 'p_3']);
  });

  it('orders a pod whose barrier ConfigMap a user made beforehand with odd keys, leaving its other keys alone', async () => {
    // config.yaml: the key an agent once deleted from a user's barrier (issue 26, hole 5)
    const data = { p_: 'x', p_abc: 'true', p_99999999999: 'true', other: 'y', 'config.yaml': 'a: 1\n' };
    await stack.client.create(
      CoreResources.configMaps,
      { metadata: { name: 'lp-odd-barrier' }, data },
      { namespace: stack.namespace },
    );
    await create(
      [
        { name: 'low', priority: '-1' },
        { name: 'high', priority: '1' },
      ],
      { name: 'lp-odd' },
    );
    const running = await runningAndCompleted('lp-odd');
    assert.deepEqual(await startOrder(running), ['high', 'low']);
    const barrier = await getBarrier(stack, 'lp-odd');
    assert.deepEqual(barrier?.data, { ...data, p_1: 'true', 'p_-1': 'true' });
    assert.equal(barrier?.metadata?.ownerReferences, undefined, "a user's ConfigMap is left unowned");
  });

  it('stops working on a pod deleted mid-way', async () => {
    const pod = await create(
      [
        { name: 'up', priority: '1', readyWhenFile: true },
        { name: 'down', priority: '0' },
      ],
      { name: 'lp-gone' },
    );
    await waitFor(() => containerId(stack.cri, pod.metadata!.uid!, 'up'), { timeoutMs: 60_000, message: 'up running' });
    await stack.client.delete(CoreResources.pods, 'lp-gone', { namespace: stack.namespace, gracePeriodSeconds: 0 });
    await waitFor(async () => (await getPod(stack, 'lp-gone')) === undefined, { message: 'pod gone' });
    const metrics = await waitFor(
      async () => {
        const text = await (await fetch(`${await stack.agent.baseUrl()}/metrics`)).text();
        return /kruise_daemon_launch_priority_pods_waiting 0\b/.test(text) ? text : undefined;
      },
      { message: 'the agent no longer tracks the pod' },
    );
    assert.match(metrics, /kruise_daemon_launch_priority_releases_total\{result="ok"\}/);
  });

  it('did all of it without a failed reconcile or a warning from the agent', () => {
    const ours = stack.agent.logs.filter((l) => l.component === 'launchpriority');
    assert.ok(ours.some((l) => l.msg === 'releasing launch barriers of the pods on this node'));
    const bad = ours.filter((l) => ['warn', 'error', 'fatal'].includes(String(l.level)));
    assert.deepEqual(bad, []);
    // every released container started on the first touch: kubelet synced on the metadata change
    const retouches = ours.filter((l) => /touching the pod again/.test(String(l.msg)));
    assert.deepEqual(retouches, []);
  });
});
