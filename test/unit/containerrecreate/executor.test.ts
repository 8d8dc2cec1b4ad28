// emulator: an API server inside the unit-test process (npm run test:unit has no cluster); the test plays the kubelet
// The CRR executor against the in-process API emulator (CRDs applied) and a fake runtime whose stops the "kubelet"
// below turns into new container instances reported in the pod status.
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import type { WirePod } from '../../../src/api/wire.js';
import {
  CONTAINER_RECREATE_REQUESTS,
  type ContainerRecreateRequest,
} from '../../../src/api/containerrecreaterequest.js';
import { CriNotFoundError } from '../../../src/cri/errors.js';
import { CrrController } from '../../../src/daemon/containerrecreate/controller.js';
import { crrMetrics } from '../../../src/daemon/containerrecreate/metrics.js';
import { NodePods } from '../../../src/daemon/node-pods.js';
import { CoreResources, type KubeClient, type KubeObject, type ListWatcher } from '../../../src/kube/index.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { systemClock } from '../../../src/util/clock.js';
import { startEmulatorWithCrds, type EmulatorWithCrds } from '../../support/emulator-with-crds.js';
import { waitFor } from '../../support/wait.js';
import { FakeNode, frozenSource, NS } from './fake-node.js';
import { FakeContainerRuntime } from './fake-runtime.js';

const NODE = 'node-a';

class NoEvents {
  readonly reasons: string[] = [];
  event(_o: KubeObject, _t: string, reason: string): void {
    this.reasons.push(reason);
  }
}

