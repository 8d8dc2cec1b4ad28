// ContainerRecreateRequests and env-from-metadata restarts on the real local cluster: the real API server calls the
// controller's CRR webhook, the controller's housekeeping runs, the agent runs inside a real node, and that node's
// real kubelet starts every container the agent stops again (crash-loop backoff included).
import assert from 'node:assert/strict';
import {
  CRR_UNREADY_ACQUIRED_KEY,
  IN_PLACE_UPDATE_STATE_ANNOTATION,
  RUNTIME_CONTAINERS_META_ANNOTATION,
} from '../../../src/api/constants.js';
import type { ContainerRecreateRequest } from '../../../src/api/containerrecreaterequest.js';
import type { WireContainer } from '../../../src/api/wire.js';
import { ApiError } from '../../../src/kube/errors.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { CoreResources } from '../../../src/kube/resource.js';
import { waitFor } from '../../support/wait.js';
import {
  bareId,
  containerStatus,
  createCrr,
  getCrr,
  getPod,
  runPod,
  SLEEP_FOREVER,
  startCrrStack,
  waitCompleted,
  type CrrStack,
  type PodObject,
  startInPlaceUpdate,
} from './stack.js';

const NAMESPACE = 'e2e-crr';
/** The controller completes a CRR no agent has given a phase within this (default 1 min): short, to meet it here. */
const RESPONSE_TIMEOUT_SECONDS = 5;

