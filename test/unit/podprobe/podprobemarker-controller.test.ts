// The PodProbeMarker controller's reconcile against filled caches and a fake API: the finalizer first; the probes
// of selected, active, scheduled, Initialized pods written into their node's NodePodProbe (named ports as numbers,
// other markers' probes kept), nothing written when nothing changes; pods leaving the selector, recreated with a new
// uid, or on virtual-kubelet nodes; a deleted marker's probes and pod marks removed before its finalizer; a probe a
// pod cannot run reported on the marker; a conflict redone from a fresh read; 10,000 pods over 100 nodes in one write
// per node.
import assert from 'node:assert/strict';
import { NODE_POD_PROBE_CLEANUP_FINALIZER } from '../../../src/api/constants.js';
import { NODE_POD_PROBES, type NodePodProbe } from '../../../src/api/nodepodprobe.js';
import { POD_PROBE_MARKERS, type PodProbeMarker } from '../../../src/api/podprobemarker.js';
import type { WirePod } from '../../../src/api/wire.js';
import { EVENT_PROBE_NOT_APPLIED } from '../../../src/controller/podprobemarker/controller.js';
import { CoreResources } from '../../../src/kube/resource.js';
import { bench, emptyNpp, marker, node, pod } from './support.js';

const npps = 'nodepodprobes';

async function seed(
  t: ReturnType<typeof bench>,
  m: PodProbeMarker,
  pods: WirePod[],
  nodes = ['node-a'],
): Promise<void> {
  for (const n of nodes) {
    t.api.put(CoreResources.nodes, node(n));
    t.api.put(NODE_POD_PROBES, emptyNpp(n));
  }
  for (const p of pods) t.api.put(CoreResources.pods, p);
  t.api.put(POD_PROBE_MARKERS, m);
  await t.sync();
}

const nppOf = (t: ReturnType<typeof bench>, name: string): NodePodProbe =>
  t.api.read<NodePodProbe>(NODE_POD_PROBES, name)!;

