// The NodePodProbe budget: which markers a node's spec holds when they do not all fit (oldest first, a marker that
// does not fit left out whole, younger ones still placed), the ProbesLeftOut condition and event on a marker left
// out, two tenants' markers against each other in the controller, and a spec that other writers already filled.
import assert from 'node:assert/strict';
import { NODE_POD_PROBES, type NodePodProbe } from '../../../src/api/nodepodprobe.js';
import { POD_PROBE_MARKERS, PROBES_LEFT_OUT_CONDITION, type PodProbeMarker } from '../../../src/api/podprobemarker.js';
import type { WirePod } from '../../../src/api/wire.js';
import { EVENT_PROBES_LEFT_OUT } from '../../../src/controller/podprobemarker/controller.js';
import {
  fitMarkers,
  leftOutConditions,
  leftOutMessage,
  REASON_ALL_PLACED,
  REASON_NODE_POD_PROBE_BUDGET,
} from '../../../src/controller/podprobemarker/node-budget.js';
import { CoreResources } from '../../../src/kube/resource.js';
import { bench, emptyNpp, marker, node, pod } from './support.js';

const T0 = '2026-01-01T00:00:00Z';
const T1 = '2026-01-01T00:01:00Z';
const T2 = '2026-01-01T00:02:00Z';

function tenantPod(namespace: string, name: string, nodeName: string): WirePod {
  const p = pod(name, nodeName, { uid: `uid-${namespace}-${name}` });
  p.metadata!.namespace = namespace;
  return p;
}

function tenantMarker(namespace: string, name: string, createdAt: string, commandBytes: number): PodProbeMarker {
  const m = marker(name, {
    probes: [
      {
        name: 'check',
        containerName: 'main',
        probe: { exec: { command: ['sh', '-c', `#${'x'.repeat(commandBytes)}`] } },
        podConditionType: `${namespace}.example.com/check`,
      },
    ],
  });
  m.metadata.namespace = namespace;
  m.metadata.creationTimestamp = createdAt;
  return m;
}

const readMarker = (t: ReturnType<typeof bench>, ns: string, name: string): PodProbeMarker =>
  t.api.read<PodProbeMarker>(POD_PROBE_MARKERS, name, ns)!;
const markersOn = (t: ReturnType<typeof bench>, nodeName: string): string[] =>
  (t.api.read<NodePodProbe>(NODE_POD_PROBES, nodeName)?.spec?.podProbes ?? []).flatMap((e) =>
    (e.probes ?? []).map((p) => `${e.namespace}/${p.podProbeMarkerName}`),
  );

