// emulator: an API server inside the unit-test process (npm run test:unit has no cluster), one per test file
// The controller's CRR housekeeping against the in-process API emulator.
import assert from 'node:assert/strict';
import { CRR_ACTIVE_LABEL, CRR_POD_UID_LABEL, CRR_UNREADY_ACQUIRED_KEY } from '../../../src/api/constants.js';
import {
  CONTAINER_RECREATE_REQUESTS,
  type ContainerRecreateRequest,
} from '../../../src/api/containerrecreaterequest.js';
import {
  CrrHousekeeper,
  MESSAGE_DEADLINE,
  MESSAGE_NO_RESPONSE,
  MESSAGE_POD_GONE,
  newCrrInformer,
  RESPONSE_TIMEOUT_MS,
} from '../../../src/controller/containerrecreate/controller.js';
import type { WirePod } from '../../../src/api/wire.js';
import { CONTROLLER_USAGE, parseControllerCommandLine } from '../../../src/controller/options.js';
import { CoreResources, Informer, isNotFound, type KubeClient } from '../../../src/kube/index.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { FakeClock, systemClock } from '../../../src/util/clock.js';
import { startEmulatorWithCrds, type EmulatorWithCrds } from '../../support/emulator-with-crds.js';
import { waitFor } from '../../support/wait.js';
import { frozenSource } from './fake-node.js';

const NS = 'default';