describe('podprobemarker controller', () => {
  it('adds its finalizer first, then writes the probes of the pods it selects and its status', async () => {
    const t = bench();
    await seed(t, marker('m', {}, false), [pod('p1', 'node-a')]);
    await t.markers.reconcile('ns/m');
    assert.deepEqual(t.api.read<PodProbeMarker>(POD_PROBE_MARKERS, 'm', 'ns')?.metadata.finalizers, [
      NODE_POD_PROBE_CLEANUP_FINALIZER,
    ]);
    assert.equal(t.api.writesOf(npps).length, 0, 'no probes before the finalizer is there');
    await t.sync();
    await t.markers.reconcile('ns/m');
    assert.deepEqual(nppOf(t, 'node-a').spec?.podProbes, [
      {
        name: 'p1',
        namespace: 'ns',
        uid: 'uid-p1',
        IP: '10.0.0.1',
        probes: [
          {
            name: 'm#healthy',
            containerName: 'main',
            probe: { exec: { command: ['true'] }, periodSeconds: 5 },
            podProbeMarkerName: 'm',
          },
        ],
      },
    ]);
    assert.deepEqual(t.api.read<PodProbeMarker>(POD_PROBE_MARKERS, 'm', 'ns')?.status, {
      observedGeneration: 1,
      matchedPods: 1,
    });
    // once the caches show both writes, nothing more is written
    await t.sync();
    const before = t.api.writes.length;
    await t.markers.reconcile('ns/m');
    assert.equal(t.api.writes.length, before);
  });

  it('leaves out pods that are unlabelled, not Initialized, unscheduled, finished, terminating or elsewhere', async () => {
    const t = bench();
    const finished = pod('done', 'node-a');
    finished.status!.phase = 'Succeeded';
    const terminating = pod('going', 'node-a');
    terminating.metadata!.deletionTimestamp = '2026-01-01T00:00:00Z';
    const elsewhere = pod('other-ns', 'node-a');
    elsewhere.metadata!.namespace = 'other';
    await seed(t, marker(), [
      pod('p1', 'node-a'),
      pod('unlabelled', 'node-a', { labels: { app: 'web' } }),
      pod('init', 'node-a', { initialized: false }),
      pod('pending', ''),
      finished,
      terminating,
      elsewhere,
    ]);
    await t.markers.reconcile('ns/m');
    assert.deepEqual(
      nppOf(t, 'node-a').spec?.podProbes?.map((e) => e.name),
      ['p1'],
    );
    assert.equal(t.api.read<PodProbeMarker>(POD_PROBE_MARKERS, 'm', 'ns')?.status?.matchedPods, 1);
  });

  it('follows a selector change and a pod recreated under its name, keeping other markers\u2019 probes', async () => {
    const t = bench();
    await seed(t, marker(), [pod('p1', 'node-a'), pod('p2', 'node-a', { labels: { app: 'game', tier: 'x' } })]);
    // another marker's probe on p1
    const npp = nppOf(t, 'node-a');
    npp.spec = {
      podProbes: [
        {
          name: 'p1',
          namespace: 'ns',
          uid: 'uid-p1',
          probes: [
            {
              name: 'other#ping',
              containerName: 'main',
              probe: { tcpSocket: { port: 80 } },
              podProbeMarkerName: 'other',
            },
          ],
        },
      ],
    };
    t.api.put(NODE_POD_PROBES, npp);
    await t.sync();
    await t.markers.reconcile('ns/m');
    await t.sync();
    assert.deepEqual(
      nppOf(t, 'node-a').spec?.podProbes?.map((e) => [e.name, (e.probes ?? []).map((p) => p.name)]),
      [
        ['p1', ['other#ping', 'm#healthy']],
        ['p2', ['m#healthy']],
      ],
    );

    const narrowed = t.api.read<PodProbeMarker>(POD_PROBE_MARKERS, 'm', 'ns')!;
    narrowed.spec.selector = { matchLabels: { tier: 'x' } };
    narrowed.metadata.generation = 2;
    t.api.put(POD_PROBE_MARKERS, narrowed);
    await t.sync();
    await t.markers.reconcile('ns/m');
    await t.sync();
    assert.deepEqual(
      nppOf(t, 'node-a').spec?.podProbes?.map((e) => [e.name, (e.probes ?? []).map((p) => p.name)]),
      [
        ['p1', ['other#ping']],
        ['p2', ['m#healthy']],
      ],
    );

    // p2 deleted and recreated (new uid): the old uid's entry loses the marker's probes, the new one gets them
    t.api.put(
      CoreResources.pods,
      pod('p2', 'node-a', { labels: { app: 'game', tier: 'x' }, uid: 'uid-p2-new', ip: '10.0.0.9' }),
    );
    await t.sync();
    await t.markers.reconcile('ns/m');
    const entries = nppOf(t, 'node-a').spec?.podProbes ?? [];
    assert.deepEqual(
      entries.map((e) => [e.name, e.uid, e.IP]),
      [
        ['p1', 'uid-p1', '10.0.0.1'],
        ['p2', 'uid-p2-new', '10.0.0.9'],
      ],
    );
  });

  it('turns named ports into numbers and reports a probe a pod cannot run on the marker', async () => {
    const t = bench();
    const m = marker('m', {
      probes: [
        {
          name: 'http',
          containerName: 'main',
          probe: { httpGet: { path: '/healthz', port: 'http' } },
          podConditionType: 'game.kruise.io/http',
        },
        {
          name: 'tcp',
          containerName: 'main',
          probe: { tcpSocket: { port: 'admin' } },
          podConditionType: 'game.kruise.io/tcp',
        },
        {
          name: 'side',
          containerName: 'sidecar',
          probe: { exec: { command: ['true'] } },
          podConditionType: 'game.kruise.io/side',
        },
      ],
    });
    await seed(t, m, [pod('p1', 'node-a', { ports: [{ name: 'http', containerPort: 8080 }] })]);
    await t.markers.reconcile('ns/m');
    const probes = nppOf(t, 'node-a').spec?.podProbes?.[0]?.probes ?? [];
    assert.deepEqual(
      probes.map((p) => [p.name, p.probe.httpGet?.port]),
      [['m#http', 8080]],
    );
    assert.equal(m.spec.probes[0]?.probe.httpGet?.port, 'http', 'the marker itself is not changed');
    assert.equal(t.events.events.length, 1);
    const [event] = t.events.events;
    assert.equal(event?.reason, EVENT_PROBE_NOT_APPLIED);
    assert.equal(event?.type, 'Warning');
    assert.equal(
      event?.message,
      'probes left out: probe side: no container sidecar in 1 pod (e.g. ns/p1); ' +
        'probe tcp: no port "admin" in container main in 1 pod (e.g. ns/p1)',
    );
    // the same problems again, in one more pod: no second event
    t.api.put(CoreResources.pods, pod('p2', 'node-a', { ports: [{ name: 'http', containerPort: 8080 }] }));
    await t.sync();
    await t.markers.reconcile('ns/m');
    assert.equal(t.events.events.length, 1);
  });

  it('counts pods on virtual-kubelet nodes but writes no entry for them', async () => {
    const t = bench();
    await seed(t, marker(), [pod('p1', 'node-a'), pod('vk', 'vk-node')]);
    t.api.put(CoreResources.nodes, node('vk-node', { type: 'virtual-kubelet' }));
    await t.sync();
    await t.markers.reconcile('ns/m');
    assert.deepEqual(
      nppOf(t, 'node-a').spec?.podProbes?.map((e) => e.name),
      ['p1'],
    );
    assert.equal(t.api.read<PodProbeMarker>(POD_PROBE_MARKERS, 'm', 'ns')?.status?.matchedPods, 2);
  });

  it('redoes a write that met a conflict from a fresh read, keeping what the other writer put there', async () => {
    const t = bench();
    await seed(t, marker(), [pod('p1', 'node-a')]);
    // someone else wrote the NodePodProbe after the cache was filled
    const npp = nppOf(t, 'node-a');
    npp.spec = {
      podProbes: [
        {
          name: 'x',
          namespace: 'ns',
          uid: 'uid-x',
          probes: [{ name: 'other#a', containerName: 'c', probe: { exec: { command: ['a'] } } }],
        },
      ],
    };
    t.api.put(NODE_POD_PROBES, npp);
    await t.markers.reconcile('ns/m');
    assert.deepEqual(
      nppOf(t, 'node-a').spec?.podProbes?.map((e) => e.name),
      ['x', 'p1'],
    );
    assert.equal(await t.metrics.nodePodProbeConflicts.get().then((m) => m.values[0]?.value), 1);
  });

  it('when deleted, takes its probes out of every NodePodProbe and its marks off the pods, then drops its finalizer', async () => {
    const t = bench();
    await seed(t, marker(), [pod('p1', 'node-a'), pod('p2', 'node-b')], ['node-a', 'node-b']);
    await t.markers.reconcile('ns/m');
    // the results had been marked on p1 (labels, annotation, condition); p2 carries a user label of the same key
    const p1 = t.api.read<WirePod>(CoreResources.pods, 'p1', 'ns')!;
    p1.metadata!.labels = { ...p1.metadata!.labels, 'gameserver-state': 'ready', keep: 'me' };
    p1.metadata!.annotations = { 'game/ok': 'yes' };
    p1.status!.conditions!.push({ type: 'game.kruise.io/healthy', status: 'True' });
    t.api.put(CoreResources.pods, p1);
    const p2 = t.api.read<WirePod>(CoreResources.pods, 'p2', 'ns')!;
    p2.metadata!.labels = { ...p2.metadata!.labels, 'gameserver-state': 'user-set' };
    t.api.put(CoreResources.pods, p2);
    const deleting = t.api.read<PodProbeMarker>(POD_PROBE_MARKERS, 'm', 'ns')!;
    deleting.metadata.deletionTimestamp = '2026-01-01T00:01:00Z';
    t.api.put(POD_PROBE_MARKERS, deleting);
    await t.sync();
    await t.markers.reconcile('ns/m');
    assert.equal(nppOf(t, 'node-a').spec?.podProbes, undefined);
    assert.equal(nppOf(t, 'node-b').spec?.podProbes, undefined);
    const after = t.api.read<WirePod>(CoreResources.pods, 'p1', 'ns')!;
    assert.deepEqual(after.metadata?.labels, { app: 'game', keep: 'me' });
    assert.deepEqual(after.metadata?.annotations ?? {}, {});
    assert.deepEqual(
      after.status?.conditions?.map((c) => c.type),
      ['Initialized'],
    );
    assert.equal(
      t.api.read<WirePod>(CoreResources.pods, 'p2', 'ns')?.metadata?.labels?.['gameserver-state'],
      'user-set',
    );
    assert.deepEqual(t.api.read<PodProbeMarker>(POD_PROBE_MARKERS, 'm', 'ns')?.metadata.finalizers, []);
  });

  it('keeps a condition a readiness gate names when its marker goes', async () => {
    const t = bench();
    const gated = pod('p1', 'node-a');
    gated.spec!.readinessGates = [{ conditionType: 'game.kruise.io/healthy' }];
    gated.status!.conditions!.push({ type: 'game.kruise.io/healthy', status: 'True' });
    const m = marker();
    m.metadata.deletionTimestamp = '2026-01-01T00:01:00Z';
    await seed(t, m, [gated]);
    await t.markers.reconcile('ns/m');
    assert.deepEqual(
      t.api.read<WirePod>(CoreResources.pods, 'p1', 'ns')?.status?.conditions?.map((c) => c.type),
      ['Initialized', 'game.kruise.io/healthy'],
    );
  });

  it('removes a deleted marker\u2019s probes only, not those of a marker of the same name in another namespace', async () => {
    const t = bench();
    const elsewhere = pod('q1', 'node-a');
    elsewhere.metadata!.namespace = 'other';
    const otherMarker = marker();
    otherMarker.metadata.namespace = 'other';
    t.api.put(POD_PROBE_MARKERS, otherMarker);
    await seed(t, marker(), [pod('p1', 'node-a'), elsewhere]);
    await t.markers.reconcile('ns/m');
    await t.sync();
    await t.markers.reconcile('other/m');
    await t.sync();
    assert.deepEqual(
      nppOf(t, 'node-a').spec?.podProbes?.map((e) => `${e.namespace}/${e.name}`),
      ['ns/p1', 'other/q1'],
    );
    const deleting = t.api.read<PodProbeMarker>(POD_PROBE_MARKERS, 'm', 'ns')!;
    deleting.metadata.deletionTimestamp = '2026-01-01T00:01:00Z';
    t.api.put(POD_PROBE_MARKERS, deleting);
    await t.sync();
    await t.markers.reconcile('ns/m');
    assert.deepEqual(
      nppOf(t, 'node-a').spec?.podProbes?.map((e) => `${e.namespace}/${e.name}`),
      ['other/q1'],
    );
  });

  it('removes the probes of a marker that vanished without its finalizer', async () => {
    const t = bench();
    await seed(t, marker(), [pod('p1', 'node-a')]);
    await t.markers.reconcile('ns/m');
    t.api.remove(POD_PROBE_MARKERS, 'm', 'ns');
    await t.sync();
    await t.markers.reconcile('ns/m');
    assert.equal(nppOf(t, 'node-a').spec?.podProbes, undefined);
  });

  it('writes 10,000 pods over 100 nodes with one NodePodProbe write per node, and nothing the second time', async function () {
    this.timeout(60_000); // a functional check of the write count, not a speed goal (that is the benchmark's)
    const t = bench();
    const nodes = Array.from({ length: 100 }, (_, i) => `node-${i}`);
    const pods = Array.from({ length: 10_000 }, (_, i) => pod(`p${i}`, `node-${i % 100}`));
    await seed(t, marker(), pods, nodes);
    await t.markers.reconcile('ns/m');
    const writes = t.api.writesOf(npps);
    assert.equal(writes.length, 100);
    assert.equal(new Set(writes.map((w) => w.name)).size, 100);
    assert.ok(writes.every((w) => w.verb === 'update'));
    assert.equal(nppOf(t, 'node-7').spec?.podProbes?.length, 100);
    assert.equal(t.api.read<PodProbeMarker>(POD_PROBE_MARKERS, 'm', 'ns')?.status?.matchedPods, 10_000);
    await t.sync();
    await t.markers.reconcile('ns/m');
    assert.equal(t.api.writesOf(npps).length, 100);
  });
});
