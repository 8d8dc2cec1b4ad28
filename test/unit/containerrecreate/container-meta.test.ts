// emulator: an API server inside the unit-test process (npm run test:unit has no cluster), one per test file
// Container meta against the in-process API emulator and the fake runtime: the annotation, the env hash read from
// the running container, restarts only while InPlaceUpdateReady is False, in priority batches.
import assert from 'node:assert/strict';
import { IN_PLACE_UPDATE_STATE_ANNOTATION, RUNTIME_CONTAINERS_META_ANNOTATION } from '../../../src/api/constants.js';
import { envHash, parseRuntimeContainerMetaSet } from '../../../src/api/runtime-container-meta.js';
import type { WirePod } from '../../../src/api/wire.js';
import { ContainerMetaController } from '../../../src/daemon/containermeta/controller.js';
import { KUBELET_SETTLE_MS } from '../../../src/daemon/containermeta/meta-plan.js';
import { NodePods } from '../../../src/daemon/node-pods.js';
import { CoreResources, type KubeClient, type KubeObject } from '../../../src/kube/index.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { FakeClock, systemClock, type Clock } from '../../../src/util/clock.js';
import { startEmulatorWithCrds, type EmulatorWithCrds } from '../../support/emulator-with-crds.js';
import { waitFor } from '../../support/wait.js';
import { FakeContainerRuntime } from './fake-runtime.js';

const NODE = 'node-m';
const NS = 'default';
type PodObject = WirePod & KubeObject;

