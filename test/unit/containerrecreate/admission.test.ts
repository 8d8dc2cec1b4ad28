import assert from 'node:assert/strict';
import type { WireNode, WirePod } from '../../../src/api/wire.js';
import { crrAdmissionHandler, type CrrObjectReader } from '../../../src/controller/admission/crr/handler.js';
import type { AdmissionRequest } from '../../../src/controller/admission/admission-review.js';
import type { KubeObject } from '../../../src/kube/object.js';

const POD: WirePod = {
  metadata: { name: 'web', namespace: 'ns', uid: 'uid-1' },
  spec: {
    nodeName: 'node-a',
    terminationGracePeriodSeconds: 12,
    containers: [
      {
        name: 'app',
        image: 'busybox',
        ports: [{ name: 'http', containerPort: 8080 }],
        lifecycle: { preStop: { httpGet: { path: '/quit', port: 'http' } } },
      },
      { name: 'side', image: 'busybox' },
      { name: 'init-later', image: 'busybox' },
    ],
  },
  status: {
    phase: 'Running',
    containerStatuses: [
      { name: 'app', image: 'busybox', imageID: '', ready: true, restartCount: 2, containerID: 'containerd://aaa' },
      { name: 'side', image: 'busybox', imageID: '', ready: true, restartCount: 0, containerID: 'containerd://bbb' },
      { name: 'init-later', image: 'busybox', imageID: '', ready: false, restartCount: 0 },
    ],
  },
};

function reader(pod: WirePod | undefined, node: WireNode | null = { metadata: { name: 'node-a' } }): CrrObjectReader {
  return {
    pod: () => Promise.resolve(pod ? { found: true, pod: structuredClone(pod) } : { found: false }),
    node: () => Promise.resolve(node ? { found: true, node } : { found: false }),
  };
}

function create(spec: Record<string, unknown>, extra: Partial<AdmissionRequest> = {}): AdmissionRequest {
  return {
    uid: 'r1',
    kind: { group: 'apps.kruise.io', version: 'v1alpha1', kind: 'ContainerRecreateRequest' },
    resource: { group: 'apps.kruise.io', version: 'v1alpha1', resource: 'containerrecreaterequests' },
    namespace: 'ns',
    operation: 'CREATE',
    object: {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'ContainerRecreateRequest',
      metadata: { name: 'c', namespace: 'ns' },
      spec,
    } as KubeObject,
    ...extra,
  };
}

async function denial(
  spec: Record<string, unknown>,
  pod: WirePod | null = POD,
  node?: WireNode | null,
): Promise<string> {
  const decision = await crrAdmissionHandler(
    reader(pod ?? undefined, node === null ? null : (node ?? { metadata: { name: 'node-a' } })),
  )(create(spec));
  assert.equal(decision.allowed, false, 'expected a denial');
  return decision.allowed ? '' : decision.message;
}

