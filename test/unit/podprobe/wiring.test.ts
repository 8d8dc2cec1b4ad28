// emulator: an API server inside the unit-test process (npm run test:unit has no cluster), one per test file
// The probe controllers as kruise-controller runs them (startControllers: informers, indexes, handlers) against the
// in-process API emulator with deploy/crds: a Node gets its NodePodProbe, a marker's probes reach it for the pod it
// selects, a result the agent would write becomes the pod's condition and labels, and deleting the marker takes its
// probes and marks back before the finalizer goes.
import assert from 'node:assert/strict';
import { NODE_POD_PROBES, type NodePodProbe } from '../../../src/api/nodepodprobe.js';
import { POD_PROBE_MARKERS, type PodProbeMarker } from '../../../src/api/podprobemarker.js';
import type { WireNode, WirePod } from '../../../src/api/wire.js';
import { startControllers, type RunningControllers } from '../../../src/controller/controllers.js';
import { controllerMetrics } from '../../../src/controller/shared/metrics.js';
import { EventRecorder } from '../../../src/kube/event-recorder.js';
import { isNotFound } from '../../../src/kube/errors.js';
import { CoreResources } from '../../../src/kube/resource.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { createRegistry } from '../../../src/observability/metrics.js';
import { systemClock } from '../../../src/util/clock.js';
import { startEmulatorWithCrds, type EmulatorWithCrds } from '../../support/emulator-with-crds.js';
import { waitFor } from '../../support/wait.js';
import { marker } from './support.js';

const NS = 'default';

describe('probe controllers (kruise-controller wiring, emulator)', function () {
  this.timeout(60_000);
  let env: EmulatorWithCrds;
  let running: RunningControllers;

  before(async () => {
    env = await startEmulatorWithCrds();
    const events = new EventRecorder(env.client, { component: 'kruise-controller' });
    running = startControllers(
      {
        nodeImageCreationDelayMs: 60_000,
        nodeImageResponseTimeoutMs: 600_000,
        nodeImageWorkers: 1,
        imagePullJobWorkers: 1,
        imageListPullJobWorkers: 1,
        defaultTagTtlSeconds: 300,
      },
      {
        client: env.client,
        events,
        clock: systemClock,
        logger: silentLogger,
        metrics: controllerMetrics(createRegistry()),
      },
    );
    await running.synced;
  });
  after(async () => {
    await running?.stop();
    await env?.close();
  });

  it('probes a selected pod, marks its result, and takes everything back when the marker goes', async () => {
    const { client } = env;
    await client.create<WireNode>(CoreResources.nodes, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'node-a' },
    });
    await waitFor(() => client.get<NodePodProbe>(NODE_POD_PROBES, 'node-a'), { message: 'the NodePodProbe' });

    const created = await client.create<WirePod>(
      CoreResources.pods,
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p1', namespace: NS, labels: { app: 'game' } },
        spec: { nodeName: 'node-a', containers: [{ name: 'main', image: 'busybox' }] },
      },
      { namespace: NS },
    );
    await client.patch(
      CoreResources.pods,
      'p1',
      { status: { phase: 'Running', podIP: '10.1.2.3', conditions: [{ type: 'Initialized', status: 'True' }] } },
      { type: 'merge', namespace: NS, subresource: 'status' },
    );
    const m = marker('m', {}, false);
    await client.create<PodProbeMarker>(
      POD_PROBE_MARKERS,
      { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'PodProbeMarker', ...m, metadata: { name: 'm', namespace: NS } },
      { namespace: NS },
    );

    const npp = await waitFor(
      async () => {
        const n = await client.get<NodePodProbe>(NODE_POD_PROBES, 'node-a');
        return n.spec?.podProbes?.[0]?.probes?.length ? n : undefined;
      },
      { message: 'the probes in the NodePodProbe' },
    );
    assert.deepEqual(
      npp.spec?.podProbes?.map((e) => [e.name, e.uid, e.IP, e.probes?.map((p) => p.name)]),
      [['p1', created.metadata?.uid, '10.1.2.3', ['m#healthy']]],
    );
    await waitFor(
      async () =>
        (await client.get<PodProbeMarker>(POD_PROBE_MARKERS, 'm', { namespace: NS })).status?.matchedPods === 1,
      { message: 'matchedPods 1' },
    );

    // what the agent writes after a successful run
    await client.patch(
      NODE_POD_PROBES,
      'node-a',
      {
        status: {
          podProbeStatuses: [
            {
              name: 'p1',
              namespace: NS,
              uid: created.metadata?.uid,
              probeStates: [
                {
                  name: 'm#healthy',
                  state: 'Succeeded',
                  lastProbeTime: '2026-01-01T00:00:00Z',
                  lastTransitionTime: '2026-01-01T00:00:00Z',
                  message: 'ok',
                },
              ],
            },
          ],
        },
      },
      { type: 'merge', subresource: 'status' },
    );
    const marked = await waitFor(
      async () => {
        const p = await client.get<WirePod>(CoreResources.pods, 'p1', { namespace: NS });
        const c = p.status?.conditions?.find((x) => x.type === 'game.kruise.io/healthy');
        return c?.status === 'True' && p.metadata?.labels?.['gameserver-state'] === 'ready' ? p : undefined;
      },
      { message: 'the condition and the label on the pod' },
    );
    assert.equal(marked.metadata?.annotations?.['game/ok'], 'yes');

    await client.delete(POD_PROBE_MARKERS, 'm', { namespace: NS });
    await waitFor(
      async () => {
        try {
          await client.get(POD_PROBE_MARKERS, 'm', { namespace: NS });
          return false;
        } catch (err) {
          return isNotFound(err);
        }
      },
      { message: 'the marker gone (finalizer removed)' },
    );
    const after = await client.get<NodePodProbe>(NODE_POD_PROBES, 'node-a');
    assert.equal(after.spec?.podProbes, undefined);
    const pod = await client.get<WirePod>(CoreResources.pods, 'p1', { namespace: NS });
    assert.equal(pod.metadata?.labels?.['gameserver-state'], undefined);
    assert.equal(
      pod.status?.conditions?.find((c) => c.type === 'game.kruise.io/healthy'),
      undefined,
    );
  });
});
