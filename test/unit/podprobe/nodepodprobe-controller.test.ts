// The NodePodProbe controller's reconcile against filled caches and a fake API: a NodePodProbe per Node (none for
// virtual-kubelet nodes), deleted with its Node; entries of pods that went or were recreated pruned; probe states
// mapped onto pods (condition True/False, policy labels/annotations swapped), each write only when it changes
// something; a pod condition newer than the state kept; first probe wins a condition type; a deleted marker's
// states mark nothing.
import assert from 'node:assert/strict';
import { NODE_POD_PROBES, type NodePodProbe } from '../../../src/api/nodepodprobe.js';
import {
  POD_PROBE_MARKERS,
  type PodProbeMarker,
  type ProbeState as ProbeStateName,
} from '../../../src/api/podprobemarker.js';
import type { WirePod } from '../../../src/api/wire.js';
import { CoreResources } from '../../../src/kube/resource.js';
import { bench, emptyNpp, marker, node, pod } from './support.js';

type Bench = ReturnType<typeof bench>;

const T1 = '2026-01-01T00:00:10Z';
const T2 = '2026-01-01T00:00:20Z';

async function seedNode(
  t: Bench,
  states: { name: string; state: ProbeStateName; at?: string; message?: string }[],
  m = marker(),
): Promise<void> {
  t.api.put(CoreResources.nodes, node('node-a'));
  t.api.put(CoreResources.pods, pod('p1', 'node-a'));
  t.api.put(POD_PROBE_MARKERS, m);
  setStates(t, states);
  await t.sync();
}

function setStates(t: Bench, states: { name: string; state: ProbeStateName; at?: string; message?: string }[]): void {
  const npp: NodePodProbe = t.api.read<NodePodProbe>(NODE_POD_PROBES, 'node-a') ?? emptyNpp('node-a');
  npp.spec = {
    podProbes: [
      {
        name: 'p1',
        namespace: 'ns',
        uid: 'uid-p1',
        probes: states.map((s) => ({ name: s.name, containerName: 'main', probe: { exec: { command: ['true'] } } })),
      },
    ],
  };
  npp.status = {
    podProbeStatuses: [
      {
        name: 'p1',
        namespace: 'ns',
        uid: 'uid-p1',
        probeStates: states.map((s) => ({
          name: s.name,
          state: s.state,
          lastProbeTime: s.at ?? T1,
          lastTransitionTime: s.at ?? T1,
          ...(s.message && { message: s.message }),
        })),
      },
    ],
  };
  t.api.put(NODE_POD_PROBES, npp);
}

const p1 = (t: Bench): WirePod => t.api.read<WirePod>(CoreResources.pods, 'p1', 'ns')!;
const condition = (t: Bench, type = 'game.kruise.io/healthy') => p1(t).status?.conditions?.find((c) => c.type === type);

