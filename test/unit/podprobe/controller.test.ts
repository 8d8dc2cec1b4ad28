// emulator: an API server inside the unit-test process (npm run test:unit has no cluster), for the status patches
// The custom probes' controller against the in-process API emulator (CRDs applied), a fake CRI and a FakeClock:
// it follows its own NodePodProbe's spec, coalesces results into few status writes, writes nothing when nothing
// changed, drops what left the spec, and sends pod events on state changes.
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { NODE_POD_PROBES, type NodePodProbe, type PodProbe } from '../../../src/api/nodepodprobe.js';
import { PodProbeController } from '../../../src/daemon/podprobe/controller.js';
import { podProbeMetrics } from '../../../src/daemon/podprobe/metrics.js';
import type { KubeClient, KubeObject } from '../../../src/kube/index.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { FakeClock } from '../../../src/util/clock.js';
import { startEmulatorWithCrds, type EmulatorWithCrds } from '../../support/emulator-with-crds.js';
import { waitFor } from '../../support/wait.js';
import { FakeContainerRuntime } from '../containerrecreate/fake-runtime.js';

let seq = 0;

class RecordedEvents {
  readonly events: { pod: string; type: string; reason: string; message: string }[] = [];
  event(obj: KubeObject, type: string, reason: string, message: string): void {
    this.events.push({ pod: obj.metadata?.name ?? '', type, reason, message });
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

describe('podprobe controller (emulator + fake runtime)', function () {
  let env: EmulatorWithCrds;
  let client: KubeClient;
  let controller: PodProbeController | undefined;

  before(async () => {
    env = await startEmulatorWithCrds();
    client = env.client;
  });
  after(async () => {
    await env.close();
  });
  afterEach(async () => {
    await controller?.stop();
    controller = undefined;
  });

  function podProbe(i: number, probeSpec: PodProbe['probes'] = undefined): PodProbe {
    return {
      name: `pod-${i}`,
      namespace: 'ns',
      uid: `uid-${i}`,
      IP: '10.0.0.1',
      probes: probeSpec ?? [
        { name: 'ppm#healthy', containerName: 'main', probe: { exec: { command: ['check'] }, periodSeconds: 10 } },
      ],
    };
  }

  async function setup(pods: number) {
    const node = `probe-node-${++seq}`;
    const clock = new FakeClock();
    const runtime = new FakeContainerRuntime();
    const failing = new Set<string>();
    runtime.execResult = (id) =>
      Promise.resolve(failing.has(id) ? { exit: 1, stdout: 'down' } : { exit: 0, stdout: 'up' });
    const containers = [];
    for (let i = 0; i < pods; i++) {
      const c = runtime.add(`uid-${i}`, 'main');
      c.startedNs = BigInt(clock.now() - 60_000) * 1_000_000n;
      containers.push(c);
    }
    await client.create<NodePodProbe>(NODE_POD_PROBES, {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'NodePodProbe',
      metadata: { name: node },
      spec: { podProbes: Array.from({ length: pods }, (_, i) => podProbe(i)) },
    });
    const events = new RecordedEvents();
    const registry = new Registry();
    controller = new PodProbeController({
      nodeName: node,
      client,
      runtime: () => Promise.resolve(runtime),
      clock,
      logger: silentLogger,
      metrics: podProbeMetrics(registry),
      statusWindowMs: 1000,
      random: () => 0,
      events,
    });
    controller.start();
    const started = controller;
    await waitFor(() => started.workerCount === pods, { message: 'workers for the spec' });
    const statusPatches = (): number =>
      env.api.requestCount({
        method: 'PATCH',
        pathPrefix: `/apis/apps.kruise.io/v1alpha1/nodepodprobes/${node}/status`,
      });
    const read = () => client.get<NodePodProbe>(NODE_POD_PROBES, node);
    return { node, clock, runtime, failing, containers, events, registry, statusPatches, read };
  }

  it('coalesces the first results of many probes into one write, then writes nothing while nothing changes', async () => {
    const t = await setup(5);
    await t.clock.advance(0); // every probe runs (jitter 0): Unknown, then Succeeded
    await waitFor(() => t.events.events.length === 5, { message: 'five results' });
    assert.equal(t.statusPatches(), 0, 'nothing written before the window ends');
    await t.clock.advance(1000);
    await waitFor(() => t.statusPatches() === 1, { message: 'one write' });
    const npp = await waitFor(async () => {
      const o = await t.read();
      return o.status?.podProbeStatuses?.length === 5 ? o : undefined;
    });
    const at = new Date(t.clock.now() - 1000).toISOString().replace('.000Z', 'Z');
    assert.deepEqual(npp.status!.podProbeStatuses![0], {
      name: 'pod-0',
      namespace: 'ns',
      uid: 'uid-0',
      probeStates: [
        { name: 'ppm#healthy', state: 'Succeeded', lastProbeTime: at, lastTransitionTime: at, message: 'up' },
      ],
    });
    assert.deepEqual(
      t.events.events.map((e) => [e.type, e.reason, e.message]),
      Array.from({ length: 5 }, () => ['Normal', 'KruiseProbeSucceeded', 'up']),
    );
    for (let i = 0; i < 6; i++) await t.clock.advance(10_000); // 30 more runs, all as before
    await waitFor(() => t.runtime.calls.filter((c) => c.method === 'ExecSync').length >= 35);
    await t.clock.advance(2000);
    assert.equal(t.statusPatches(), 1, 'no write without a change');
    assert.match(await t.registry.metrics(), /kruise_daemon_pod_probe_status_writes_total\{outcome="ok"\} 1/);
    assert.match(await t.registry.metrics(), /^kruise_daemon_pod_probe_workers 5$/m);
  });

  it('writes a state change with its transition time and a KruiseProbeFailed event', async () => {
    const t = await setup(2);
    await t.clock.advance(0);
    await t.clock.advance(1000);
    await waitFor(() => t.statusPatches() === 1);
    const firstAt = new Date(t.clock.now() - 1000).toISOString().replace('.000Z', 'Z');
    t.failing.add(t.containers[1]!.id);
    await t.clock.advance(9000); // the next run, at 10 s
    await waitFor(() => t.events.events.length === 3);
    assert.deepEqual(t.events.events[2], {
      pod: 'pod-1',
      type: 'Normal',
      reason: 'KruiseProbeFailed',
      message: 'down',
    });
    await t.clock.advance(1000);
    await waitFor(() => t.statusPatches() === 2);
    const failedAt = new Date(t.clock.now() - 1000).toISOString().replace('.000Z', 'Z');
    const npp = await waitFor(async () => {
      const o = await t.read();
      return o.status?.podProbeStatuses?.[1]?.probeStates?.[0]?.state === 'Failed' ? o : undefined;
    });
    assert.deepEqual(npp.status!.podProbeStatuses![1]!.probeStates![0], {
      name: 'ppm#healthy',
      state: 'Failed',
      lastProbeTime: failedAt,
      lastTransitionTime: failedAt,
      message: 'down',
    });
    assert.equal(npp.status!.podProbeStatuses![0]!.probeStates![0]!.lastTransitionTime, firstAt, 'the other kept');
  });

  it('a pod removed from the spec: its worker stops, its status goes, nothing more runs in it', async () => {
    const t = await setup(3);
    await t.clock.advance(0);
    await t.clock.advance(1000);
    await waitFor(async () => (await t.read()).status?.podProbeStatuses?.length === 3);
    const current = await t.read();
    await client.update<NodePodProbe>(NODE_POD_PROBES, {
      ...current,
      spec: { podProbes: [podProbe(0), podProbe(1)] },
    });
    await waitFor(() => controller!.workerCount === 2, { message: 'the worker of pod-2 stopped' });
    await t.clock.advance(1000);
    const npp = await waitFor(async () => {
      const o = await t.read();
      return o.status?.podProbeStatuses?.length === 2 ? o : undefined;
    });
    assert.deepEqual(
      npp.status!.podProbeStatuses!.map((p) => p.name),
      ['pod-0', 'pod-1'],
    );
    const execsIn = (id: string): number =>
      t.runtime.calls.filter((c) => c.method === 'ExecSync' && c.id === id).length;
    const before = execsIn(t.containers[2]!.id);
    for (let i = 0; i < 3; i++) await t.clock.advance(10_000);
    await waitFor(() => execsIn(t.containers[0]!.id) >= 4);
    assert.equal(execsIn(t.containers[2]!.id), before);
  });

  it('stop() ends every worker and timer', async () => {
    const t = await setup(2);
    await t.clock.advance(0);
    await controller!.stop();
    controller = undefined;
    assert.equal(t.clock.pendingTimers(), 0, 'no timer left');
    const patches = t.statusPatches();
    await t.clock.advance(60_000);
    assert.equal(t.statusPatches(), patches, 'nothing written after stop');
  });
});
