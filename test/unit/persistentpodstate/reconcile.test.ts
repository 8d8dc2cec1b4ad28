// PersistentPodState reconcile, pure parts: the status from pods and nodes (record, keep while away, scale-down
// cleanup, retention policy, workload gone) and generation from StatefulSet annotations.
import assert from 'node:assert/strict';
import {
  applyGeneratedSpec,
  controlledBy,
  generatedObject,
  planGeneration,
  splitList,
} from '../../../src/controller/persistentpodstate/generation.js';
import {
  computePodStates,
  ordinalInRange,
  ordinalOf,
  topologyKeysOf,
  type PodStateInputs,
} from '../../../src/controller/persistentpodstate/pod-states.js';
import type { StatefulSetObject } from '../../../src/controller/persistentpodstate/resources.js';
import type { PersistentPodState } from '../../../src/api/persistentpodstate.js';
import type { WirePod, WireNode } from '../../../src/api/wire.js';
import { FakeClock } from '../../../src/util/clock.js';

const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
const HOST = 'kubernetes.io/hostname';
const ZONE = 'topology.kubernetes.io/zone';

function sts(replicas: number, extra: Partial<StatefulSetObject['metadata']> = {}, start?: number): StatefulSetObject {
  return {
    metadata: { name: 'web', namespace: 'ns', uid: 'sts-uid', ...extra },
    spec: { replicas, ...(start !== undefined && { ordinals: { start } }) },
  };
}