describe('NodePodProbe budget', () => {
  it('keeps markers oldest first, leaves out one that does not fit whole, and still places younger ones', () => {
    const d = fitMarkers(
      [
        { key: 'b/young', createdAt: T2, bytes: 300 },
        { key: 'a/huge', createdAt: T0, bytes: 5000 },
        { key: 'c/mid', createdAt: T1, bytes: 600 },
        { key: 'c/mid2', createdAt: T1, bytes: 200 },
      ],
      1000,
    );
    assert.equal(d.used, 800);
    assert.deepEqual(
      [...d.leftOut],
      [
        ['a/huge', { bytes: 5000, free: 1000 }],
        ['b/young', { bytes: 300, free: 200 }],
      ],
    );
  });

  it('breaks a tie of creation times by key, so every reconcile decides the same', () => {
    const shares = [
      { key: 'ns/b', createdAt: T0, bytes: 600 },
      { key: 'ns/a', createdAt: T0, bytes: 600 },
    ];
    assert.deepEqual([...fitMarkers(shares, 1000).leftOut.keys()], ['ns/b']);
    assert.deepEqual([...fitMarkers([...shares].reverse(), 1000).leftOut.keys()], ['ns/b']);
  });

  it('says which nodes, how much and what was free, naming five nodes at most', () => {
    const nodes = Array.from({ length: 7 }, (_, i) => ({ node: `n${7 - i}`, bytes: 2048, free: 10 }));
    const message = leftOutMessage(nodes, 768 * 1024);
    assert.match(
      message,
      /^probes left out of the NodePodProbe of 7 nodes: n1 \(its probes there: 2\.0 KiB; 10 B free\)/,
    );
    assert.match(
      message,
      /n5 \(its probes there: 2\.0 KiB; 10 B free\) and 2 more; a NodePodProbe's spec may hold 768\.0 KiB/,
    );
    assert.doesNotMatch(message, /n6/);
  });

  it('sets ProbesLeftOut True while left out, False once placed, and moves its time only on a change', () => {
    const out = [{ node: 'n1', bytes: 2000, free: 100 }];
    const first = leftOutConditions(undefined, out, T0, 1000)!;
    assert.equal(first[0]?.type, PROBES_LEFT_OUT_CONDITION);
    assert.equal(first[0]?.status, 'True');
    assert.equal(first[0]?.reason, REASON_NODE_POD_PROBE_BUDGET);
    assert.equal(first[0]?.lastTransitionTime, T0);
    assert.equal(leftOutConditions(first, out, T1, 1000), undefined, 'the same: nothing to write');
    const more = leftOutConditions(first, [...out, { node: 'n2', bytes: 2000, free: 0 }], T1, 1000)!;
    assert.equal(more[0]?.lastTransitionTime, T0, 'still True: the time stays');
    const placed = leftOutConditions(more, [], T2)!;
    assert.deepEqual(placed[0], {
      type: PROBES_LEFT_OUT_CONDITION,
      status: 'False',
      reason: REASON_ALL_PLACED,
      message: '',
      lastTransitionTime: T2,
    });
    assert.equal(leftOutConditions(undefined, [], T0), undefined, 'never left out: no condition');
  });

  it('two tenants on one node: the one that does not fit is left out and told, the other still reaches the node', async () => {
    const t = bench({ nodePodProbeBudgetBytes: 4096 });
    t.api.put(CoreResources.nodes, node('node-a'));
    t.api.put(NODE_POD_PROBES, emptyNpp('node-a'));
    t.api.put(CoreResources.pods, tenantPod('tenant-a', 'a1', 'node-a'));
    t.api.put(CoreResources.pods, tenantPod('tenant-a', 'a2', 'node-a'));
    t.api.put(CoreResources.pods, tenantPod('tenant-b', 'b1', 'node-a'));
    // tenant A's marker is the older one, and alone more than the budget (two pods × 2.5 KB)
    t.api.put(POD_PROBE_MARKERS, tenantMarker('tenant-a', 'heavy', T0, 2500));
    t.api.put(POD_PROBE_MARKERS, tenantMarker('tenant-b', 'light', T1, 10));
    await t.sync();
    await t.markers.reconcile('tenant-a/heavy');
    await t.markers.reconcile('tenant-b/light');
    await t.sync();
    assert.deepEqual(markersOn(t, 'node-a'), ['tenant-b/light']);
    const heavy = readMarker(t, 'tenant-a', 'heavy');
    const condition = heavy.status?.conditions?.find((c) => c.type === PROBES_LEFT_OUT_CONDITION);
    assert.equal(condition?.status, 'True');
    assert.match(
      condition?.message ?? '',
      /NodePodProbe of 1 node: node-a \(its probes there: 5\.\d KiB; 4\.0 KiB free\)/,
    );
    assert.equal(heavy.status?.matchedPods, 2, 'its pods are still counted');
    assert.deepEqual(
      t.events.events.filter((e) => e.reason === EVENT_PROBES_LEFT_OUT).map((e) => [e.name, e.type]),
      [['heavy', 'Warning']],
    );
    assert.equal(readMarker(t, 'tenant-b', 'light').status?.conditions, undefined, 'B is placed: nothing to say');

    // once A's marker shrinks to fit, it is placed beside B's and the condition turns False; no second event
    const shrunk = tenantMarker('tenant-a', 'heavy', T0, 10);
    shrunk.metadata.generation = 2;
    t.api.put(POD_PROBE_MARKERS, {
      ...readMarker(t, 'tenant-a', 'heavy'),
      spec: shrunk.spec,
      metadata: { ...readMarker(t, 'tenant-a', 'heavy').metadata, generation: 2 },
    });
    await t.sync();
    await t.markers.reconcile('tenant-a/heavy');
    await t.sync();
    assert.deepEqual(markersOn(t, 'node-a').sort(), ['tenant-a/heavy', 'tenant-a/heavy', 'tenant-b/light']);
    const placed = readMarker(t, 'tenant-a', 'heavy').status?.conditions?.[0];
    assert.equal(placed?.status, 'False');
    assert.equal(t.events.events.filter((e) => e.reason === EVENT_PROBES_LEFT_OUT).length, 1);
  });

  it('an older marker that grows pushes out the younger one, which is told (never the older one)', async () => {
    const t = bench({ nodePodProbeBudgetBytes: 4096 });
    t.api.put(CoreResources.nodes, node('node-a'));
    t.api.put(NODE_POD_PROBES, emptyNpp('node-a'));
    t.api.put(CoreResources.pods, tenantPod('tenant-a', 'a1', 'node-a'));
    t.api.put(CoreResources.pods, tenantPod('tenant-b', 'b1', 'node-a'));
    t.api.put(POD_PROBE_MARKERS, tenantMarker('tenant-a', 'old', T0, 1500));
    t.api.put(POD_PROBE_MARKERS, tenantMarker('tenant-b', 'young', T1, 1500));
    await t.sync();
    await t.markers.reconcile('tenant-a/old');
    await t.markers.reconcile('tenant-b/young');
    await t.sync();
    assert.deepEqual(markersOn(t, 'node-a'), ['tenant-a/old', 'tenant-b/young']);
    // tenant A gets a second pod there: A's share doubles, and B no longer fits
    t.api.put(CoreResources.pods, tenantPod('tenant-a', 'a2', 'node-a'));
    await t.sync();
    await t.markers.reconcile('tenant-a/old');
    await t.sync();
    await t.markers.reconcile('tenant-b/young');
    await t.sync();
    assert.deepEqual(markersOn(t, 'node-a'), ['tenant-a/old', 'tenant-a/old']);
    assert.equal(readMarker(t, 'tenant-b', 'young').status?.conditions?.[0]?.status, 'True');
    assert.equal(readMarker(t, 'tenant-a', 'old').status?.conditions, undefined);
  });

  it('leaves a marker out of a spec other writers filled past the budget, and says so', async () => {
    const t = bench({ nodePodProbeBudgetBytes: 4096 });
    t.api.put(CoreResources.nodes, node('node-a'));
    const foreign = emptyNpp('node-a');
    foreign.spec = {
      podProbes: [
        {
          name: 'x',
          namespace: 'elsewhere',
          uid: 'uid-x',
          probes: [{ name: 'y#z', containerName: 'c', probe: { exec: { command: ['x'.repeat(4000)] } } }],
        },
      ],
    };
    t.api.put(NODE_POD_PROBES, foreign);
    t.api.put(CoreResources.pods, tenantPod('tenant-b', 'b1', 'node-a'));
    t.api.put(POD_PROBE_MARKERS, tenantMarker('tenant-b', 'light', T1, 10));
    await t.sync();
    await t.markers.reconcile('tenant-b/light');
    await t.sync();
    assert.deepEqual(markersOn(t, 'node-a'), ['elsewhere/undefined']);
    assert.equal(readMarker(t, 'tenant-b', 'light').status?.conditions?.[0]?.status, 'True');
    assert.equal(t.events.events.filter((e) => e.reason === EVENT_PROBES_LEFT_OUT).length, 1);
  });
});