describe('CRR housekeeping (controller, emulator)', function () {
  let env: EmulatorWithCrds;
  let client: KubeClient;
  let keeper: CrrHousekeeper;
  let crrs: Informer<ContainerRecreateRequest>;
  let pods: Informer<WirePod>;
  let seq = 0;

  before(async () => {
    env = await startEmulatorWithCrds();
    client = env.client;
    crrs = newCrrInformer(client, { clock: systemClock, logger: silentLogger });
    pods = new Informer<WirePod>(CoreResources.pods, client, { name: 'pods' });
    crrs.start();
    pods.start();
    await Promise.all([crrs.synced, pods.synced]);
    keeper = new CrrHousekeeper({
      client,
      crrs,
      pods,
      clock: systemClock,
      logger: silentLogger,
      responseTimeoutMs: 500,
    });
    keeper.start();
  });
  after(async () => {
    await keeper.stop();
    await crrs.stop();
    await pods.stop();
    await env.close();
  });

  async function makePod(gate = false): Promise<WirePod> {
    const pod = await client.create<WirePod>(
      CoreResources.pods,
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `hp${++seq}`, namespace: NS },
        spec: {
          nodeName: 'node-a',
          containers: [{ name: 'app', image: 'busybox' }],
          ...(gate ? { readinessGates: [{ conditionType: 'KruisePodReady' }] } : {}),
        },
      },
      { namespace: NS },
    );
    return client.patch<WirePod>(
      CoreResources.pods,
      pod.metadata!.name!,
      {
        status: {
          phase: 'Running',
          conditions: [
            { type: 'ContainersReady', status: 'True' },
            { type: 'Ready', status: 'True' },
            ...(gate ? [{ type: 'KruisePodReady', status: 'True' }] : []),
          ],
        },
      },
      { type: 'merge', namespace: NS, subresource: 'status' },
    );
  }

  async function makeCrr(
    pod: WirePod,
    spec: Record<string, unknown> = {},
    phase?: string,
  ): Promise<ContainerRecreateRequest> {
    const crr = await client.create<ContainerRecreateRequest>(
      CONTAINER_RECREATE_REQUESTS,
      {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'ContainerRecreateRequest',
        metadata: {
          name: `hc${++seq}`,
          namespace: NS,
          labels: { [CRR_ACTIVE_LABEL]: 'true', [CRR_POD_UID_LABEL]: pod.metadata!.uid! },
        },
        spec: { podName: pod.metadata!.name!, containers: [{ name: 'app' }], strategy: {}, ...spec },
      },
      { namespace: NS },
    );
    if (!phase) return crr;
    return client.patch<ContainerRecreateRequest>(
      CONTAINER_RECREATE_REQUESTS,
      crr.metadata.name!,
      { status: { phase } },
      { type: 'merge', namespace: NS, subresource: 'status' },
    );
  }

  const get = (name: string): Promise<ContainerRecreateRequest | undefined> =>
    client.get<ContainerRecreateRequest>(CONTAINER_RECREATE_REQUESTS, name, { namespace: NS }).catch((err: unknown) => {
      if (isNotFound(err)) return undefined;
      throw err;
    });

  it('completes a CRR no agent answered, removes its active label and deletes it after its TTL', async () => {
    const pod = await makePod();
    const crr = await makeCrr(pod, { ttlSecondsAfterFinished: 1 });
    const done = await waitFor(() =>
      get(crr.metadata.name!).then((c) => (c?.status?.phase === 'Completed' ? c : undefined)),
    );
    assert.equal(done.status?.message, MESSAGE_NO_RESPONSE);
    await waitFor(() =>
      get(crr.metadata.name!).then((c) => c === undefined || c.metadata?.labels?.[CRR_ACTIVE_LABEL] === undefined),
    );
    await waitFor(() => get(crr.metadata.name!).then((c) => c === undefined), { message: 'deleted after TTL' });
  });

  it('completes a CRR past its activeDeadlineSeconds, leaving its container states as they are', async () => {
    const pod = await makePod();
    const crr = await makeCrr(pod, { activeDeadlineSeconds: 1 }, 'Recreating');
    const done = await waitFor(() =>
      get(crr.metadata.name!).then((c) => (c?.status?.phase === 'Completed' ? c : undefined)),
    );
    assert.equal(done.status?.message, MESSAGE_DEADLINE);
  });

  it('completes a CRR whose pod has gone', async () => {
    const pod = await makePod();
    const crr = await makeCrr(pod, {}, 'Recreating');
    await client.delete(CoreResources.pods, pod.metadata!.name!, { namespace: NS, gracePeriodSeconds: 0 });
    const done = await waitFor(() =>
      get(crr.metadata.name!).then((c) => (c?.status?.phase === 'Completed' ? c : undefined)),
    );
    assert.equal(done.status?.message, MESSAGE_POD_GONE);
  });

  it('unreadyGracePeriodSeconds: holds the pod not-ready through KruisePodReady, then releases it', async () => {
    const pod = await makePod(true);
    const crr = await makeCrr(pod, { strategy: { unreadyGracePeriodSeconds: 1 } }, 'Recreating');
    const name = crr.metadata.name!;
    const held = await waitFor(() =>
      get(name).then((c) => (c?.metadata?.annotations?.[CRR_UNREADY_ACQUIRED_KEY] ? c : undefined)),
    );
    assert.deepEqual(held.metadata?.finalizers, [CRR_UNREADY_ACQUIRED_KEY]);
    const notReady = await client.get<WirePod>(CoreResources.pods, pod.metadata!.name!, { namespace: NS });
    const cond = notReady.status?.conditions?.find((c) => c.type === 'KruisePodReady');
    assert.equal(cond?.status, 'False');
    assert.equal(cond?.message, JSON.stringify([{ userAgent: 'ContainerRecreateRequest', key: `${NS}/${name}` }]));
    assert.equal(notReady.status?.conditions?.find((c) => c.type === 'Ready')?.reason, 'ReadinessGatesNotReady');
    await client.patch(
      CONTAINER_RECREATE_REQUESTS,
      name,
      { status: { phase: 'Completed', completionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') } },
      { type: 'merge', namespace: NS, subresource: 'status' },
    );
    await waitFor(() => get(name).then((c) => (c?.metadata?.finalizers ?? []).length === 0));
    const released = await client.get<WirePod>(CoreResources.pods, pod.metadata!.name!, { namespace: NS });
    const after = released.status?.conditions?.find((c) => c.type === 'KruisePodReady');
    assert.equal(after?.status, 'True');
    assert.equal(after?.message, '[]');
  });
  it('does not complete again, from a stale cache, a CRR the agent completed meanwhile', async () => {
    const pod = await makePod();
    const crr = await makeCrr(pod, { activeDeadlineSeconds: 3 }, 'Recreating');
    const agentDone = {
      phase: 'Completed',
      completionTime: crr.metadata.creationTimestamp!,
      containerRecreateStates: [{ name: 'app', phase: 'Succeeded', isKilled: true }],
    };
    await client.patch(
      CONTAINER_RECREATE_REQUESTS,
      crr.metadata.name!,
      { status: agentDone },
      { type: 'merge', namespace: NS, subresource: 'status' },
    );
    // a housekeeper whose cache still holds the Recreating CRR, past its deadline
    const stale = new Informer<ContainerRecreateRequest>(CONTAINER_RECREATE_REQUESTS, frozenSource([crr]), {
      name: 'stale-crrs',
    });
    stale.start();
    await stale.synced;
    const late = new CrrHousekeeper({
      client,
      crrs: stale,
      pods,
      clock: new FakeClock(Date.parse(crr.metadata.creationTimestamp!) + 10_000),
      logger: silentLogger,
    });
    try {
      await late.reconcile(`${NS}/${crr.metadata.name!}`);
    } finally {
      await stale.stop();
    }
    assert.deepEqual((await get(crr.metadata.name!))?.status, agentDone);
  });
  it("takes the no-response timeout from --crr-response-timeout (default 1m, OpenKruise's; at least 1s)", () => {
    const timeout = (args: string[]): number | undefined => {
      const parsed = parseControllerCommandLine(args, {});
      return parsed.kind === 'run' ? parsed.options.crrResponseTimeoutMs : undefined;
    };
    assert.equal(timeout([]), RESPONSE_TIMEOUT_MS);
    assert.equal(timeout(['--crr-response-timeout', '5s']), 5_000);
    assert.throws(() => timeout(['--crr-response-timeout', '500ms']), /--crr-response-timeout: must be at least 1s/);
    assert.match(CONTROLLER_USAGE, /--crr-response-timeout DUR/);
  });
});
