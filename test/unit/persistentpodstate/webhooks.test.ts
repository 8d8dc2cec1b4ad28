// PersistentPodState admission: validation (OpenKruise's messages, our extra checks, immutability, conflicts) and
// the pod-create step that pins a recreated StatefulSet pod to its recorded node.
import assert from 'node:assert/strict';
import type { PersistentPodState } from '../../../src/api/persistentpodstate.js';
import {
  EMPTY_TARGET_REF_MESSAGE,
  EMPTY_TOPOLOGY_MESSAGE,
  validatePersistentPodState,
} from '../../../src/api/persistentpodstate-validation.js';
import type { AdmissionRequest } from '../../../src/controller/admission/admission-review.js';
import {
  persistentPodStateWebhookHandlers,
  PPS_POD_WEBHOOK_PATH,
  PPS_VALIDATING_WEBHOOK_PATH,
  type PersistentPodStateReader,
} from '../../../src/controller/admission/persistentpodstate/handler.js';
import { injectPersistentPodState } from '../../../src/controller/admission/persistentpodstate/pod-injection.js';
import type { KubeObject } from '../../../src/kube/object.js';

const HOST = 'kubernetes.io/hostname';
const ZONE = 'topology.kubernetes.io/zone';

function ppsObject(
  name: string,
  spec: Record<string, unknown> = {},
  status?: PersistentPodState['status'],
): PersistentPodState {
  return {
    metadata: { name, namespace: 'ns' },
    spec: {
      targetRef: { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web' },
      requiredPersistentTopology: { nodeTopologyKeys: [HOST] },
      ...spec,
    },
    ...(status && { status }),
  };
}

const recorded: PersistentPodState['status'] = {
  observedGeneration: 1,
  podStates: {
    'web-0': { nodeName: 'node-b', nodeTopologyLabels: { [HOST]: 'node-b', [ZONE]: 'z2' } },
    'web-1': { nodeName: 'node-a' },
  },
};

function podOf(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'ns',
      labels: { 'statefulset.kubernetes.io/pod-name': name },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'u', controller: true }],
    },
    spec: { containers: [{ name: 'c', image: 'i' }], ...extra },
  };
}

class FakeReader implements PersistentPodStateReader {
  calls = 0;
  constructor(
    public items: PersistentPodState[],
    public fail?: Error,
  ) {}
  list(namespace: string): Promise<PersistentPodState[]> {
    this.calls++;
    if (this.fail) return Promise.reject(this.fail);
    return Promise.resolve(this.items.filter((p) => p.metadata?.namespace === namespace));
  }
}

function request(
  operation: AdmissionRequest['operation'],
  object: unknown,
  extra: Partial<AdmissionRequest> = {},
): AdmissionRequest {
  return {
    uid: 'r1',
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    namespace: 'ns',
    operation,
    object: object as KubeObject,
    ...extra,
  };
}