function pps(extra: Partial<PersistentPodState['spec']> = {}, status?: PersistentPodState['status']) {
  return {
    metadata: { name: 'web', namespace: 'ns', generation: 3 },
    spec: {
      targetRef: { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web' },
      requiredPersistentTopology: { nodeTopologyKeys: [HOST] },
      preferredPersistentTopology: [{ weight: 100, preference: { nodeTopologyKeys: [ZONE] } }],
      ...extra,
    },
    ...(status && { status }),
  } as PersistentPodState;
}

function pod(
  name: string,
  nodeName: string | undefined,
  ready: boolean,
  annotations?: Record<string, string>,
): WirePod {
  return {
    metadata: { name, namespace: 'ns', ...(annotations && { annotations }) },
    spec: { containers: [], ...(nodeName && { nodeName }) },
    status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  };
}

const nodes: Record<string, WireNode> = {
  'node-a': { metadata: { name: 'node-a', labels: { [HOST]: 'node-a', [ZONE]: 'z1', other: 'x' } } },
  'node-b': { metadata: { name: 'node-b', labels: { [HOST]: 'node-b' } } },
};

function inputs(over: Partial<PodStateInputs>): PodStateInputs {
  const pods = over.pods ?? [];
  return {
    pps: pps(),
    workload: sts(2),
    pods,
    podExists: (name) => pods.some((p) => p.metadata?.name === name),
    node: (name) => nodes[name],
    ...over,
  };
}

describe('persistentpodstate: pod states', () => {
  it('records Ready bound pods with the node values of required ∪ preferred keys, nothing else', () => {
    const r = computePodStates(
      inputs({ pods: [pod('web-0', 'node-a', true), pod('web-1', 'node-b', false), pod('web-2', undefined, true)] }),
    );
    assert.deepEqual(r.status, {
      observedGeneration: 3,
      podStates: { 'web-0': { nodeName: 'node-a', nodeTopologyLabels: { [HOST]: 'node-a', [ZONE]: 'z1' } } },
    });
    assert.deepEqual(r.waitingForNodes, []);
  });

  it('records the persistent annotations of the pod, and settles (a second pass changes nothing)', () => {
    const spec = { persistentPodAnnotations: [{ key: 'app/ip' }, { key: 'absent' }] };
    const pods = [pod('web-0', 'node-b', true, { 'app/ip': '10.0.0.7', unrelated: 'y' })];
    const first = computePodStates(inputs({ pps: pps(spec), pods }));
    assert.deepEqual(first.status.podStates?.['web-0'], {
      nodeName: 'node-b',
      nodeTopologyLabels: { [HOST]: 'node-b' },
      annotations: { 'app/ip': '10.0.0.7' },
    });
    const second = computePodStates(inputs({ pps: pps(spec, first.status), pods }));
    assert.deepEqual(second.status, first.status);
  });

  it('keeps the entry of a pod that is away (deleted, pending, not Ready) while its ordinal is kept', () => {
    const recorded = {
      observedGeneration: 3,
      podStates: { 'web-1': { nodeName: 'node-b', nodeTopologyLabels: { [HOST]: 'node-b' } } },
    };
    const gone = computePodStates(inputs({ pps: pps({}, recorded), pods: [] }));
    assert.deepEqual(gone.status.podStates, recorded.podStates);
    const pending = computePodStates(inputs({ pps: pps({}, recorded), pods: [pod('web-1', undefined, false)] }));
    assert.deepEqual(pending.status.podStates, recorded.podStates);
  });

  it('moves the entry when the pod runs on another node', () => {
    const recorded = {
      observedGeneration: 3,
      podStates: { 'web-0': { nodeName: 'node-b', nodeTopologyLabels: { [HOST]: 'node-b' } } },
    };
    const r = computePodStates(inputs({ pps: pps({}, recorded), pods: [pod('web-0', 'node-a', true)] }));
    assert.equal(r.status.podStates?.['web-0']?.nodeName, 'node-a');
  });

  it('scale-down (WhenScaled, the default): drops entries of removed ordinals once their pod is gone', () => {
    const recorded = {
      observedGeneration: 3,
      podStates: {
        'web-0': { nodeName: 'node-a' },
        'web-1': { nodeName: 'node-b' },
        'web-2': { nodeName: 'node-b' },
        'web-3': { nodeName: 'node-b' },
        'other-9': { nodeName: 'node-b' },
      },
    };
    // web-3 still exists (terminating): kept until it is gone; web-2 gone: dropped; unparsable names kept
    const r = computePodStates(
      inputs({ pps: pps({}, recorded), workload: sts(2), pods: [], podExists: (n) => n === 'web-3' }),
    );
    assert.deepEqual(Object.keys(r.status.podStates ?? {}), ['other-9', 'web-0', 'web-1', 'web-3']);
  });

  it('WhenDeleted keeps entries of removed ordinals', () => {
    const recorded = { observedGeneration: 3, podStates: { 'web-5': { nodeName: 'node-b' } } };
    const r = computePodStates(
      inputs({ pps: pps({ persistentPodStateRetentionPolicy: 'WhenDeleted' }, recorded), workload: sts(1) }),
    );
    assert.deepEqual(Object.keys(r.status.podStates ?? {}), ['web-5']);
  });

  it('follows spec.ordinals.start for the kept ordinals', () => {
    assert.equal(ordinalInRange(sts(2, {}, 5), 4), false);
    assert.equal(ordinalInRange(sts(2, {}, 5), 5), true);
    assert.equal(ordinalInRange(sts(2, {}, 5), 7), false);
    assert.equal(ordinalOf('web', 'web-12'), 12);
    assert.equal(ordinalOf('web', 'web-012'), undefined);
    assert.equal(ordinalOf('web', 'webx-1'), undefined);
    assert.equal(ordinalOf('web', 'web-a-1'), undefined);
  });

  it('clears the entries when the StatefulSet is gone or being deleted', () => {
    const recorded = { observedGeneration: 1, podStates: { 'web-0': { nodeName: 'node-a' } } };
    assert.deepEqual(computePodStates(inputs({ pps: pps({}, recorded), workload: undefined })).status, {
      observedGeneration: 3,
    });
    const deleting = sts(2, { deletionTimestamp: new Date(clock.now()).toISOString() });
    assert.deepEqual(computePodStates(inputs({ pps: pps({}, recorded), workload: deleting })).status, {
      observedGeneration: 3,
    });
  });

  it('a Ready pod whose node is not in the cache keeps its old entry and asks to look again', () => {
    const recorded = { observedGeneration: 3, podStates: { 'web-0': { nodeName: 'node-a' } } };
    const r = computePodStates(inputs({ pps: pps({}, recorded), pods: [pod('web-0', 'node-x', true)] }));
    assert.deepEqual(r.status.podStates, recorded.podStates);
    assert.deepEqual(r.waitingForNodes, ['web-0']);
  });

  it('topology keys: required ∪ preferred, once each', () => {
    const p = pps({
      preferredPersistentTopology: [
        { weight: 50, preference: { nodeTopologyKeys: [ZONE, HOST] } },
        { weight: 10, preference: { nodeTopologyKeys: ['rack'] } },
      ],
    });
    assert.deepEqual(topologyKeysOf(p), [HOST, ZONE, 'rack']);
  });
});

describe('persistentpodstate: generation from StatefulSet annotations', () => {
  const auto = (annotations: Record<string, string>): StatefulSetObject =>
    sts(2, { annotations: { 'kruise.io/auto-generate-persistent-pod-state': 'true', ...annotations } });

  it('required + preferred + annotations → a PPS named as the StatefulSet, controlled by it', () => {
    const s = auto({
      'kruise.io/required-persistent-topology': `${HOST}`,
      'kruise.io/preferred-persistent-topology': ` ${ZONE} , rack,`,
      'kruise.io/persistent-pod-annotations': 'app/ip',
    });
    const plan = planGeneration(s);
    assert.equal(plan.kind, 'ensure');
    if (plan.kind !== 'ensure') return;
    const obj = generatedObject(s, plan);
    assert.equal(obj.metadata?.name, 'web');
    assert.equal(obj.metadata?.namespace, 'ns');
    assert.deepEqual(obj.metadata?.ownerReferences, [
      { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'sts-uid', controller: true },
    ]);
    assert.deepEqual(obj.spec, {
      targetRef: { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web' },
      requiredPersistentTopology: { nodeTopologyKeys: [HOST] },
      preferredPersistentTopology: [{ weight: 100, preference: { nodeTopologyKeys: [ZONE, 'rack'] } }],
      persistentPodAnnotations: [{ key: 'app/ip' }],
    });
    assert.equal(controlledBy(obj, 'sts-uid'), true);
    assert.equal(controlledBy(obj, 'other'), false);
  });

  it('off (absent or not "true") → remove; on without topology keys or with a bad key → invalid, with why', () => {
    assert.equal(planGeneration(sts(1)).kind, 'remove');
    assert.equal(
      planGeneration(sts(1, { annotations: { 'kruise.io/auto-generate-persistent-pod-state': 'True' } })).kind,
      'remove',
    );
    const none = planGeneration(auto({ 'kruise.io/persistent-pod-annotations': 'a' }));
    assert.equal(none.kind, 'invalid');
    assert.match(none.kind === 'invalid' ? none.message : '', /neither kruise.io\/required-persistent-topology/);
    const bad = planGeneration(auto({ 'kruise.io/required-persistent-topology': 'bad key!' }));
    assert.equal(bad.kind, 'invalid');
    assert.match(bad.kind === 'invalid' ? bad.message : '', /requiredPersistentTopology.nodeTopologyKeys\[0\]/);
  });

  it('updates a generated spec only when the annotations changed it, keeping a user-set retention policy', () => {
    const plan = planGeneration(auto({ 'kruise.io/required-persistent-topology': HOST }));
    if (plan.kind !== 'ensure') throw new Error('expected ensure');
    const draft = generatedObject(sts(2), plan);
    draft.spec.persistentPodStateRetentionPolicy = 'WhenDeleted';
    assert.equal(applyGeneratedSpec(draft, plan.spec), false);
    const next = planGeneration(auto({ 'kruise.io/required-persistent-topology': `${HOST},${ZONE}` }));
    if (next.kind !== 'ensure') throw new Error('expected ensure');
    assert.equal(applyGeneratedSpec(draft, next.spec), true);
    assert.deepEqual(draft.spec.requiredPersistentTopology, { nodeTopologyKeys: [HOST, ZONE] });
    assert.equal(draft.spec.persistentPodStateRetentionPolicy, 'WhenDeleted');
  });

  it('splits comma lists, trimming and dropping empties', () => {
    assert.deepEqual(splitList(' a, b ,,c '), ['a', 'b', 'c']);
    assert.deepEqual(splitList(undefined), []);
  });
});
