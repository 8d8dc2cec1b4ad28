// emulator: an API server on the test's FakeClock (creation and status timestamps in fake time), in-process
// The agent's CRR executor and the controller's CRR housekeeping together, on one FakeClock shared with the
// in-process emulator and a fake runtime whose preStop hook sleeps on that clock: a table over preStop length x
// activeDeadlineSeconds x grace period x forceRecreate, each row driven second by second, every status the API
// server stores recorded through a watch. What must hold in every row: the CRR is Recreating with a state for every
// container before the hook (or the stop) begins, the container Pending until its stop returned (OpenKruise's
// isKilled: it was stopped), Recreating and isKilled before it with forceRecreate; once Completed its phase,
// completion time and message never change, and its states change at most once more, to record a stop that returned
// after a deadline; it completes with the deadline message when the deadline falls inside the stop, else with every
// container Succeeded.
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import {
  type ContainerRecreateRequestStatus,
  CONTAINER_RECREATE_REQUESTS,
  type ContainerRecreateRequest,
} from '../../../src/api/containerrecreaterequest.js';
import type { WirePod } from '../../../src/api/wire.js';
import {
  CrrHousekeeper,
  MESSAGE_DEADLINE,
  newCrrInformer,
} from '../../../src/controller/containerrecreate/controller.js';
import { CrrController } from '../../../src/daemon/containerrecreate/controller.js';
import { crrMetrics } from '../../../src/daemon/containerrecreate/metrics.js';
import { NodePods } from '../../../src/daemon/node-pods.js';
import { CoreResources, Informer, type KubeObject, type ReconcileResult } from '../../../src/kube/index.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { FakeClock } from '../../../src/util/clock.js';
import { startEmulatorWithCrds } from '../../support/emulator-with-crds.js';
import { waitFor } from '../../support/wait.js';
import { FakeNode, NS } from './fake-node.js';
import { FakeContainerRuntime } from './fake-runtime.js';

const NODE = 'node-a';

interface Row {
  preStopSeconds?: number | undefined;
  deadlineSeconds?: number | undefined;
  graceSeconds: number;
  forceRecreate: boolean;
}

interface Recorded {
  atSeconds: number;
  status: ContainerRecreateRequestStatus | undefined;
}

const rows: Row[] = [];
for (const preStopSeconds of [undefined, 5, 70])
  for (const deadlineSeconds of [undefined, 8])
    for (const graceSeconds of [10, 90])
      for (const forceRecreate of [false, true])
        rows.push({ preStopSeconds, deadlineSeconds, graceSeconds, forceRecreate });

function title(row: Row): string {
  return [
    row.preStopSeconds === undefined ? 'no preStop' : `preStop ${row.preStopSeconds} s`,
    row.deadlineSeconds === undefined ? 'no deadline' : `deadline ${row.deadlineSeconds} s`,
    `grace ${row.graceSeconds} s`,
    row.forceRecreate ? 'forceRecreate' : 'no forceRecreate',
  ].join(', ');
}

/** Count the reconciles running now (the method is looked up at each call, so the wrapper sees every one). */
function countBusy(target: { reconcile(key: string): Promise<ReconcileResult | void> }): { busy: number } {
  const counter = { busy: 0 };
  const reconcile = target.reconcile.bind(target);
  target.reconcile = async (key) => {
    counter.busy++;
    try {
      return await reconcile(key);
    } finally {
      counter.busy--;
    }
  };
  return counter;
}

