// CRR admission of containers kubelet would not start again once stopped: restartPolicy Never or OnFailure (the pod's,
// or the container's own) is denied with a message under the container's field; Always (or unset) is admitted.
import assert from 'node:assert/strict';
import type { WirePod } from '../../../src/api/wire.js';
import type { AdmissionRequest } from '../../../src/controller/admission/admission-review.js';
import { crrAdmissionHandler } from '../../../src/controller/admission/crr/handler.js';
import type { KubeObject } from '../../../src/kube/object.js';

function pod(restartPolicy?: string, appPolicy?: string): WirePod {
  return {
    metadata: { name: 'job', namespace: 'ns', uid: 'uid-1' },
    spec: {
      nodeName: 'node-a',
      ...(restartPolicy === undefined ? {} : { restartPolicy }),
      containers: [
        { name: 'app', image: 'busybox', ...(appPolicy === undefined ? {} : { restartPolicy: appPolicy }) },
        { name: 'side', image: 'busybox' },
      ],
    },
    status: {
      phase: 'Running',
      containerStatuses: ['app', 'side'].map((name) => ({
        name,
        image: 'busybox',
        imageID: '',
        ready: true,
        restartCount: 0,
        containerID: `containerd://${name}-1`,
      })),
    },
  };
}

function admit(target: WirePod, containers: string[]) {
  const request: AdmissionRequest = {
    uid: 'r1',
    kind: { group: 'apps.kruise.io', version: 'v1alpha1', kind: 'ContainerRecreateRequest' },
    resource: { group: 'apps.kruise.io', version: 'v1alpha1', resource: 'containerrecreaterequests' },
    namespace: 'ns',
    operation: 'CREATE',
    object: {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'ContainerRecreateRequest',
      metadata: { name: 'c', namespace: 'ns' },
      spec: { podName: 'job', containers: containers.map((name) => ({ name })) },
    } as KubeObject,
  };
  return crrAdmissionHandler({
    pod: () => Promise.resolve({ found: true, pod: structuredClone(target) }),
    node: () => Promise.resolve({ found: true, node: { metadata: { name: 'node-a' } } }),
  })(request);
}

describe('CRR admission: restartPolicy', () => {
  it('denies a container of a restartPolicy Never pod: kubelet would never start it again', async () => {
    const decision = await admit(pod('Never'), ['app']);
    assert.deepEqual(decision, {
      allowed: false,
      code: 400,
      message:
        "spec.containers[0].name: not allowed to recreate container app: the Pod's restartPolicy is Never, so kubelet never starts it again once stopped",
    });
  });

  it('denies OnFailure, naming the clean exit a SIGTERM may give', async () => {
    const decision = await admit(pod('OnFailure'), ['side']);
    assert.equal(decision.allowed, false);
    assert.match(
      decision.allowed ? '' : decision.message,
      /^spec\.containers\[0\]\.name: .*not allowed to recreate container side: the Pod's restartPolicy is OnFailure, so kubelet starts it again only after a non-zero exit/,
    );
  });

  it("a container's own restartPolicy wins over the pod's (container restart rules)", async () => {
    assert.equal((await admit(pod('Never', 'Always'), ['app'])).allowed, true);
    const decision = await admit(pod(undefined, 'Never'), ['side', 'app']);
    assert.equal(decision.allowed, false);
    assert.match(
      decision.allowed ? '' : decision.message,
      /^spec\.containers\[1\]\.name: .*container app: its own restartPolicy is Never/,
    );
  });

  it('admits Always and an unset restartPolicy', async () => {
    assert.equal((await admit(pod('Always'), ['app', 'side'])).allowed, true);
    assert.equal((await admit(pod(), ['app'])).allowed, true);
  });
});