describe('ContainerRecreateRequest e2e', function () {
  this.timeout(180_000);
  let stack: CrrStack;
  let image: string;
  let seq = 0;

  before(async () => {
    stack = await startCrrStack({
      namespace: NAMESPACE,
      controllerArgs: ['--crr-response-timeout', `${RESPONSE_TIMEOUT_SECONDS}s`],
    });
    image = stack.cluster.images.busybox1;
  });
  after(async () => {
    await stack?.close();
  });

  function pod(
    containers: Array<{ name: string; preStop?: string[]; env?: WireContainer['env'] }>,
    extra: {
      annotations?: Record<string, string>;
      labels?: Record<string, string>;
      readinessGates?: Array<{ conditionType: string }>;
      grace?: number;
      restartPolicy?: string;
    } = {},
  ): PodObject {
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: `crr-pod-${++seq}`,
        namespace: NAMESPACE,
        ...(extra.annotations === undefined ? {} : { annotations: extra.annotations }),
        ...(extra.labels === undefined ? {} : { labels: extra.labels }),
      },
      spec: {
        nodeName: stack.node.name,
        terminationGracePeriodSeconds: extra.grace ?? 5,
        ...(extra.readinessGates === undefined ? {} : { readinessGates: extra.readinessGates }),
        ...(extra.restartPolicy === undefined ? {} : { restartPolicy: extra.restartPolicy }),
        containers: containers.map((c) => ({
          name: c.name,
          image,
          command: SLEEP_FOREVER,
          ...(c.env === undefined ? {} : { env: c.env }),
          ...(c.preStop ? { lifecycle: { preStop: { exec: { command: c.preStop } } } } : {}),
        })),
      },
    };
  }

  async function startedAtNs(id: string): Promise<bigint> {
    const { status } = await stack.cri.containerStatus({ container_id: id });
    return BigInt(status?.started_at ?? 0);
  }

  it('restarts one container in place (new id, restartCount + 1, same pod UID and IP, others untouched), completes, then TTL-deletes', async () => {
    const before = await runPod(stack, pod([{ name: 'app' }, { name: 'side' }]));
    const name = `crr-one-${seq}`;
    await createCrr(stack, name, {
      podName: before.metadata!.name!,
      containers: [{ name: 'app' }],
      ttlSecondsAfterFinished: 3,
    });
    const done = await waitCompleted(stack, name);
    assert.deepEqual(done.status?.containerRecreateStates, [{ name: 'app', phase: 'Succeeded', isKilled: true }]);
    assert.equal(done.status?.message, undefined);
    const after = (await getPod(stack, before.metadata!.name!))!;
    const [appBefore, appAfter] = [containerStatus(before, 'app'), containerStatus(after, 'app')];
    assert.notEqual(appAfter.containerID, appBefore.containerID);
    assert.equal(appAfter.restartCount, appBefore.restartCount + 1);
    assert.equal(containerStatus(after, 'side').containerID, containerStatus(before, 'side').containerID);
    assert.equal(containerStatus(after, 'side').restartCount, containerStatus(before, 'side').restartCount);
    assert.equal(after.status?.podIP, before.status?.podIP);
    assert.equal(after.metadata?.uid, before.metadata?.uid, 'the same pod, not a new one');
    await waitFor(() => getCrr(stack, name).then((c) => c === undefined), {
      timeoutMs: 30_000,
      message: 'CRR deleted after its TTL',
    });
  });

  it('orderedRecreate restarts two containers strictly in order (runtime start times)', async () => {
    const before = await runPod(stack, pod([{ name: 'a' }, { name: 'b' }]));
    const name = `crr-ordered-${seq}`;
    await createCrr(stack, name, {
      podName: before.metadata!.name!,
      containers: [{ name: 'a' }, { name: 'b' }],
      strategy: { orderedRecreate: true },
    });
    await waitCompleted(stack, name);
    const after = (await getPod(stack, before.metadata!.name!))!;
    const newA = bareId(containerStatus(after, 'a').containerID);
    const newB = bareId(containerStatus(after, 'b').containerID);
    const oldB = bareId(containerStatus(before, 'b').containerID);
    assert.notEqual(newA, bareId(containerStatus(before, 'a').containerID));
    assert.notEqual(newB, oldB);
    const [aStarted, bStarted] = [await startedAtNs(newA), await startedAtNs(newB)];
    assert.ok(aStarted < bStarted, 'the new a started before the new b');
    const { status: oldBStatus } = await stack.cri.containerStatus({ container_id: oldB });
    assert.ok(BigInt(oldBStatus?.finished_at ?? 0) > aStarted, 'b was stopped only after the new a had started');
  });

  it('runs the preStop hook before the container is stopped', async () => {
    const before = await runPod(stack, pod([{ name: 'app', preStop: ['sh', '-c', 'echo PRESTOP > /proc/1/fd/1'] }]));
    const oldId = bareId(containerStatus(before, 'app').containerID);
    const { status } = await stack.cri.containerStatus({ container_id: oldId });
    const name = `crr-prestop-${seq}`;
    await createCrr(stack, name, { podName: before.metadata!.name!, containers: [{ name: 'app' }] });
    await waitCompleted(stack, name);
    const log = await stack.readNodeFile(status!.log_path);
    const [pre, term] = [log.indexOf('PRESTOP'), log.indexOf('TERM')];
    assert.ok(pre >= 0, `preStop output in the container log: ${log}`);
    assert.ok(term > pre, `SIGTERM came after the preStop hook: ${log}`);
    const killing = await waitFor(
      async () => {
        const events = await stack.client.list<
          KubeObject & { reason?: string; message?: string; involvedObject?: { name?: string } }
        >(CoreResources.events, { namespace: NAMESPACE });
        return events.items.find((e) => e.reason === 'Killing' && e.involvedObject?.name === before.metadata!.name);
      },
      { message: 'Killing event on the pod' },
    );
    assert.equal(killing.message, `Stopping container app by ContainerRecreateRequest ${name}`);
  });

  it('denies a CRR for a missing container or an unscheduled pod with a clear message', async () => {
    const running = await runPod(stack, pod([{ name: 'app' }]));
    await assert.rejects(
      createCrr(stack, `crr-missing-${seq}`, {
        podName: running.metadata!.name!,
        containers: [{ name: 'nope' }],
      }),
      (err: unknown) => err instanceof ApiError && /container nope not found in Pod/.test(err.message),
    );
    // no node has this hostname: kube-scheduler leaves the pod unscheduled
    const pending = pod([{ name: 'app' }]);
    delete pending.spec!.nodeName;
    pending.spec!.nodeSelector = { 'kubernetes.io/hostname': 'no-such-node' };
    await stack.client.create(CoreResources.pods, pending, { namespace: NAMESPACE });
    await assert.rejects(
      createCrr(stack, `crr-pending-${seq}`, {
        podName: pending.metadata!.name!,
        containers: [{ name: 'app' }],
      }),
      (err: unknown) =>
        err instanceof ApiError &&
        /spec\.podName: not allowed to recreate containers in a pending Pod/.test(err.message),
    );
  });

  it('unreadyGracePeriodSeconds: the pod is not Ready (KruisePodReady False) that long before the stop, then Ready again', async () => {
    const grace = 3;
    const created = await runPod(
      stack,
      pod([{ name: 'app' }], { readinessGates: [{ conditionType: 'KruisePodReady' }] }),
    );
    const podName = created.metadata!.name!;
    // what OpenKruise's pod webhook starts a gated pod with: KruisePodReady True; kubelet then reports it Ready
    await stack.client.patch(
      CoreResources.pods,
      podName,
      { status: { conditions: [...(created.status?.conditions ?? []), { type: 'KruisePodReady', status: 'True' }] } },
      { type: 'merge', namespace: NAMESPACE, subresource: 'status' },
    );
    const condition = (p: PodObject | undefined, type: string) => p?.status?.conditions?.find((c) => c.type === type);
    const before = await waitFor(
      () => getPod(stack, podName).then((p) => (condition(p, 'Ready')?.status === 'True' ? p : undefined)),
      { message: 'pod Ready with its KruisePodReady gate True' },
    );
    const name = `crr-unready-${seq}`;
    await createCrr(stack, name, {
      podName,
      containers: [{ name: 'app' }],
      strategy: { unreadyGracePeriodSeconds: grace },
    });
    const notReady = await waitFor(
      () => getPod(stack, podName).then((p) => (condition(p, 'Ready')?.status === 'False' ? p : undefined)),
      { message: 'pod not Ready' },
    );
    const notReadySeenMs = Date.now();
    assert.equal(condition(notReady, 'KruisePodReady')?.status, 'False');
    assert.equal(
      condition(notReady, 'KruisePodReady')?.message,
      JSON.stringify([{ userAgent: 'ContainerRecreateRequest', key: `${NAMESPACE}/${name}` }]),
    );
    assert.equal(condition(notReady, 'Ready')?.reason, 'ReadinessGatesNotReady');
    assert.equal(containerStatus(notReady, 'app').containerID, containerStatus(before, 'app').containerID);
    const acquired = await waitFor(
      () => getCrr(stack, name).then((c) => c?.metadata?.annotations?.[CRR_UNREADY_ACQUIRED_KEY]),
      { message: 'unready-acquired time on the CRR' },
    );
    const done = await waitCompleted(stack, name);
    assert.deepEqual(done.status?.containerRecreateStates, [{ name: 'app', phase: 'Succeeded', isKilled: true }]);
    const stopping = stack.agent.logs.find((l) => l.msg === 'stopping container' && String(l.crr).endsWith(`/${name}`));
    const stoppingMs = typeof stopping?.time === 'string' ? Date.parse(stopping.time) : Number(stopping?.time);
    assert.ok(stoppingMs >= notReadySeenMs, 'the container was stopped only after the pod was seen not Ready');
    assert.ok(stoppingMs >= Date.parse(acquired) + grace * 1000, `stopped ${grace} s after ${acquired}`);
    const after = await waitFor(
      () => getPod(stack, podName).then((p) => (condition(p, 'Ready')?.status === 'True' ? p : undefined)),
      { timeoutMs: 30_000, message: 'pod Ready again' },
    );
    assert.equal(condition(after, 'KruisePodReady')?.status, 'True');
    assert.equal(containerStatus(after, 'app').restartCount, containerStatus(before, 'app').restartCount + 1);
    const finalizers = (await getCrr(stack, name))?.metadata?.finalizers ?? [];
    assert.ok(!finalizers.includes(CRR_UNREADY_ACQUIRED_KEY), `finalizer released: ${JSON.stringify(finalizers)}`);
  });

  it('a failing preStop hook: FailedPreStopHook on the pod, the container is recreated all the same', async () => {
    const before = await runPod(stack, pod([{ name: 'app', preStop: ['sh', '-c', 'echo broken >&2; exit 3'] }]));
    const podName = before.metadata!.name!;
    const name = `crr-failing-hook-${seq}`;
    await createCrr(stack, name, { podName, containers: [{ name: 'app' }] });
    const done = await waitCompleted(stack, name);
    assert.deepEqual(done.status?.containerRecreateStates, [{ name: 'app', phase: 'Succeeded', isKilled: true }]);
    const failed = await waitFor(
      async () => {
        const events = await stack.client.list<
          KubeObject & { reason?: string; type?: string; message?: string; involvedObject?: { name?: string } }
        >(CoreResources.events, { namespace: NAMESPACE });
        return events.items.find((e) => e.reason === 'FailedPreStopHook' && e.involvedObject?.name === podName);
      },
      { message: 'FailedPreStopHook event on the pod' },
    );
    assert.equal(failed.type, 'Warning');
    assert.match(failed.message ?? '', /^PreStopHook failed for container app: /);
    const after = await waitFor(
      () =>
        getPod(stack, podName).then((p) => {
          const app = p && containerStatus(p, 'app');
          return app?.state?.running && app.containerID !== containerStatus(before, 'app').containerID ? p : undefined;
        }),
      { message: 'app running again' },
    );
    assert.equal(containerStatus(after, 'app').restartCount, containerStatus(before, 'app').restartCount + 1);
  });

  it('a pod deleted while its CRR waits: the CRR completes with "pod has gone" and stays so', async () => {
    const before = await runPod(stack, pod([{ name: 'app' }], { grace: 1 }));
    const podName = before.metadata!.name!;
    const name = `crr-pod-gone-${seq}`;
    // waits for the unready grace period (10 min): the pod goes first
    await createCrr(stack, name, {
      podName,
      containers: [{ name: 'app' }],
      strategy: { unreadyGracePeriodSeconds: 600 },
    });
    await waitFor(() => getCrr(stack, name).then((c) => c?.status?.phase === 'Recreating'), {
      message: 'CRR Recreating',
    });
    await stack.client.delete(CoreResources.pods, podName, { namespace: NAMESPACE });
    const done = await waitCompleted(stack, name);
    assert.equal(done.status?.message, 'pod has gone');
    await waitFor(() => getPod(stack, podName).then((p) => p === undefined), {
      message: 'pod object deleted by kubelet',
    });
    const later = await getCrr(stack, name);
    assert.equal(later?.status?.phase, 'Completed');
    assert.equal(later?.status?.message, 'pod has gone');
  });

  it('activeDeadlineSeconds completes a stuck CRR', async () => {
    const before = await runPod(stack, pod([{ name: 'app' }]));
    const name = `crr-deadline-${seq}`;
    // the agent waits for the unready grace period (10 min): stuck
    await createCrr(stack, name, {
      podName: before.metadata!.name!,
      containers: [{ name: 'app' }],
      activeDeadlineSeconds: 3,
      strategy: { unreadyGracePeriodSeconds: 600 },
    });
    const done = await waitCompleted(stack, name);
    assert.equal(done.status?.message, 'recreating has exceeded the activeDeadlineSeconds');
    const after = (await getPod(stack, before.metadata!.name!))!;
    assert.equal(containerStatus(after, 'app').containerID, containerStatus(before, 'app').containerID);
  });

  for (const field of ['annotations', 'labels'] as const) {
    it(`changing ${field === 'labels' ? 'a label' : 'an annotation'} that feeds an env var restarts only that container, once, and it sees the new value`, async () => {
      const values = { 'app-flavour': 'old', 'side-flavour': 'same' };
      const envFrom = (key: string): WireContainer['env'] => [
        { name: 'FLAVOUR', valueFrom: { fieldRef: { fieldPath: `metadata.${field}['${key}']` } } },
      ];
      const before = await runPod(
        stack,
        pod(
          [
            { name: 'app', env: envFrom('app-flavour') },
            { name: 'side', env: envFrom('side-flavour') },
          ],
          {
            [field]: values,
            readinessGates: [{ conditionType: 'InPlaceUpdateReady' }],
          },
        ),
      );
      const podName = before.metadata!.name!;
      await waitFor(
        () => getPod(stack, podName).then((p) => p?.metadata?.annotations?.[RUNTIME_CONTAINERS_META_ANNOTATION]),
        {
          timeoutMs: 30_000,
          message: 'runtime-containers-meta written',
        },
      );
      await startInPlaceUpdate(stack, before, { [field]: { 'app-flavour': 'new' } });
      const after = await waitFor(
        () =>
          getPod(stack, podName).then((p) => {
            const app = p?.status?.containerStatuses?.find((s) => s.name === 'app');
            return app && app.containerID !== containerStatus(before, 'app').containerID && app.ready ? p : undefined;
          }),
        { timeoutMs: 60_000, message: 'app restarted and ready' },
      );
      assert.equal(containerStatus(after, 'side').containerID, containerStatus(before, 'side').containerID);
      // once: a stop before kubelet had the new value would bring app back with 'old' and need a second restart
      assert.equal(containerStatus(after, 'app').restartCount, containerStatus(before, 'app').restartCount + 1);
      const res = await stack.cri.execSync({
        container_id: bareId(containerStatus(after, 'app').containerID),
        cmd: ['sh', '-c', 'echo "$FLAVOUR"'],
        timeout: 5,
      });
      assert.equal(res.stdout.toString('utf8').trim(), 'new');
      const state = JSON.parse(after.metadata?.annotations?.[IN_PLACE_UPDATE_STATE_ANNOTATION] ?? '{}') as {
        containerBatchesRecord?: Array<{ containers: string[] }>;
      };
      assert.deepEqual(
        state.containerBatchesRecord?.map((b) => b.containers),
        [['app']],
      );
    });
  }

  it('env-from-metadata changes in two containers restart them in launch-priority batches, recorded in inplace-update-state', async () => {
    const envFrom = (key: string, priority: string): WireContainer['env'] => [
      { name: 'FLAVOUR', valueFrom: { fieldRef: { fieldPath: `metadata.annotations['${key}']` } } },
      { name: 'KRUISE_CONTAINER_PRIORITY', value: priority },
    ];
    const before = await runPod(
      stack,
      pod(
        [
          { name: 'low', env: envFrom('low-flavour', '1') },
          { name: 'high', env: envFrom('high-flavour', '10') },
        ],
        {
          annotations: { 'low-flavour': 'a', 'high-flavour': 'a' },
          readinessGates: [{ conditionType: 'InPlaceUpdateReady' }],
        },
      ),
    );
    const podName = before.metadata!.name!;
    await waitFor(
      () =>
        getPod(stack, podName).then((p) => {
          const m = JSON.parse(
            p?.metadata?.annotations?.[RUNTIME_CONTAINERS_META_ANNOTATION] ?? '{"containers":[]}',
          ) as {
            containers: Array<{ hashes: { extractedEnvFromMetadataHash?: number } }>;
          };
          return m.containers.length === 2 && m.containers.every((c) => c.hashes.extractedEnvFromMetadataHash);
        }),
      { timeoutMs: 30_000, message: 'runtime-containers-meta with env hashes' },
    );
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    await stack.client.patch(
      CoreResources.pods,
      podName,
      {
        status: {
          conditions: [
            ...(before.status?.conditions ?? []),
            { type: 'InPlaceUpdateReady', status: 'False', lastTransitionTime: now },
          ],
        },
      },
      { type: 'merge', namespace: NAMESPACE, subresource: 'status' },
    );
    await stack.client.patch(
      CoreResources.pods,
      podName,
      { metadata: { annotations: { 'low-flavour': 'b', 'high-flavour': 'b' } } },
      { type: 'merge', namespace: NAMESPACE },
    );
    const after = await waitFor(
      () =>
        getPod(stack, podName).then((p) => {
          const changed = ['low', 'high'].every((n) => {
            const cs = p?.status?.containerStatuses?.find((s) => s.name === n);
            return cs?.ready && cs.containerID !== containerStatus(before, n).containerID;
          });
          return changed ? p : undefined;
        }),
      { timeoutMs: 90_000, message: 'both containers restarted and ready' },
    );
    for (const n of ['low', 'high']) {
      const res = await stack.cri.execSync({
        container_id: bareId(containerStatus(after, n).containerID),
        cmd: ['sh', '-c', 'echo "$FLAVOUR"'],
        timeout: 5,
      });
      assert.equal(res.stdout.toString('utf8').trim(), 'b', `${n} sees the new value`);
      assert.equal(containerStatus(after, n).restartCount, containerStatus(before, n).restartCount + 1, `${n} once`);
    }
    const state = JSON.parse(after.metadata?.annotations?.[IN_PLACE_UPDATE_STATE_ANNOTATION] ?? '{}') as {
      containerBatchesRecord?: Array<{ containers: string[] }>;
    };
    assert.deepEqual(
      state.containerBatchesRecord?.map((b) => b.containers),
      [['high'], ['low']],
    );
    const newHighStarted = await startedAtNs(bareId(containerStatus(after, 'high').containerID));
    const { status: oldLow } = await stack.cri.containerStatus({
      container_id: bareId(containerStatus(before, 'low').containerID),
    });
    assert.ok(BigInt(oldLow?.finished_at ?? 0) > newHighStarted, 'low was stopped only after the new high had started');
  });

  it('an agent killed with SIGKILL mid-CRR resumes without stopping the container twice', async () => {
    const before = await runPod(
      stack,
      pod([{ name: 'app', preStop: ['sh', '-c', 'sleep 3; echo PRESTOP > /proc/1/fd/1'] }], { grace: 20 }),
    );
    const name = `crr-sigkill-${seq}`;
    await createCrr(stack, name, { podName: before.metadata!.name!, containers: [{ name: 'app' }] });
    // kill the agent while the preStop hook sleeps (it logs right before the hook starts)
    await waitFor(
      () => stack.agent.logs.find((l) => l.msg === 'stopping container' && String(l.crr).endsWith(`/${name}`)),
      {
        message: 'the agent stopping app',
      },
    );
    await stack.restartAgent('SIGKILL');
    await waitCompleted(stack, name);
    const after = (await getPod(stack, before.metadata!.name!))!;
    assert.equal(containerStatus(after, 'app').restartCount, containerStatus(before, 'app').restartCount + 1);
    assert.notEqual(containerStatus(after, 'app').containerID, containerStatus(before, 'app').containerID);
  });
  /** Poll the CRR until it is Completed and then `settle` holds, recording every status seen (in order). */
  async function followCrr(
    name: string,
    settle: () => Promise<boolean>,
  ): Promise<ContainerRecreateRequest['status'][]> {
    const seen: ContainerRecreateRequest['status'][] = [];
    const look = async (): Promise<ContainerRecreateRequest | undefined> => {
      const crr = await getCrr(stack, name);
      if (JSON.stringify(crr?.status) !== JSON.stringify(seen.at(-1))) seen.push(crr?.status);
      return crr;
    };
    await waitFor(async () => (await look())?.status?.phase === 'Completed', {
      timeoutMs: 90_000,
      message: `CRR ${name} Completed`,
    });
    await waitFor(async () => (await look()) !== undefined && (await settle()), {
      timeoutMs: 60_000,
      message: `CRR ${name}: the recreated container back`,
    });
    return seen;
  }

  it('a preStop hook longer than the no-response timeout: Recreating all along, completed once, never changed after', async () => {
    const hookSeconds = RESPONSE_TIMEOUT_SECONDS + 3;
    const before = await runPod(
      stack,
      pod([{ name: 'app', preStop: ['sh', '-c', `sleep ${hookSeconds}`] }], { grace: 30 }),
    );
    const name = `crr-long-prestop-${seq}`;
    await createCrr(stack, name, { podName: before.metadata!.name!, containers: [{ name: 'app' }] });
    const oldId = containerStatus(before, 'app').containerID;
    const seen = await followCrr(name, async () => {
      const p = await getPod(stack, before.metadata!.name!);
      const app = p && containerStatus(p, 'app');
      return Boolean(app && app.containerID !== oldId && app.ready);
    });
    const phases = seen.map((s) => s?.phase ?? '');
    assert.deepEqual(
      phases.filter((p, i) => p !== phases[i - 1]),
      ['', 'Recreating', 'Completed'].slice(phases[0] === '' ? 0 : 1),
      `phases: ${JSON.stringify(seen)}`,
    );
    // through the hook the CRR is Recreating and its container Pending (not yet stopped); then stopped, recreated
    const running = seen.find((s) => s?.phase === 'Recreating');
    assert.deepEqual(running?.containerRecreateStates, [{ name: 'app', phase: 'Pending' }], JSON.stringify(seen));
    assert.ok(
      seen.some((s) => s?.phase === 'Recreating' && s.containerRecreateStates?.[0]?.isKilled === true),
      `isKilled once the stop returned: ${JSON.stringify(seen)}`,
    );
    const completed = seen.filter((s) => s?.phase === 'Completed');
    assert.equal(completed.length, 1, `the completed status never changed: ${JSON.stringify(completed)}`);
    assert.equal(completed[0]?.message, undefined, 'not completed for want of an answer');
    assert.deepEqual(completed[0]?.containerRecreateStates, [{ name: 'app', phase: 'Succeeded', isKilled: true }]);
  });

  it("a deadline inside a preStop hook (OpenKruise's case): Completed with both Pending, then app recorded stopped once its stop returned", async () => {
    const before = await runPod(
      stack,
      pod([{ name: 'app', preStop: ['sleep', '8'] }, { name: 'sidecar' }], { grace: 30 }),
    );
    const podName = before.metadata!.name!;
    const name = `crr-deadline-prestop-${seq}`;
    await createCrr(stack, name, {
      podName,
      containers: [{ name: 'app' }, { name: 'sidecar' }],
      activeDeadlineSeconds: 3,
    });
    const done = await waitCompleted(stack, name);
    assert.equal(done.status?.message, 'recreating has exceeded the activeDeadlineSeconds');
    assert.deepEqual(done.status?.containerRecreateStates, [
      { name: 'app', phase: 'Pending' },
      { name: 'sidecar', phase: 'Pending' },
    ]);
    // the stop goes on after the deadline: app restarts once, the sidecar is never stopped
    await waitFor(async () => containerStatus((await getPod(stack, podName))!, 'app').restartCount === 1, {
      timeoutMs: 60_000,
      message: 'app restarted once after its preStop hook',
    });
    const recorded = await waitFor(
      async () => {
        const crr = await getCrr(stack, name);
        return crr?.status?.containerRecreateStates?.[0]?.isKilled === true ? crr : undefined;
      },
      { message: "app's stop recorded on the completed CRR" },
    );
    assert.deepEqual(recorded.status?.containerRecreateStates, [
      { name: 'app', phase: 'Recreating', isKilled: true },
      { name: 'sidecar', phase: 'Pending' },
    ]);
    assert.equal(recorded.status?.phase, 'Completed');
    assert.equal(recorded.status?.completionTime, done.status?.completionTime);
    assert.equal(recorded.status?.message, done.status?.message);
    const after = (await getPod(stack, podName))!;
    assert.equal(containerStatus(after, 'sidecar').restartCount, 0);
  });

  it('denies a CRR for a pod with restartPolicy Never: kubelet would not start the container again', async () => {
    const never = await runPod(stack, pod([{ name: 'app' }], { restartPolicy: 'Never' }));
    await assert.rejects(
      createCrr(stack, `crr-never-${seq}`, { podName: never.metadata!.name!, containers: [{ name: 'app' }] }),
      (err: unknown) =>
        err instanceof ApiError &&
        err.message.includes(
          "spec.containers[0].name: not allowed to recreate container app: the Pod's restartPolicy is Never",
        ),
    );
  });

  it("a second CRR of a container soon after the first waits out kubelet's crash-loop backoff, and says so", async () => {
    const before = await runPod(stack, pod([{ name: 'app' }]));
    const podName = before.metadata!.name!;
    const first = `crr-again-1-${seq}`;
    await createCrr(stack, first, { podName, containers: [{ name: 'app' }] });
    await waitCompleted(stack, first);
    const again = `crr-again-2-${seq}`;
    await createCrr(stack, again, { podName, containers: [{ name: 'app' }] });
    const againCreatedMs = Date.now();
    const seen: string[] = [];
    const waiting = await waitFor(
      async () => {
        const [crr, p] = [await getCrr(stack, again), await getPod(stack, podName)];
        const app = p && containerStatus(p, 'app');
        const now = JSON.stringify({ crr: crr?.status, app: { state: app?.state, restartCount: app?.restartCount } });
        if (now !== seen.at(-1)) seen.push(now);
        return /back-off/i.test(crr?.status?.containerRecreateStates?.[0]?.message ?? '') && crr
          ? { crr, restartCount: app?.restartCount }
          : undefined;
      },
      { timeoutMs: 30_000, message: 'the second CRR naming the backoff' },
    ).catch((err: unknown) => {
      // what the CRR and kubelet's status went through, and the agent's lines about the pod
      const agentLines = stack.agent.logs
        .filter((l) => JSON.stringify(l).includes(podName))
        .map((l) => JSON.stringify(l));
      throw new Error(`${String(err)}; seen:\n${seen.join('\n')}\nagent:\n${agentLines.join('\n')}`);
    });
    assert.equal(waiting.crr.status?.phase, 'Recreating');
    // kubelet puts CrashLoopBackOff into the pod status only in the sync that ends the wait: the agent says it first
    assert.match(
      waiting.crr.status.containerRecreateStates![0]!.message!,
      /^waiting for kubelet's crash-loop back-off: kubelet restarted this container \d+ s before \(restart 1\)/,
    );
    assert.equal(
      waiting.restartCount,
      containerStatus(before, 'app').restartCount + 1,
      'said while kubelet holds the container (not restarted a second time yet)',
    );
    const done = await waitCompleted(stack, again, 90_000);
    const waitedMs = Date.now() - againCreatedMs;
    assert.deepEqual(done.status?.containerRecreateStates, [{ name: 'app', phase: 'Succeeded', isKilled: true }]);
    // Succeeded only once kubelet has started the container again, after its 10 s back-off
    assert.ok(waitedMs >= 10_000, `completed ${waitedMs} ms after its creation`);
    // kubelet's status shows the new instance a little after the agent saw it in the runtime
    await waitFor(
      () =>
        getPod(stack, podName).then((p) => {
          const app = p && containerStatus(p, 'app');
          return app?.state?.running && app.restartCount === containerStatus(before, 'app').restartCount + 2;
        }),
      { timeoutMs: 15_000, message: 'app running again, restarted twice in all' },
    );
    const events = await stack.client.list<KubeObject & { reason?: string; involvedObject?: { name?: string } }>(
      CoreResources.events,
      { namespace: NAMESPACE },
    );
    assert.ok(
      events.items.some((e) => e.reason === 'BackOff' && e.involvedObject?.name === podName),
      "kubelet's BackOff event on the pod",
    );
  });
});