describe('CRR executor (emulator + fake runtime)', function () {
  let env: EmulatorWithCrds;
  let client: KubeClient;
  let runtime: FakeContainerRuntime;
  let pods: NodePods;
  let controller: CrrController | undefined;
  let node: FakeNode;

  before(async () => {
    env = await startEmulatorWithCrds();
    client = env.client;
  });
  after(async () => {
    await env.close();
  });
  beforeEach(() => {
    runtime = new FakeContainerRuntime();
    node = new FakeNode(client, runtime, NODE);
    pods = new NodePods({ nodeName: NODE, source: client });
    pods.start();
  });
  afterEach(async () => {
    await controller?.stop();
    controller = undefined;
    await pods.stop();
  });

  function startController(crrSource?: ListWatcher<ContainerRecreateRequest>): CrrController {
    controller = new CrrController({
      nodeName: NODE,
      client,
      crrSource,
      pods,
      runtime: () => Promise.resolve(runtime),
      clock: systemClock,
      logger: silentLogger,
      metrics: crrMetrics(new Registry()),
      events: new NoEvents(),
      workers: 4,
    });
    controller.start();
    return controller;
  }

  const makePod = (...args: Parameters<FakeNode['makePod']>): Promise<WirePod> => node.makePod(...args);
  const makeCrr = (...args: Parameters<FakeNode['makeCrr']>): Promise<ContainerRecreateRequest> =>
    node.makeCrr(...args);

  const getCrr = (name: string): Promise<ContainerRecreateRequest> =>
    client.get<ContainerRecreateRequest>(CONTAINER_RECREATE_REQUESTS, name, { namespace: NS });
  const completed = (name: string) => () => getCrr(name).then((c) => (c.status?.phase === 'Completed' ? c : undefined));

  it('restarts exactly the named container and completes when the new instance is ready', async () => {
    const pod = await makePod(['app', 'side']);
    const side = runtime.current(pod.metadata!.uid!, 'side')!.id;
    const app = runtime.current(pod.metadata!.uid!, 'app')!.id;
    startController();
    const crr = await makeCrr(pod, ['app']);
    const done = await waitFor(completed(crr.metadata.name!), { message: 'CRR completed' });
    assert.deepEqual(done.status?.containerRecreateStates, [{ name: 'app', phase: 'Succeeded', isKilled: true }]);
    assert.ok(done.status?.completionTime);
    assert.deepEqual(runtime.stops(), [app]);
    assert.equal(runtime.current(pod.metadata!.uid!, 'side')!.id, side);
  });

  it('orderedRecreate stops the second container only after the first is back', async () => {
    const pod = await makePod(['a', 'b']);
    startController();
    const crr = await makeCrr(pod, ['a', 'b'], { orderedRecreate: true });
    await waitFor(completed(crr.metadata.name!), { message: 'CRR completed' });
    const uid = pod.metadata!.uid!;
    const stops = runtime.stops();
    assert.equal(stops.length, 2);
    assert.ok(stops[0]!.endsWith('-a') && stops[1]!.endsWith('-b'));
    assert.equal(runtime.current(uid, 'a')!.restartCount, 1);
    assert.equal(runtime.current(uid, 'b')!.restartCount, 1);
  });

  it('one CRR per pod at a time: a second one is Pending until the first completed', async () => {
    const pod = await makePod(['app']);
    runtime.recreate = false; // the first CRR stays Recreating: no new instance comes up
    const first = await makeCrr(pod, ['app']);
    const second = await makeCrr(pod, ['app']);
    startController();
    await waitFor(() => getCrr(second.metadata.name!).then((c) => c.status?.phase === 'Pending'), {
      message: 'second Pending',
    });
    const firstNow = await getCrr(first.metadata.name!);
    assert.equal(firstNow.status?.phase, 'Recreating');
    assert.equal(runtime.stops().length, 1);
  });

  it('resumes a CRR whose stop was recorded but not done, and never stops a container twice', async () => {
    const pod = await makePod(['a', 'b']);
    const uid = pod.metadata!.uid!;
    const crr = await makeCrr(pod, ['a', 'b']);
    // a previous agent recorded "a" as killed and stopped it (kubelet brought it back), and recorded "b" but died
    // before its stop went out
    const aOld = runtime.current(uid, 'a')!.id;
    await runtime.stopContainer({ container_id: aOld, timeout: 2 });
    runtime.calls.length = 0;
    await client.patch(
      CONTAINER_RECREATE_REQUESTS,
      crr.metadata.name!,
      {
        status: {
          phase: 'Recreating',
          containerRecreateStates: [
            { name: 'a', phase: 'Recreating', isKilled: true },
            { name: 'b', phase: 'Recreating', isKilled: true },
          ],
        },
      },
      { type: 'merge', namespace: NS, subresource: 'status' },
    );
    const bOld = runtime.current(uid, 'b')!.id;
    startController();
    await waitFor(completed(crr.metadata.name!), { message: 'CRR completed' });
    assert.deepEqual(runtime.stops(), [bOld]);
  });

  it('a CRR without statusContext is completed with a message saying why', async () => {
    const pod = await makePod(['app']);
    startController();
    const crr = await makeCrr(pod, ['app'], {}, { ctx: false });
    const done = await waitFor(completed(crr.metadata.name!), { message: 'CRR completed' });
    assert.match(done.status?.message ?? '', /statusContext\.containerID/);
    assert.deepEqual(runtime.stops(), []);
  });

  it('a failing StopContainer marks the container Failed and completes the CRR (failurePolicy Fail)', async () => {
    const pod = await makePod(['app']);
    runtime.stopError = new Error('runtime says no');
    startController();
    const crr = await makeCrr(pod, ['app']);
    const done = await waitFor(completed(crr.metadata.name!), { message: 'CRR completed' });
    assert.equal(done.status?.containerRecreateStates?.[0]?.phase, 'Failed');
    assert.match(done.status?.containerRecreateStates?.[0]?.message ?? '', /kill container error: runtime says no/);
  });

  it('unreadyGracePeriodSeconds: waits for the unready-acquired mark, then for the grace period, then stops', async () => {
    const pod = await makePod(['app']);
    startController();
    const crr = await makeCrr(pod, ['app'], { unreadyGracePeriodSeconds: 1 });
    const name = crr.metadata.name!;
    await waitFor(() => getCrr(name).then((c) => c.status?.phase === 'Recreating'), { message: 'Recreating' });
    assert.deepEqual(runtime.stops(), [], 'no stop before the controller marked the pod unready');
    const acquiredAt = Date.now();
    await client.patch(
      CONTAINER_RECREATE_REQUESTS,
      name,
      {
        metadata: {
          annotations: {
            'crr.apps.kruise.io/unready-acquired': new Date(acquiredAt).toISOString().replace(/\.\d+Z$/, 'Z'),
          },
        },
      },
      { type: 'merge', namespace: NS },
    );
    await waitFor(() => runtime.stops().length === 1, { message: 'stopped after the grace period' });
    assert.ok(Date.now() - Math.floor(acquiredAt / 1000) * 1000 >= 1000, 'not before the grace period');
    await waitFor(completed(name), { message: 'CRR completed' });
  });
  it('never stops a container of a CRR completed meanwhile, nor writes that CRR again (its cache is stale)', async () => {
    const pod = await makePod(['app']);
    const crr = await makeCrr(pod, ['app']);
    // the controller completed it (no agent had answered); this agent's watch still shows it new
    const completedStatus = {
      phase: 'Completed',
      completionTime: '2026-01-01T00:01:00Z',
      message: 'daemon has not responded for a long time',
    };
    await client.patch(
      CONTAINER_RECREATE_REQUESTS,
      crr.metadata.name!,
      { status: completedStatus },
      { type: 'merge', namespace: NS, subresource: 'status' },
    );
    const agent = startController(frozenSource([crr]));
    await pods.synced;
    await waitFor(() => agent.checkSynced() === undefined, { message: 'the stale cache synced' });
    await agent.reconcile(`${NS}/${pod.metadata!.name!}`);
    assert.deepEqual(runtime.stops(), [], 'no stop');
    assert.deepEqual((await getCrr(crr.metadata.name!)).status, completedStatus, 'the completed status unchanged');
  });

  it('a CRR for a pod with restartPolicy Never is completed at once with a message, nothing stopped', async () => {
    const pod = await makePod(['app'], { restartPolicy: 'Never' });
    startController();
    const crr = await makeCrr(pod, ['app']);
    const done = await waitFor(completed(crr.metadata.name!), { message: 'CRR completed' });
    assert.match(
      done.status?.message ?? '',
      /^not allowed to recreate container app: the Pod's restartPolicy is Never, so kubelet would not start it again whatever exit code the stop ends it with/,
    );
    assert.deepEqual(runtime.stops(), []);
  });

  it('a CRR whose container restart rules leave some stop exit code unrestarted is completed at once, nothing stopped', async () => {
    const pod = await makePod(['app'], {
      restartPolicy: 'Never',
      containers: [
        {
          name: 'app',
          image: 'busybox',
          restartPolicy: 'Never',
          restartPolicyRules: [{ action: 'Restart', exitCodes: { operator: 'In', values: [0, 143] } }],
        },
      ],
    });
    startController();
    const crr = await makeCrr(pod, ['app']);
    const done = await waitFor(completed(crr.metadata.name!), { message: 'CRR completed' });
    assert.match(done.status?.message ?? '', /if the stop ends it with exit code 1-142, 144-255 /);
    assert.deepEqual(runtime.stops(), []);
  });

  it('a container kubelet removed before our stop (RestartAllContainers) is no failure: Succeeded, stopped once', async () => {
    const pod = await makePod(['app']);
    const uid = pod.metadata!.uid!;
    const stop = runtime.stopContainer.bind(runtime);
    let first = true;
    runtime.stopContainer = async (req, opts) => {
      if (!first) return stop(req, opts);
      first = false;
      runtime.calls.push({ method: 'StopContainer', id: req.container_id ?? '', timeout: Number(req.timeout ?? 0) });
      // kubelet's RestartAllContainers removed every container of the pod and started them again
      const old = runtime.containers.findIndex((c) => c.id === req.container_id);
      runtime.containers.splice(old, 1);
      runtime.add(uid, 'app').restartCount = 1;
      await node.reportStatus(await client.get<WirePod>(CoreResources.pods, pod.metadata!.name!, { namespace: NS }));
      throw new CriNotFoundError(
        'NotFound',
        5,
        'StopContainer',
        'not found',
        `container "${req.container_id}" not found`,
      );
    };
    startController();
    const crr = await makeCrr(pod, ['app']);
    const done = await waitFor(completed(crr.metadata.name!), { message: 'CRR completed' });
    assert.deepEqual(
      done.status?.containerRecreateStates?.map((s) => [s.name, s.phase]),
      [['app', 'Succeeded']],
    );
    assert.equal(runtime.stops().length, 1, 'the instance kubelet started is never stopped');
  });

  it('while kubelet holds the stopped container in CrashLoopBackOff, its state says so', async () => {
    const pod = await makePod(['app']);
    runtime.recreate = false; // kubelet backs off: no new instance yet
    node.waiting.set('app', {
      reason: 'CrashLoopBackOff',
      message: `back-off 10s restarting failed container=app pod=${pod.metadata!.name!}_${NS}(${pod.metadata!.uid!})`,
    });
    startController();
    const crr = await makeCrr(pod, ['app']);
    const name = crr.metadata.name!;
    const waiting = await waitFor(
      () =>
        getCrr(name).then((c) =>
          c.status?.containerRecreateStates?.[0]?.message?.includes('CrashLoopBackOff') ? c : undefined,
        ),
      { message: 'the state names the backoff' },
    );
    assert.equal(waiting.status?.phase, 'Recreating');
    assert.match(
      waiting.status.containerRecreateStates![0]!.message!,
      /^kubelet has not started the container again: CrashLoopBackOff \(back-off 10s restarting failed container=app /,
    );
    // the backoff is over: kubelet starts the next instance
    node.waiting.clear();
    const old = runtime.current(pod.metadata!.uid!, 'app')!;
    runtime.add(pod.metadata!.uid!, 'app').restartCount = old.restartCount + 1;
    await node.reportStatus(pod);
    const done = await waitFor(completed(name), { message: 'CRR completed' });
    assert.deepEqual(done.status?.containerRecreateStates, [{ name: 'app', phase: 'Succeeded', isKilled: true }]);
  });
});
