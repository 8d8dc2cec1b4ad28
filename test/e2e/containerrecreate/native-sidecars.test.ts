// Native sidecars (init containers with restartPolicy Always, KEP-753) on the real local cluster's default cell: our
// controller (CRR, launch-priority and PodProbeMarker webhooks and controllers) on the host, the agent inside the
// first node, that node's real kubelet starting every sidecar the agent stops again. A CRR recreates a sidecar (found
// in initContainerStatuses, whatever the pod's restartPolicy) in the CRR's order; env-from-metadata restarts a
// sidecar; a pod with a sidecar and prioritized containers starts in order and becomes Ready; a probe named for a
// sidecar runs in it and sets the pod's condition. OpenKruise v1.9.1 refuses such a CRR (no containerStatus).
import assert from 'node:assert/strict';
import { RUNTIME_CONTAINERS_META_ANNOTATION } from '../../../src/api/constants.js';
import { POD_PROBE_MARKERS } from '../../../src/api/podprobemarker.js';
import type { WireContainer, WireContainerStatus } from '../../../src/api/wire.js';
import { ApiError } from '../../../src/kube/errors.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { CoreResources } from '../../../src/kube/resource.js';
import { waitFor } from '../../support/wait.js';
import { getBarrier, runtimeStartTimes } from '../launchpriority/stack.js';
import { conditionOf, deleteMarkers, execProbe, markerManifest } from '../podprobe/stack.js';
import {
  bareId,
  containerStatus,
  createCrr,
  getPod,
  SLEEP_FOREVER,
  startCrrStack,
  waitCompleted,
  type CrrStack,
  type PodObject,
  startInPlaceUpdate,
} from './stack.js';

const NAMESPACE = 'e2e-native-sidecars';

interface ContainerDef {
  name: string;
  command?: string[];
  preStop?: string[];
  env?: WireContainer['env'];
}