describe('container meta (emulator + fake runtime)', function () {
  let env: EmulatorWithCrds;
  let client: KubeClient;
  let runtime: FakeContainerRuntime;
  let pods: NodePods;
  let controller: ContainerMetaController;
  let seq = 0;

  before(async () => {
    env = await startEmulatorWithCrds();
    client = env.client;
  });
  after(async () => env.close());
  let clock: Clock = systemClock;
  beforeEach(async function () {
    const title = this.currentTest?.title ?? '';
    clock = /backoff|kubelet/.test(title) ? new FakeClock(Date.now()) : systemClock;
    runtime = new FakeContainerRuntime();
    pods = new NodePods({ nodeName: NODE, source: client });
    pods.start();
    await pods.synced;
    controller = new ContainerMetaController({
      nodeName: NODE,
      client,
      pods,
      runtime: () => Promise.resolve(runtime),
      clock,
      logger: silentLogger,
      events: { event: () => undefined },
      // only the test about it waits for kubelet to see new metadata
      kubeletSettleMs: title.includes('kubelet') ? undefined : 0,
    });
    controller.start();
  });
  afterEach(async () => {
    await controller.stop();
    await pods.stop();
  });

  const envFrom = (key: string) => [
    { name: 'V', valueFrom: { fieldRef: { fieldPath: `metadata.annotations['${key}']` } } },
  ];

  /** A pod with an InPlaceUpdateReady gate whose containers read annotation k-<name>; statuses as kubelet's. */
  async function makePod(containers: Array<{ name: string; priority?: string }>): Promise<PodObject> {
    const annotations = Object.fromEntries(containers.map((c) => [`k-${c.name}`, 'v1']));
    const pod = await client.create<PodObject>(
      CoreResources.pods,
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `m${++seq}`, namespace: NS, annotations },
        spec: {
          nodeName: NODE,
          readinessGates: [{ conditionType: 'InPlaceUpdateReady' }],
          containers: containers.map((c) => ({
            name: c.name,
            image: 'busybox',
            env: [
              ...envFrom(`k-${c.name}`),
              ...(c.priority ? [{ name: 'KRUISE_CONTAINER_PRIORITY', value: c.priority }] : []),
            ],
          })),
        },
      },
      { namespace: NS },
    );
    for (const c of containers) runtime.add(pod.metadata!.uid!, c.name, { V: 'v1' });
    await report(pod.metadata!.name!);
    return pod;
  }

  /** kubelet: current instances in the pod status, with the env a restart would give them. */
  async function report(
    name: string,
    conditions?: Array<{ type: string; status: string; lastTransitionTime?: string }>,
  ): Promise<void> {
    const pod = await client.get<PodObject>(CoreResources.pods, name, { namespace: NS });
    const containerStatuses = pod.spec!.containers.map((c) => {
      const cur = runtime.current(pod.metadata!.uid!, c.name)!;
      const running = cur.state === 'CONTAINER_RUNNING';
      return {
        name: c.name,
        image: 'busybox',
        imageID: '',
        containerID: `containerd://${cur.id}`,
        restartCount: cur.restartCount,
        ready: running,
        state: running ? { running: {} } : { terminated: { exitCode: 0 } },
      };
    });
    await client.patch(
      CoreResources.pods,
      name,
      { status: { phase: 'Running', containerStatuses, ...(conditions ? { conditions } : {}) } },
      { type: 'merge', namespace: NS, subresource: 'status' },
    );
  }

  const meta = async (name: string) =>
    parseRuntimeContainerMetaSet(
      (await client.get<PodObject>(CoreResources.pods, name, { namespace: NS })).metadata?.annotations?.[
        RUNTIME_CONTAINERS_META_ANNOTATION
      ],
    );

  it('writes runtime-containers-meta with the env hash the container runs with; no restart while InPlaceUpdateReady is not False', async () => {
    const pod = await makePod([{ name: 'app' }]);
    const name = pod.metadata!.name!;
    const set = await waitFor(() => meta(name), { message: 'meta written' });
    const entry = set.containers[0]!;
    assert.equal(entry.name, 'app');
    assert.equal(entry.containerID, `containerd://${runtime.current(pod.metadata!.uid!, 'app')!.id}`);
    assert.equal(entry.restartCount, 0);
    assert.equal(entry.hashes.plainHash, 0xabc);
    assert.equal(entry.hashes.extractedEnvFromMetadataHash, envHash([{ name: 'V', value: 'v1' }]));
    await client.patch(
      CoreResources.pods,
      name,
      { metadata: { annotations: { 'k-app': 'v2' } } },
      { type: 'merge', namespace: NS },
    );
    await waitFor(() => controller && runtime.calls.filter((c) => c.method === 'ListContainers').length >= 2, {
      message: 'a second look',
    });
    assert.deepEqual(runtime.stops(), []);
  });

  it('restarts only the changed containers, higher priority first, each batch after the previous is ready', async () => {
    const pod = await makePod([
      { name: 'high', priority: '10' },
      { name: 'low', priority: '1' },
      { name: 'same', priority: '5' },
    ]);
    const name = pod.metadata!.name!;
    const uid = pod.metadata!.uid!;
    await waitFor(
      () =>
        meta(name).then(
          (m) => m?.containers.length === 3 && m.containers.every((c) => c.hashes.extractedEnvFromMetadataHash),
        ),
      {
        message: 'meta with env hashes',
      },
    );
    const started = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    await report(name, [{ type: 'InPlaceUpdateReady', status: 'False', lastTransitionTime: started }]);
    // what kubelet gives restarted instances once it sees the new annotations
    runtime.envOnRestart.set('high', { V: 'v2' });
    runtime.envOnRestart.set('low', { V: 'v2' });
    await client.patch(
      CoreResources.pods,
      name,
      { metadata: { annotations: { 'k-high': 'v2', 'k-low': 'v2' } } },
      { type: 'merge', namespace: NS },
    );
    await waitFor(() => runtime.stops().length === 1, { message: 'first batch stopped' });
    assert.ok(runtime.stops()[0]!.endsWith('-high'));
    // kubelet has not reported the new high yet: the low batch waits
    await report(name);
    await waitFor(() => runtime.stops().length === 2, { message: 'second batch stopped' });
    assert.ok(runtime.stops()[1]!.endsWith('-low'), runtime.stops().join());
    await report(name);
    assert.equal(runtime.current(uid, 'same')!.restartCount, 0);
    const state = await waitFor(async () => {
      const p = await client.get<PodObject>(CoreResources.pods, name, { namespace: NS });
      const s = JSON.parse(p.metadata?.annotations?.[IN_PLACE_UPDATE_STATE_ANNOTATION] ?? '{}') as {
        containerBatchesRecord?: Array<{ containers: string[] }>;
      };
      return s.containerBatchesRecord?.length === 2 ? s : undefined;
    });
    assert.deepEqual(
      state.containerBatchesRecord!.map((b) => b.containers),
      [['high'], ['low']],
    );
    await waitFor(
      () =>
        meta(name).then((m) =>
          m?.containers.every(
            (c) =>
              c.hashes.extractedEnvFromMetadataHash ===
              envHash([{ name: 'V', value: c.name === 'same' ? 'v1' : 'v2' }]),
          ),
        ),
      {
        message: 'meta of the new instances',
      },
    );
    assert.equal(runtime.stops().length, 2);
  });

  it('a container that comes back with the old values is restarted again only after a backoff', async () => {
    const fake = clock as FakeClock;
    const pod = await makePod([{ name: 'app' }]);
    const name = pod.metadata!.name!;
    const uid = pod.metadata!.uid!;
    await waitFor(() => meta(name).then((m) => m?.containers[0]?.hashes.extractedEnvFromMetadataHash), {
      message: 'meta',
    });
    const started = new Date(fake.now()).toISOString().replace(/\.\d+Z$/, 'Z');
    await report(name, [{ type: 'InPlaceUpdateReady', status: 'False', lastTransitionTime: started }]);
    // kubelet has not seen the new annotation: the restarted instance still gets V=v1
    await client.patch(
      CoreResources.pods,
      name,
      { metadata: { annotations: { 'k-app': 'v2' } } },
      { type: 'merge', namespace: NS },
    );
    await waitFor(() => runtime.stops().length === 1, { message: 'first restart' });
    await report(name);
    const second = runtime.current(uid, 'app')!.id;
    await waitFor(() => meta(name).then((m) => m?.containers[0]?.containerID === `containerd://${second}`), {
      message: 'meta of the new instance (its env read)',
    });
    assert.equal(runtime.stops().length, 1, 'not restarted again before the backoff');
    await fake.advance(3001);
    await waitFor(() => runtime.stops().length === 2, { message: 'second restart after 3 s' });
    assert.equal(runtime.stops()[1], second);
  });

  it('stops a container for new values only once it has had them 2 s: kubelet may be syncing with the pod as it was', async () => {
    const fake = clock as FakeClock;
    const pod = await makePod([{ name: 'app' }]);
    const name = pod.metadata!.name!;
    await waitFor(() => meta(name).then((m) => m?.containers[0]?.hashes.extractedEnvFromMetadataHash), {
      message: 'meta',
    });
    const started = new Date(fake.now()).toISOString().replace(/\.\d+Z$/, 'Z');
    await report(name, [{ type: 'InPlaceUpdateReady', status: 'False', lastTransitionTime: started }]);
    await client.patch(
      CoreResources.pods,
      name,
      { metadata: { annotations: { 'k-app': 'v2' } } },
      { type: 'merge', namespace: NS },
    );
    const key = `${NS}/${name}`;
    await waitFor(() => pods.get(key)?.metadata?.annotations?.['k-app'] === 'v2', {
      message: 'new value in the cache',
    });
    const result = await controller.reconcile(key);
    assert.deepEqual(runtime.stops(), [], 'not stopped as soon as the value changed');
    assert.deepEqual(result, { requeueAfter: KUBELET_SETTLE_MS });
    await fake.advance(KUBELET_SETTLE_MS - 1);
    assert.deepEqual(runtime.stops(), [], 'not stopped before the settle time');
    await fake.advance(1);
    await waitFor(() => runtime.stops().length === 1, { message: 'stopped once the settle time passed' });
  });
});