describe('persistentpodstate validation', () => {
  const messages = (obj: unknown, options = {}): string[] =>
    validatePersistentPodState(obj, options).map((e) => `${e.field}: ${e.message}`);

  it('accepts a StatefulSet target with required or preferred keys', () => {
    assert.deepEqual(messages(ppsObject('p')), []);
    assert.deepEqual(
      messages(
        ppsObject('p', {
          requiredPersistentTopology: undefined,
          preferredPersistentTopology: [{ weight: 100, preference: { nodeTopologyKeys: [ZONE] } }],
        }),
      ),
      [],
    );
  });

  it("gives OpenKruise's messages for an empty targetRef and for no topology at all", () => {
    assert.deepEqual(
      messages({
        metadata: { name: 'p' },
        spec: {
          targetRef: { apiVersion: '', kind: 'StatefulSet', name: 'web' },
          requiredPersistentTopology: { nodeTopologyKeys: [HOST] },
        },
      }),
      [`spec.targetRef: ${EMPTY_TARGET_REF_MESSAGE}`],
    );
    assert.deepEqual(messages(ppsObject('p', { requiredPersistentTopology: { nodeTopologyKeys: [] } })), [
      `spec: ${EMPTY_TOPOLOGY_MESSAGE}`,
    ]);
  });

  it('refuses other workloads, bad keys, duplicate keys, weights outside 1-100, unknown policies, malformed input', () => {
    const out = messages(
      ppsObject('p', {
        targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
        requiredPersistentTopology: { nodeTopologyKeys: [HOST, HOST, 'bad key'] },
        preferredPersistentTopology: [{ weight: 0, preference: { nodeTopologyKeys: [ZONE] } }, 'x'],
        persistentPodAnnotations: [{ key: '' }],
        persistentPodStateRetentionPolicy: 'Sometimes',
      }),
    );
    assert.equal(out.length, 7, out.join('\n'));
    assert.match(out.join('\n'), /spec.targetRef: targetRef.Kind must be StatefulSet/);
    assert.match(out.join('\n'), /nodeTopologyKeys\[1\]: Duplicate value/);
    assert.match(out.join('\n'), /nodeTopologyKeys\[2\]: Invalid value: "bad key"/);
    assert.match(
      out.join('\n'),
      /preferredPersistentTopology\[0\].weight: Invalid value: 0: must be an integer in \[1, 100\]/,
    );
    assert.match(out.join('\n'), /preferredPersistentTopology\[1\]: must be an object/);
    assert.match(out.join('\n'), /persistentPodAnnotations\[0\].key: Required value/);
    assert.match(out.join('\n'), /persistentPodStateRetentionPolicy: Unsupported value: "Sometimes"/);
    assert.deepEqual(messages(null), ['spec: Required value']);
    assert.doesNotThrow(() =>
      messages({ spec: { targetRef: 7, requiredPersistentTopology: 'x', preferredPersistentTopology: {} } }),
    );
  });

  it('targetRef is immutable; another PPS of the namespace on the same workload (any version) conflicts', () => {
    const old = ppsObject('p');
    const moved = ppsObject('p', { targetRef: { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db' } });
    assert.deepEqual(messages(moved, { oldObject: old }), ['spec.targetRef: Forbidden: targetRef is immutable']);
    const other = ppsObject('q', { targetRef: { apiVersion: 'apps/v1beta2', kind: 'StatefulSet', name: 'web' } });
    assert.deepEqual(messages(ppsObject('p'), { others: [other, ppsObject('p')] }), [
      'spec.targetRef: targetRef is in conflict with other PersistentPodState q',
    ]);
  });

  it('the handler denies with 400 (403 for a forbidden change) and allows other operations', async () => {
    const handlers = persistentPodStateWebhookHandlers(new FakeReader([ppsObject('q')]));
    const validate = handlers[PPS_VALIDATING_WEBHOOK_PATH]!;
    const conflict = await validate(request('CREATE', ppsObject('p')));
    assert.deepEqual(conflict, {
      allowed: false,
      code: 400,
      message: 'spec.targetRef: targetRef is in conflict with other PersistentPodState q',
    });
    const immutable = await validate(
      request('UPDATE', ppsObject('q', { targetRef: { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db' } }), {
        oldObject: ppsObject('q'),
      }),
    );
    assert.equal(immutable.allowed ? 0 : immutable.code, 403);
    assert.deepEqual(await validate(request('DELETE', null)), { allowed: true });
    const failing = persistentPodStateWebhookHandlers(new FakeReader([], new Error('boom')))[
      PPS_VALIDATING_WEBHOOK_PATH
    ]!;
    const answer = await failing(request('CREATE', ppsObject('p')));
    assert.equal(answer.allowed ? 0 : answer.code, 500);
  });
});

describe('persistentpodstate pod webhook: re-injection', () => {
  const pps = ppsObject(
    'web',
    { preferredPersistentTopology: [{ weight: 60, preference: { nodeTopologyKeys: [ZONE, 'absent'] } }] },
    recorded,
  );

  it('pins a recorded pod: required keys as nodeSelector, preferred as one In term, the injected annotation', () => {
    const { pod, warnings } = injectPersistentPodState(podOf('web-0', { nodeSelector: { disk: 'ssd' } }), pps);
    assert.deepEqual(warnings, []);
    const spec = pod?.spec as Record<string, unknown>;
    assert.deepEqual(spec.nodeSelector, { disk: 'ssd', [HOST]: 'node-b' });
    assert.deepEqual(spec.affinity, {
      nodeAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          { weight: 60, preference: { matchExpressions: [{ key: ZONE, operator: 'In', values: ['z2'] }] } },
        ],
      },
    });
    assert.equal(
      (pod?.metadata as { annotations: Record<string, string> }).annotations['kruise.io/injected-persistent-pod-state'],
      'web',
    );
  });

  it('never appends a term twice (a second pass changes nothing) and appends no empty term', () => {
    const first = injectPersistentPodState(podOf('web-0'), pps).pod!;
    assert.equal(injectPersistentPodState(first, pps).pod, undefined);
    const onlyHost = { ...recorded, podStates: { 'web-0': { nodeName: 'n', nodeTopologyLabels: { [HOST]: 'n' } } } };
    const { pod } = injectPersistentPodState(podOf('web-0'), { ...pps, status: onlyHost });
    assert.equal((pod?.spec as Record<string, unknown>).affinity, undefined);
  });

  it('keeps a nodeSelector value the pod already has for a required key, with a warning', () => {
    const { pod, warnings } = injectPersistentPodState(podOf('web-0', { nodeSelector: { [HOST]: 'node-a' } }), pps);
    assert.deepEqual((pod?.spec as Record<string, unknown>).nodeSelector, { [HOST]: 'node-a' });
    assert.match(warnings[0] ?? '', /the pod's value is kept/);
  });

  it('skips a preferred term whose weight the API server would refuse (a PPS that got past admission), with a warning', () => {
    const bad = ppsObject(
      'web',
      {
        requiredPersistentTopology: undefined,
        preferredPersistentTopology: [
          { weight: 0, preference: { nodeTopologyKeys: [ZONE] } },
          { weight: 101, preference: { nodeTopologyKeys: [HOST] } },
        ],
      },
      recorded,
    );
    const { pod, warnings } = injectPersistentPodState(podOf('web-0'), bad);
    assert.equal(pod, undefined);
    assert.equal(warnings.length, 2);
    assert.match(warnings[0]!, /preferredPersistentTopology\[0\].weight 0 is not in \[1, 100\]/);
  });

  it('leaves alone: no entry, an entry without labels, a pod already bound to a node, a pod without a name', () => {
    assert.equal(injectPersistentPodState(podOf('web-2'), pps).pod, undefined);
    assert.equal(injectPersistentPodState(podOf('web-1'), pps).pod, undefined);
    assert.equal(injectPersistentPodState(podOf('web-0', { nodeName: 'node-a' }), pps).pod, undefined);
    assert.equal(injectPersistentPodState({ spec: {} }, pps).pod, undefined);
  });

  it('the handler reads PPSs only for StatefulSet pods, finds theirs by target, never denies', async () => {
    const reader = new FakeReader([
      ppsObject('other', { targetRef: { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db' } }),
      pps,
    ]);
    const handle = persistentPodStateWebhookHandlers(reader)[PPS_POD_WEBHOOK_PATH]!;
    const pinned = await handle(request('CREATE', podOf('web-0')));
    assert.equal(pinned.allowed, true);
    assert.deepEqual(((pinned.allowed && pinned.object) as { spec: { nodeSelector: unknown } }).spec.nodeSelector, {
      [HOST]: 'node-b',
    });

    const plain = podOf('x');
    (plain.metadata as Record<string, unknown>).ownerReferences = [
      { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'r', uid: 'u', controller: true },
    ];
    reader.calls = 0;
    assert.deepEqual(await handle(request('CREATE', plain)), { allowed: true });
    assert.equal(reader.calls, 0);
    assert.deepEqual(await handle(request('UPDATE', podOf('web-0'))), { allowed: true });
    assert.deepEqual(await handle(request('CREATE', podOf('web-0'), { subResource: 'binding' })), { allowed: true });
    assert.equal(reader.calls, 0);

    const failing = persistentPodStateWebhookHandlers(new FakeReader([], new Error('down')))[PPS_POD_WEBHOOK_PATH]!;
    const answer = await failing(request('CREATE', podOf('web-0')));
    assert.equal(answer.allowed, true);
    assert.match((answer.allowed && answer.warnings?.[0]) || '', /not pinned: Error: down/);
  });
});