describe('native sidecars e2e (CRR, env from metadata, launch priority, custom probes)', function () {
  this.timeout(240_000);
  let stack: CrrStack;
  let image: string;
  let seq = 0;

  before(async () => {
    stack = await startCrrStack({ namespace: NAMESPACE });
    image = stack.cluster.images.busybox1;
  });
  after(async () => {
    if (!stack) return;
    await deleteMarkers(stack).catch(() => undefined);
    await stack.close();
  });

  const container = (c: ContainerDef): WireContainer => ({
    name: c.name,
    image,
    command: c.command ?? SLEEP_FOREVER,
    ...(c.env === undefined ? {} : { env: c.env }),
    ...(c.preStop ? { lifecycle: { preStop: { exec: { command: c.preStop } } } } : {}),
  });

  /** A pod of the agent's node: plain init containers, then sidecars, then the regular containers. */
  function pod(
    shape: { init?: ContainerDef[]; sidecars: ContainerDef[]; containers: ContainerDef[] },
    extra: {
      name?: string;
      restartPolicy?: string;
      annotations?: Record<string, string>;
      labels?: Record<string, string>;
      readinessGates?: Array<{ conditionType: string }>;
    } = {},
  ): PodObject {
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: extra.name ?? `sidecar-pod-${++seq}`,
        namespace: NAMESPACE,
        ...(extra.annotations === undefined ? {} : { annotations: extra.annotations }),
        ...(extra.labels === undefined ? {} : { labels: extra.labels }),
      },
      spec: {
        nodeName: stack.node.name,
        terminationGracePeriodSeconds: 5,
        ...(extra.restartPolicy === undefined ? {} : { restartPolicy: extra.restartPolicy }),
        ...(extra.readinessGates === undefined ? {} : { readinessGates: extra.readinessGates }),
        initContainers: [
          ...(shape.init ?? []).map((c) => ({ ...container(c), command: c.command ?? ['true'] })),
          ...shape.sidecars.map((c) => ({ ...container(c), restartPolicy: 'Always' })),
        ],
        containers: shape.containers.map(container),
      },
    };
  }

  function sidecarStatus(p: PodObject | undefined, name: string): WireContainerStatus | undefined {
    return p?.status?.initContainerStatuses?.find((s) => s.name === name);
  }

  /** Every regular container and every sidecar running and ready, with a pod IP. */
  function allRunning(p: PodObject | undefined, shape: PodObject): boolean {
    const sidecars = (shape.spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always');
    const regular = p?.status?.containerStatuses ?? [];
    return (
      !!p?.status?.podIP &&
      regular.length === (shape.spec?.containers.length ?? 0) &&
      regular.every((s) => s.ready && s.state?.running) &&
      sidecars.every((c) => {
        const s = sidecarStatus(p, c.name);
        return !!s?.ready && !!s.state?.running;
      })
    );
  }

  async function run(manifest: PodObject, timeoutMs = 90_000): Promise<PodObject> {
    await stack.client.create(CoreResources.pods, manifest, { namespace: NAMESPACE });
    const name = manifest.metadata!.name!;
    return waitFor(() => getPod(stack, name).then((p) => (allRunning(p, manifest) ? p : undefined)), {
      timeoutMs,
      message: `pod ${name}: every container and sidecar running and ready`,
    });
  }

  const condition = (p: PodObject | undefined, type: string) => p?.status?.conditions?.find((c) => c.type === type);

  async function crrDenial(podName: string, containers: string[]): Promise<string> {
    const err = await createCrr(stack, `denied-${++seq}`, {
      podName,
      containers: containers.map((name) => ({ name })),
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof ApiError, `the CRR naming ${containers.join(', ')} was refused: ${String(err)}`);
    return err.message;
  }

  it('a CRR recreates a sidecar of a restartPolicy Never pod: preStop, then restartCount + 1, the regular container untouched', async () => {
    const before = await run(
      pod(
        {
          sidecars: [{ name: 'proxy', preStop: ['sh', '-c', 'echo PRESTOP > /proc/1/fd/1'] }],
          containers: [{ name: 'app' }],
        },
        { restartPolicy: 'Never' },
      ),
    );
    const podName = before.metadata!.name!;
    const proxyBefore = sidecarStatus(before, 'proxy')!;
    const { status: oldProxy } = await stack.cri.containerStatus({ container_id: bareId(proxyBefore.containerID) });
    const name = `crr-sidecar-${seq}`;
    const created = await createCrr(stack, name, { podName, containers: [{ name: 'proxy' }] });
    assert.deepEqual(created.spec.containers[0]?.statusContext, {
      containerID: proxyBefore.containerID,
      restartCount: proxyBefore.restartCount,
    });
    assert.deepEqual(created.spec.containers[0]?.preStop, {
      exec: { command: ['sh', '-c', 'echo PRESTOP > /proc/1/fd/1'] },
    });
    const done = await waitCompleted(stack, name);
    assert.deepEqual(done.status?.containerRecreateStates, [{ name: 'proxy', phase: 'Succeeded', isKilled: true }]);
    const after = (await getPod(stack, podName))!;
    const proxyAfter = sidecarStatus(after, 'proxy')!;
    assert.notEqual(proxyAfter.containerID, proxyBefore.containerID);
    assert.equal(proxyAfter.restartCount, proxyBefore.restartCount + 1);
    assert.ok(proxyAfter.ready && proxyAfter.state?.running, 'the new sidecar runs and is ready');
    assert.equal(containerStatus(after, 'app').containerID, containerStatus(before, 'app').containerID);
    assert.equal(containerStatus(after, 'app').restartCount, containerStatus(before, 'app').restartCount);
    assert.equal(after.metadata?.uid, before.metadata?.uid);
    const log = await stack.readNodeFile(oldProxy!.log_path);
    const [pre, term] = [log.indexOf('PRESTOP'), log.indexOf('TERM')];
    assert.ok(pre >= 0 && term > pre, `the sidecar's preStop ran before its SIGTERM: ${JSON.stringify(log)}`);
    await waitFor(() => getPod(stack, podName).then((p) => condition(p, 'Ready')?.status === 'True'), {
      timeoutMs: 30_000,
      message: 'pod Ready after the sidecar restart',
    });

    // in the same Never pod the regular container is still refused (kubelet would not start it again)
    const message = await crrDenial(podName, ['proxy', 'app']);
    assert.match(message, /spec\.containers\[1\]\.name: .*container app: the Pod's restartPolicy is Never/);
  });

  it('unreadyGracePeriodSeconds on a sidecar: the pod is not Ready before the stop, the sidecar recreated, Ready again', async () => {
    const grace = 2;
    const created = await run(
      pod(
        { sidecars: [{ name: 'proxy' }], containers: [{ name: 'app' }] },
        { readinessGates: [{ conditionType: 'KruisePodReady' }] },
      ),
    );
    const podName = created.metadata!.name!;
    // what OpenKruise's pod webhook starts a gated pod with: KruisePodReady True; kubelet then reports it Ready
    await stack.client.patch(
      CoreResources.pods,
      podName,
      { status: { conditions: [...(created.status?.conditions ?? []), { type: 'KruisePodReady', status: 'True' }] } },
      { type: 'merge', namespace: NAMESPACE, subresource: 'status' },
    );
    const before = await waitFor(
      () => getPod(stack, podName).then((p) => (condition(p, 'Ready')?.status === 'True' ? p : undefined)),
      { message: 'pod Ready with its KruisePodReady gate True' },
    );
    const name = `crr-sidecar-unready-${seq}`;
    await createCrr(stack, name, {
      podName,
      containers: [{ name: 'proxy' }],
      strategy: { unreadyGracePeriodSeconds: grace },
    });
    const notReady = await waitFor(
      () => getPod(stack, podName).then((p) => (condition(p, 'Ready')?.status === 'False' ? p : undefined)),
      { message: 'pod not Ready' },
    );
    assert.equal(condition(notReady, 'KruisePodReady')?.status, 'False');
    assert.equal(sidecarStatus(notReady, 'proxy')!.containerID, sidecarStatus(before, 'proxy')!.containerID);
    const done = await waitCompleted(stack, name);
    assert.deepEqual(done.status?.containerRecreateStates, [{ name: 'proxy', phase: 'Succeeded', isKilled: true }]);
    const acquired = done.metadata?.annotations?.['crr.apps.kruise.io/unready-acquired'];
    assert.ok(acquired, 'the unready-acquired time was stamped');
    const stopping = stack.agent.logs.find((l) => l.msg === 'stopping container' && String(l.crr).endsWith(`/${name}`));
    const stoppingMs = typeof stopping?.time === 'string' ? Date.parse(stopping.time) : Number(stopping?.time);
    assert.ok(stoppingMs >= Date.parse(acquired) + grace * 1000, `stopped ${grace} s after ${acquired}`);
    const after = await waitFor(
      () => getPod(stack, podName).then((p) => (condition(p, 'Ready')?.status === 'True' ? p : undefined)),
      { timeoutMs: 30_000, message: 'pod Ready again' },
    );
    assert.equal(sidecarStatus(after, 'proxy')!.restartCount, sidecarStatus(before, 'proxy')!.restartCount + 1);
    assert.equal(containerStatus(after, 'app').containerID, containerStatus(before, 'app').containerID);
  });

  it('refuses a CRR naming a plain init container, saying why', async () => {
    const p = await run(
      pod({ init: [{ name: 'setup' }], sidecars: [{ name: 'proxy' }], containers: [{ name: 'app' }] }),
    );
    const message = await crrDenial(p.metadata!.name!, ['setup']);
    assert.match(
      message,
      /spec\.containers\[0\]\.name: not allowed to recreate init container setup: it has no restartPolicy Always/,
    );
  });

  it("orderedRecreate follows the CRR's order, not kubelet's: app first, then the sidecar", async () => {
    const before = await run(pod({ sidecars: [{ name: 'proxy' }], containers: [{ name: 'app' }] }));
    const podName = before.metadata!.name!;
    const name = `crr-mixed-${seq}`;
    await createCrr(stack, name, {
      podName,
      containers: [{ name: 'app' }, { name: 'proxy' }],
      strategy: { orderedRecreate: true },
    });
    const done = await waitCompleted(stack, name);
    assert.deepEqual(
      done.status?.containerRecreateStates?.map((s) => [s.name, s.phase]),
      [
        ['app', 'Succeeded'],
        ['proxy', 'Succeeded'],
      ],
    );
    const after = (await getPod(stack, podName))!;
    const newApp = bareId(containerStatus(after, 'app').containerID);
    const oldProxy = bareId(sidecarStatus(before, 'proxy')!.containerID);
    const newProxy = bareId(sidecarStatus(after, 'proxy')!.containerID);
    assert.notEqual(newProxy, oldProxy);
    assert.equal(sidecarStatus(after, 'proxy')!.restartCount, sidecarStatus(before, 'proxy')!.restartCount + 1);
    assert.equal(containerStatus(after, 'app').restartCount, containerStatus(before, 'app').restartCount + 1);
    const started = async (id: string) =>
      BigInt((await stack.cri.containerStatus({ container_id: id })).status?.started_at ?? 0);
    const { status: oldProxyStatus } = await stack.cri.containerStatus({ container_id: oldProxy });
    const appStarted = await started(newApp);
    assert.ok(
      BigInt(oldProxyStatus?.finished_at ?? 0) > appStarted,
      'the sidecar was stopped after the new app started',
    );
    assert.ok((await started(newProxy)) > appStarted, 'the new sidecar started after the new app');
  });

  it('env from metadata: a sidecar whose env comes from an annotation is restarted with the new value; app untouched', async () => {
    const envFrom = (key: string): WireContainer['env'] => [
      { name: 'FLAVOUR', valueFrom: { fieldRef: { fieldPath: `metadata.annotations['${key}']` } } },
    ];
    const before = await run(
      pod(
        {
          sidecars: [{ name: 'proxy', env: envFrom('proxy-flavour') }],
          containers: [{ name: 'app', env: envFrom('app-flavour') }],
        },
        {
          annotations: { 'proxy-flavour': 'old', 'app-flavour': 'same' },
          readinessGates: [{ conditionType: 'InPlaceUpdateReady' }],
        },
      ),
    );
    const podName = before.metadata!.name!;
    const meta = await waitFor(
      () =>
        getPod(stack, podName).then((p) => {
          const raw = p?.metadata?.annotations?.[RUNTIME_CONTAINERS_META_ANNOTATION];
          const parsed = raw ? (JSON.parse(raw) as { containers: Array<{ name: string }> }) : undefined;
          return parsed && parsed.containers.length === 2 ? parsed : undefined;
        }),
      { timeoutMs: 30_000, message: 'runtime-containers-meta with app and the sidecar' },
    );
    assert.deepEqual(
      meta.containers.map((c) => c.name),
      ['app', 'proxy'],
    );
    await startInPlaceUpdate(stack, before, { annotations: { 'proxy-flavour': 'new' } });
    const after = await waitFor(
      () =>
        getPod(stack, podName).then((p) => {
          const s = sidecarStatus(p, 'proxy');
          return s && s.containerID !== sidecarStatus(before, 'proxy')!.containerID && s.ready ? p : undefined;
        }),
      { timeoutMs: 60_000, message: 'the sidecar restarted and ready' },
    );
    assert.equal(sidecarStatus(after, 'proxy')!.restartCount, sidecarStatus(before, 'proxy')!.restartCount + 1);
    assert.equal(containerStatus(after, 'app').containerID, containerStatus(before, 'app').containerID);
    const res = await stack.cri.execSync({
      container_id: bareId(sidecarStatus(after, 'proxy')!.containerID),
      cmd: ['sh', '-c', 'echo "$FLAVOUR"'],
      timeout: 5,
    });
    assert.equal(res.stdout.toString('utf8').trim(), 'new');
  });

  it('launch priority: a sidecar (its own priority and barrier env ignored) and two prioritized containers start in order; the pod is Ready', async () => {
    const name = `lp-sidecar-${++seq}`;
    await stack.client.create(
      CoreResources.pods,
      pod(
        {
          sidecars: [
            {
              name: 'proxy',
              env: [
                { name: 'KRUISE_CONTAINER_PRIORITY', value: '-100' },
                {
                  name: 'KRUISE_CONTAINER_BARRIER',
                  valueFrom: { configMapKeyRef: { name: `${name}-barrier`, key: 'p_-100' } },
                },
              ],
            },
          ],
          containers: [
            { name: 'low', env: [{ name: 'KRUISE_CONTAINER_PRIORITY', value: '-5' }] },
            { name: 'high', env: [{ name: 'KRUISE_CONTAINER_PRIORITY', value: '10' }] },
          ],
        },
        { name },
      ),
      { namespace: NAMESPACE },
    );
    const created = (await getPod(stack, name))!;
    assert.deepEqual(
      created.spec?.initContainers?.[0]?.env?.map((e) => e.name),
      ['KRUISE_CONTAINER_PRIORITY'],
    );
    assert.ok(
      created.spec?.containers.every((c) => c.env?.some((e) => e.name === 'KRUISE_CONTAINER_BARRIER')),
      'the regular containers got their barrier',
    );
    const ready = await waitFor(
      () =>
        getPod(stack, name).then((p) =>
          condition(p, 'Ready')?.status === 'True' &&
          p?.metadata?.annotations?.['apps.kruise.io/container-launch-priority-completed'] === 'true'
            ? p
            : undefined,
        ),
      { timeoutMs: 90_000, message: `pod ${name} Ready, launch priority completed` },
    );
    const times = await runtimeStartTimes(stack.cri, ready.metadata!.uid!);
    const order = [...times.entries()].sort((a, b) => (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0)).map(([n]) => n);
    assert.deepEqual(order, ['proxy', 'high', 'low']);
    const barrier = await getBarrier(stack, name);
    assert.deepEqual(Object.keys(barrier?.data ?? {}).sort(), ['p_-5', 'p_10']);
  });

  it('launch priority: a sidecar given a barrier env past the webhook is released first, so the pod cannot deadlock', async () => {
    const name = `lp-init-barrier-${++seq}`;
    // no container asks for a priority: the webhook never sees this pod, the agent alone decides
    await run(
      pod(
        {
          sidecars: [
            {
              name: 'proxy',
              env: [
                {
                  name: 'KRUISE_CONTAINER_BARRIER',
                  valueFrom: { configMapKeyRef: { name: `${name}-barrier`, key: 'p_0' } },
                },
              ],
            },
          ],
          containers: [{ name: 'a' }, { name: 'b' }],
        },
        { name },
      ),
    );
    const barrier = await getBarrier(stack, name);
    assert.deepEqual(Object.keys(barrier?.data ?? {}), ['p_0']);
    const warned = await waitFor(
      async () => {
        const events = await stack.client.list<
          KubeObject & { reason?: string; message?: string; involvedObject?: { name?: string } }
        >(CoreResources.events, { namespace: NAMESPACE });
        return events.items.find((e) => e.reason === 'LaunchPriorityBarrierInvalid' && e.involvedObject?.name === name);
      },
      { timeoutMs: 30_000, message: 'a warning event saying the sidecar barrier is released first' },
    );
    assert.match(warned.message ?? '', /init container proxy: .*released with the first level/);
  });

  it('a PodProbeMarker probe naming a sidecar runs in the sidecar and sets the pod condition True, then False', async () => {
    const conditionType = 'game.kruise.io/sidecar-ok';
    const p = await run(
      pod(
        {
          sidecars: [
            { name: 'proxy', command: ['sh', '-c', 'touch /tmp/ok; trap "exit 0" TERM; while true; do sleep 1; done'] },
          ],
          containers: [{ name: 'app' }],
        },
        { labels: { probe: 'sidecar' } },
      ),
    );
    const podName = p.metadata!.name!;
    await stack.client.create(
      POD_PROBE_MARKERS,
      markerManifest(NAMESPACE, 'sidecar-probe', { probe: 'sidecar' }, [
        execProbe({
          name: 'ok',
          containerName: 'proxy',
          command: ['test', '-f', '/tmp/ok'],
          podConditionType: conditionType,
        }),
      ]),
      { namespace: NAMESPACE },
    );
    await waitFor(() => getPod(stack, podName).then((x) => conditionOf(x, conditionType)?.status === 'True'), {
      timeoutMs: 60_000,
      message: `${conditionType} True (the file exists in the sidecar only)`,
    });
    await stack.cri.execSync({
      container_id: bareId(sidecarStatus(p, 'proxy')!.containerID),
      cmd: ['rm', '/tmp/ok'],
      timeout: 5,
    });
    await waitFor(() => getPod(stack, podName).then((x) => conditionOf(x, conditionType)?.status === 'False'), {
      timeoutMs: 60_000,
      message: `${conditionType} False once the sidecar's file is gone`,
    });
  });
});