async function runRow(row: Row): Promise<void> {
  const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
  const env = await startEmulatorWithCrds({ clock });
  const { client } = env;
  const runtime = new FakeContainerRuntime();
  const node = new FakeNode(client, runtime, NODE);
  const nodePods = new NodePods({ nodeName: NODE, source: client, clock });
  const agent = new CrrController({
    nodeName: NODE,
    client,
    pods: nodePods,
    runtime: () => Promise.resolve(runtime),
    clock,
    logger: silentLogger,
    metrics: crrMetrics(new Registry()),
    events: { event: () => undefined },
    workers: 4,
  });
  const crrs = newCrrInformer(client, { clock, logger: silentLogger });
  const pods = new Informer<WirePod>(CoreResources.pods, client, { name: 'pods', clock });
  const keeper = new CrrHousekeeper({ client, crrs, pods, clock, logger: silentLogger });
  const history: Recorded[] = [];
  const watched = new Informer<ContainerRecreateRequest>(CONTAINER_RECREATE_REQUESTS, client, {
    name: 'history',
    clock,
  });
  const t0 = clock.now();
  const record = (crr: ContainerRecreateRequest): void => {
    history.push({ atSeconds: (clock.now() - t0) / 1000, status: structuredClone(crr.status) });
  };
  watched.addHandlers({ onAdd: record, onUpdate: (_, crr) => record(crr) });
  const agentWork = countBusy(agent);
  const keeperWork = countBusy(keeper);
  try {
    for (const informer of [nodePods, crrs, pods, watched]) informer.start();
    await Promise.all([nodePods.synced, crrs.synced, pods.synced, watched.synced]);
    agent.start();
    keeper.start();

    const pod = await node.makePod(['app'], { terminationGracePeriodSeconds: row.graceSeconds });
    const podKey = `${NS}/${pod.metadata!.name!}`;
    // The CRR as the API server holds it when the hook (or, without one, the stop) begins.
    let atStopBegin: ContainerRecreateRequestStatus | undefined;
    let stopBegan = false;
    let hooksRunning = 0;
    let crrName = '';
    const readCrr = (): Promise<ContainerRecreateRequest> =>
      client.get<ContainerRecreateRequest>(CONTAINER_RECREATE_REQUESTS, crrName, { namespace: NS });
    const noteStopBegin = async (): Promise<void> => {
      if (stopBegan) return;
      stopBegan = true;
      atStopBegin = structuredClone((await readCrr()).status);
    };
    runtime.execSync = async (_req, options) => {
      await noteStopBegin();
      hooksRunning++;
      try {
        await clock.sleep((row.preStopSeconds ?? 0) * 1000, options?.signal);
      } finally {
        hooksRunning--;
      }
      return { stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), exit_code: 0 };
    };
    const stop = runtime.stopContainer.bind(runtime);
    runtime.stopContainer = async (req, options) => {
      await noteStopBegin();
      return stop(req, options);
    };

    const crr = await node.makeCrr(
      pod,
      ['app'],
      { terminationGracePeriodSeconds: row.graceSeconds, forceRecreate: row.forceRecreate },
      {
        activeDeadlineSeconds: row.deadlineSeconds,
        container: () =>
          row.preStopSeconds === undefined
            ? {}
            : { preStop: { exec: { command: ['sleep', String(row.preStopSeconds)] } } },
      },
    );
    crrName = crr.metadata.name!;
    const crrKey = `${NS}/${crrName}`;

    // Settled: every cache holds what the API server holds, and no reconcile runs except one waiting in the hook.
    const settled = async (): Promise<boolean> => {
      const [current, currentPod] = await Promise.all([
        readCrr(),
        client.get<WirePod & KubeObject>(CoreResources.pods, pod.metadata!.name!, { namespace: NS }),
      ]);
      const rv = current.metadata?.resourceVersion;
      const podRv = currentPod.metadata?.resourceVersion;
      const active = current.metadata?.labels?.['crr.apps.kruise.io/active'] === 'true';
      const inAgent = agent.informer.get(crrKey);
      return (
        crrs.get(crrKey)?.metadata?.resourceVersion === rv &&
        watched.get(crrKey)?.metadata?.resourceVersion === rv &&
        (active ? inAgent?.metadata?.resourceVersion === rv : inAgent === undefined) &&
        pods.get(podKey)?.metadata?.resourceVersion === podRv &&
        nodePods.get(podKey)?.metadata?.resourceVersion === podRv &&
        keeperWork.busy === 0 &&
        agentWork.busy <= hooksRunning
      );
    };

    const stopSeconds = row.preStopSeconds === undefined ? 0 : Math.min(row.preStopSeconds, row.graceSeconds);
    const horizon = Math.max(stopSeconds, row.deadlineSeconds ?? 0) + 15;
    await waitFor(settled, { message: 'the CRR picked up' });
    for (let second = 1; second <= horizon; second++) {
      await clock.advance(1000);
      await waitFor(settled, { message: `everything settled at ${second} s` });
    }

    const phases = history.map((h) => `${h.atSeconds}s:${h.status?.phase ?? '""'}`).join(' ');
    assert.ok(stopBegan, 'the container was stopped');
    assert.equal(atStopBegin?.phase, 'Recreating', `phase when the stop began (history ${phases})`);
    assert.deepEqual(
      atStopBegin?.containerRecreateStates?.map((s) => s.name),
      ['app'],
      'every container has a state before the stop begins',
    );
    const stopped = { name: 'app', phase: 'Recreating', isKilled: true };
    assert.deepEqual(
      atStopBegin?.containerRecreateStates,
      [row.forceRecreate ? stopped : { name: 'app', phase: 'Pending' }],
      row.forceRecreate ? 'forceRecreate: recorded before the stop' : 'Pending until the stop returned',
    );
    const firstCompleted = history.findIndex((h) => h.status?.phase === 'Completed');
    assert.ok(firstCompleted >= 0, `the CRR completed (history ${phases})`);
    const completed = history[firstCompleted]!.status!;
    const { containerRecreateStates: _states, ...completion } = completed;
    let statesAfter = JSON.stringify(completed.containerRecreateStates);
    let stateChanges = 0;
    for (const later of history.slice(firstCompleted + 1)) {
      const { containerRecreateStates, ...rest } = later.status ?? { phase: '' };
      assert.deepEqual(
        rest,
        completion,
        `phase, time or message changed after Completed at ${later.atSeconds} s: ${phases}`,
      );
      if (JSON.stringify(containerRecreateStates) !== statesAfter) stateChanges++;
      statesAfter = JSON.stringify(containerRecreateStates);
    }
    const final = (await readCrr()).status;
    if (row.deadlineSeconds !== undefined && row.deadlineSeconds <= stopSeconds) {
      assert.equal(final?.message, MESSAGE_DEADLINE);
      assert.deepEqual(
        completed.containerRecreateStates,
        [row.forceRecreate ? stopped : { name: 'app', phase: 'Pending' }],
        'the deadline leaves the states as they were: app in its stop',
      );
      assert.deepEqual(final?.containerRecreateStates, [stopped], 'the stop that returned after the deadline recorded');
      assert.ok(stateChanges <= 1, `the states changed ${stateChanges} times after Completed (history ${phases})`);
    } else {
      assert.deepEqual(final, completed, 'the stored status is the one first completed');
      assert.equal(final?.message, undefined, `no early completion (history ${phases})`);
      assert.deepEqual(final?.containerRecreateStates, [{ name: 'app', phase: 'Succeeded', isKilled: true }]);
    }
    assert.equal(runtime.stops().length, 1, 'the container was stopped once');
  } finally {
    await agent.stop();
    await keeper.stop();
    for (const informer of [nodePods, crrs, pods, watched]) await informer.stop();
    await env.close();
  }
}

describe('CRR phase history: agent + housekeeping on one fake clock', function () {
  for (const row of rows) {
    it(`${title(row)}: Recreating with states before the stop, never out of Completed`, async () => {
      await runRow(row);
    });
  }
});