describe('CRR admission', () => {
  it('fills defaults, labels and read-only fields from the pod', async () => {
    const decision = await crrAdmissionHandler(reader(POD))(
      create({ podName: 'web', containers: [{ name: 'app' }, { name: 'side' }] }),
    );
    assert.equal(decision.allowed, true);
    const obj = (decision.allowed ? decision.object : undefined) as unknown as {
      metadata: { labels: Record<string, string> };
      spec: { strategy: Record<string, unknown>; containers: Array<Record<string, unknown>> };
    };
    assert.deepEqual(obj.metadata.labels, {
      'crr.apps.kruise.io/active': 'true',
      'crr.apps.kruise.io/node-name': 'node-a',
      'crr.apps.kruise.io/pod-uid': 'uid-1',
    });
    assert.deepEqual(obj.spec.strategy, { failurePolicy: 'Fail', terminationGracePeriodSeconds: 12 });
    assert.deepEqual(obj.spec.containers[0], {
      name: 'app',
      preStop: { httpGet: { path: '/quit', port: 'http' } },
      ports: [{ name: 'http', containerPort: 8080 }],
      statusContext: { containerID: 'containerd://aaa', restartCount: 2 },
    });
    assert.deepEqual(obj.spec.containers[1], {
      name: 'side',
      statusContext: { containerID: 'containerd://bbb', restartCount: 0 },
    });
  });

  it('denies a container the pod does not have, naming the field', async () => {
    assert.equal(
      await denial({ podName: 'web', containers: [{ name: 'app' }, { name: 'nope' }] }),
      'spec.containers[1].name: container nope not found in Pod web',
    );
  });

  it('denies an unscheduled pod and a missing pod', async () => {
    const pending = structuredClone(POD);
    delete pending.spec!.nodeName;
    assert.match(
      await denial({ podName: 'web', containers: [{ name: 'app' }] }, pending),
      /^spec\.podName: not allowed to recreate containers in a pending Pod/,
    );
    assert.equal(
      await denial({ podName: 'web', containers: [{ name: 'app' }] }, null),
      'spec.podName: no found Pod named web in namespace ns',
    );
  });

  it('denies every invalid spec field with OpenKruise messages', async () => {
    assert.equal(
      await denial({ podName: '', containers: [{ name: 'app' }] }),
      'spec.podName: podName can not be empty',
    );
    assert.equal(
      await denial({ podName: 'web', containers: [] }),
      'spec.containers: containers list can not be empty: name at least one container, e.g. [{name: app}]',
    );
    assert.equal(
      await denial({ podName: 'web', containers: [{ name: 'app' }], activeDeadlineSeconds: 2 }),
      'spec.activeDeadlineSeconds: Invalid value: 2: activeDeadlineSeconds can not be less than 3s',
    );
    assert.equal(
      await denial({ podName: 'web', containers: [{ name: 'app' }], strategy: { failurePolicy: 'Retry' } }),
      'spec.strategy.failurePolicy: Unsupported value: "Retry": supported values: "Fail", "Ignore"',
    );
    assert.equal(
      await denial({ podName: 'web', containers: [{ name: 'app' }], strategy: { unreadyGracePeriodSeconds: -1 } }),
      'spec.strategy.unreadyGracePeriodSeconds: Invalid value: -1: unreadyGracePeriodSeconds must be non-negative integer',
    );
    assert.equal(
      await denial({ podName: 'web', containers: [{ name: 'app' }], ttlSecondsAfterFinished: -1 }),
      'spec.ttlSecondsAfterFinished: Invalid value: -1: ttlSecondsAfterFinished must be non-negative integer',
    );
    assert.equal(
      await denial({ podName: 'web', containers: [{ name: 'app' }, { name: 'app' }] }),
      'spec.containers[1].name: can not recreate app multi times',
    );
    assert.equal(
      await denial({
        podName: 'web',
        containers: [{ name: 'app', statusContext: { containerID: 'x', restartCount: 0 } }],
      }),
      'spec.containers[0]: preStop, ports, statusContext in container are ready-only fields',
    );
    assert.equal(
      await denial({ podName: 'web', containers: [{ name: 'init-later' }] }),
      'spec.containers[0].name: no containerID in init-later containerStatus, maybe the container has not been initialized',
    );
    assert.equal(
      await denial({ podName: 'web', containers: [{ name: 'app' }] }, POD, null),
      'spec.podName: failed to get Node node-a',
    );
  });

  it('denies a containers field that is not a list of objects with what was given and what is allowed', async () => {
    const notAList = (given: string): string =>
      `spec.containers: Invalid value: ${given}: must be a list of the containers to recreate, e.g. [{name: app}]`;
    assert.equal(await denial({ podName: 'web', containers: 'app' }), notAList('"app"'));
    assert.equal(await denial({ podName: 'web', containers: 5 }), notAList('5'));
    assert.equal(await denial({ podName: 'web', containers: { name: 'app' } }), notAList('{"name":"app"}'));
    assert.equal(
      await denial({ podName: 'web' }),
      'spec.containers: containers list can not be empty: name at least one container, e.g. [{name: app}]',
    );
    assert.equal(
      await denial({ podName: 'web', containers: ['app', { name: 'side' }] }),
      'spec.containers[0]: Invalid value: "app": must be an object naming the container, e.g. {name: app}',
    );
    assert.equal(
      await denial({ podName: 'web', containers: [{ name: 7 }] }),
      'spec.containers[0].name: Invalid value: 7: must be of type string, got integer',
    );
  });

  it('denies fields of the wrong type by their type, not by a rule about their value, and never crashes', async () => {
    assert.equal(
      await denial({ podName: 5, containers: [{ name: 'app' }], activeDeadlineSeconds: 'soon' }),
      '[spec.podName: Invalid value: 5: must be of type string, got integer, ' +
        'spec.activeDeadlineSeconds: Invalid value: "soon": must be of type integer, got string]',
    );
    assert.equal(
      await denial({ podName: 'web', containers: [{ name: 'app' }], strategy: 'fast' }),
      'spec.strategy: Invalid value: "fast": must be of type object, got string',
    );
    assert.equal(
      await denial({ podName: 'web', containers: [{ name: 'app' }], strategy: { failurePolicy: 1 } }),
      'spec.strategy.failurePolicy: Invalid value: 1: must be of type string, got integer',
    );
    const decision = await crrAdmissionHandler(reader(POD))(
      create({}, { object: { metadata: { name: 'c', namespace: 'ns' }, spec: 'fast' } as unknown as KubeObject }),
    );
    assert.deepEqual(decision, {
      allowed: false,
      code: 400,
      message: 'spec: Invalid value: "fast": must be of type object, got string',
    });
  });

  it('denies an inactive pod', async () => {
    const done = structuredClone(POD);
    done.status!.phase = 'Succeeded';
    assert.match(await denial({ podName: 'web', containers: [{ name: 'app' }] }, done), /inactive Pod/);
  });

  it('update: spec and identity labels are immutable', async () => {
    const old = {
      metadata: {
        name: 'c',
        namespace: 'ns',
        labels: { 'crr.apps.kruise.io/pod-uid': 'u', 'crr.apps.kruise.io/node-name': 'n' },
      },
      spec: { podName: 'web', containers: [{ name: 'app' }] },
    };
    const handler = crrAdmissionHandler(reader(POD));
    const changedSpec = structuredClone(old);
    changedSpec.spec.podName = 'other';
    const d1 = await handler(create({}, { operation: 'UPDATE', object: changedSpec, oldObject: old }));
    assert.deepEqual(d1, { allowed: false, code: 403, message: 'spec: spec of ContainerRecreateRequest is immutable' });
    const relabel = structuredClone(old);
    relabel.metadata.labels['crr.apps.kruise.io/node-name'] = 'm';
    const d2 = await handler(create({}, { operation: 'UPDATE', object: relabel, oldObject: old }));
    assert.equal(d2.allowed, false);
    const labelled = structuredClone(old) as { metadata: { labels: Record<string, string> } };
    labelled.metadata.labels['crr.apps.kruise.io/active'] = 'x';
    assert.equal((await handler(create({}, { operation: 'UPDATE', object: labelled, oldObject: old }))).allowed, true);
  });
});