describe('nodepodprobe controller', () => {
  it('creates a NodePodProbe for a Node, none for a virtual-kubelet node, and deletes it with its Node', async () => {
    const t = bench();
    t.api.put(CoreResources.nodes, node('node-a'));
    t.api.put(CoreResources.nodes, node('vk', { type: 'virtual-kubelet' }));
    await t.sync();
    await t.nodeProbes.reconcile('node-a');
    await t.nodeProbes.reconcile('vk');
    assert.deepEqual(
      t.api.all<NodePodProbe>(NODE_POD_PROBES).map((n) => n.metadata.name),
      ['node-a'],
    );
    await t.sync();
    t.api.remove(CoreResources.nodes, 'node-a');
    await t.sync();
    await t.nodeProbes.reconcile('node-a');
    assert.deepEqual(t.api.all(NODE_POD_PROBES), []);
  });

  it('does not delete a NodePodProbe while the Node exists but the cache has not seen it', async () => {
    const t = bench();
    t.api.put(NODE_POD_PROBES, emptyNpp('node-a'));
    await t.sync();
    t.api.put(CoreResources.nodes, node('node-a'));
    assert.deepEqual(await t.nodeProbes.reconcile('node-a'), { requeueAfter: 1000 });
    assert.equal(t.api.all(NODE_POD_PROBES).length, 1);
  });

  it('prunes entries whose pod went, finished, or was recreated with another uid', async () => {
    const t = bench();
    t.api.put(CoreResources.nodes, node('node-a'));
    t.api.put(CoreResources.pods, pod('kept', 'node-a'));
    t.api.put(CoreResources.pods, pod('recreated', 'node-a', { uid: 'uid-new' }));
    const done = pod('done', 'node-a');
    done.status!.phase = 'Failed';
    t.api.put(CoreResources.pods, done);
    const probes = [{ name: 'm#healthy', containerName: 'main', probe: { exec: { command: ['true'] } } }];
    t.api.put(NODE_POD_PROBES, {
      metadata: { name: 'node-a' },
      spec: {
        podProbes: ['kept', 'gone', 'recreated', 'done'].map((name) => ({
          name,
          namespace: 'ns',
          uid: `uid-${name}`,
          probes,
        })),
      },
    });
    await t.sync();
    await t.nodeProbes.reconcile('node-a');
    assert.deepEqual(
      t.api.read<NodePodProbe>(NODE_POD_PROBES, 'node-a')?.spec?.podProbes?.map((e) => e.name),
      ['kept'],
    );
    assert.equal(t.api.writesOf('nodepodprobes', 'update').length, 1);
  });

  it('marks Succeeded as condition True with the Succeeded policy, then swaps on Failed; no write when unchanged', async () => {
    const t = bench();
    await seedNode(t, [{ name: 'm#healthy', state: 'Succeeded', message: 'ok' }]);
    await t.nodeProbes.reconcile('node-a');
    assert.deepEqual(condition(t), {
      type: 'game.kruise.io/healthy',
      status: 'True',
      message: 'ok',
      lastProbeTime: T1,
      lastTransitionTime: T1,
    });
    assert.equal(p1(t).metadata?.labels?.['gameserver-state'], 'ready');
    assert.equal(p1(t).metadata?.annotations?.['game/ok'], 'yes');
    const podWrites = t.api.writesOf('pods');
    assert.deepEqual(
      podWrites.map((w) => w.subresource ?? 'metadata'),
      ['metadata', 'status'],
    );
    // conditional: each write carried the resourceVersion read
    for (const w of podWrites)
      assert.ok((w.body as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion);

    await t.sync();
    await t.nodeProbes.reconcile('node-a');
    assert.equal(t.api.writesOf('pods').length, 2, 'nothing changed: no write');

    setStates(t, [{ name: 'm#healthy', state: 'Failed', at: T2, message: 'exit 1' }]);
    await t.sync();
    await t.nodeProbes.reconcile('node-a');
    assert.equal(condition(t)?.status, 'False');
    assert.equal(condition(t)?.message, 'exit 1');
    assert.equal(condition(t)?.lastTransitionTime, T2);
    assert.equal(p1(t).metadata?.labels?.['gameserver-state'], 'down');
    assert.equal(p1(t).metadata?.annotations?.['game/bad'], 'yes');
    assert.equal(p1(t).metadata?.annotations?.['game/ok'], undefined);
  });

  it('maps Unknown to False and removes every policy key', async () => {
    const t = bench();
    await seedNode(t, [{ name: 'm#healthy', state: 'Succeeded' }]);
    await t.nodeProbes.reconcile('node-a');
    await t.sync();
    setStates(t, [{ name: 'm#healthy', state: 'Unknown', at: T2 }]);
    await t.sync();
    await t.nodeProbes.reconcile('node-a');
    assert.equal(condition(t)?.status, 'False');
    assert.equal(p1(t).metadata?.labels?.['gameserver-state'], undefined);
    assert.equal(p1(t).metadata?.annotations?.['game/ok'], undefined);
  });

  it('never moves a condition back to an older state read from a stale NodePodProbe', async () => {
    const t = bench();
    await seedNode(t, [{ name: 'm#healthy', state: 'Failed', at: T1 }]);
    const newer = p1(t);
    newer.status!.conditions!.push({
      type: 'game.kruise.io/healthy',
      status: 'True',
      lastProbeTime: T2,
      lastTransitionTime: T2,
    });
    t.api.put(CoreResources.pods, newer);
    await t.sync();
    await t.nodeProbes.reconcile('node-a');
    assert.equal(condition(t)?.status, 'True');
    assert.equal(t.api.writesOf('pods', 'patch').filter((w) => w.subresource === 'status').length, 0);
  });

  it('lets the first probe win when two name one condition type', async () => {
    const t = bench();
    const m = marker();
    m.spec.probes.push({
      name: 'second',
      containerName: 'main',
      probe: { exec: { command: ['false'] } },
      podConditionType: 'game.kruise.io/healthy',
    });
    await seedNode(
      t,
      [
        { name: 'm#healthy', state: 'Succeeded' },
        { name: 'm#second', state: 'Failed' },
      ],
      m,
    );
    await t.nodeProbes.reconcile('node-a');
    assert.equal(condition(t)?.status, 'True');
    assert.deepEqual(t.events.events, [
      {
        reason: 'ProbeConditionConflict',
        type: 'Warning',
        name: 'p1',
        message:
          'condition game.kruise.io/healthy is named by probes m#healthy, m#second: m#healthy gives it (the first in the results)',
      },
    ]);
    await t.sync();
    await t.nodeProbes.reconcile('node-a');
    assert.equal(t.events.events.length, 1, 'reported once');
  });

  it('marks nothing for a probe whose marker is gone or being deleted', async () => {
    const t = bench();
    const m = marker();
    m.metadata.deletionTimestamp = T1;
    await seedNode(
      t,
      [
        { name: 'm#healthy', state: 'Succeeded' },
        { name: 'gone#x', state: 'Succeeded' },
      ],
      m,
    );
    await t.nodeProbes.reconcile('node-a');
    assert.equal(t.api.writesOf('pods').length, 0);
  });

  it('redoes a pod write that met a conflict from a fresh read of the pod', async () => {
    const t = bench();
    await seedNode(t, [{ name: 'm#healthy', state: 'Succeeded' }]);
    // someone else labelled the pod after the cache was filled
    const changed = p1(t);
    changed.metadata!.labels = { ...changed.metadata!.labels, owner: 'someone' };
    t.api.put(CoreResources.pods, changed);
    await t.nodeProbes.reconcile('node-a');
    assert.equal(p1(t).metadata?.labels?.owner, 'someone');
    assert.equal(p1(t).metadata?.labels?.['gameserver-state'], 'ready');
    assert.equal(condition(t)?.status, 'True');
  });

  it('maps results again when a marker changes its policy', async () => {
    const t = bench();
    await seedNode(t, [{ name: 'm#healthy', state: 'Succeeded' }]);
    await t.nodeProbes.reconcile('node-a');
    const m = t.api.read<PodProbeMarker>(POD_PROBE_MARKERS, 'm', 'ns')!;
    m.spec.probes[0]!.markerPolicy = [{ state: 'Succeeded', labels: { 'gameserver-state': 'serving' } }];
    t.api.put(POD_PROBE_MARKERS, m);
    await t.sync();
    await t.nodeProbes.reconcile('node-a');
    assert.equal(p1(t).metadata?.labels?.['gameserver-state'], 'serving');
  });
});
