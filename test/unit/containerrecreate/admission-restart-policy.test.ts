// CRR admission of containers kubelet would not start again once stopped, for some exit code a stop can give (0..255):
// the Pod's restartPolicy, the container's own, and its restartPolicyRules (KEP-5307) decided as kubelet 1.37.2 does
// (pkg/api/v1/pod/util.go ContainerShouldRestart): denied with a message under the container's field, else admitted.
import assert from 'node:assert/strict';
import type { V1ContainerRestartRule } from '@kubernetes/client-node';
import {
  codeRanges,
  exitCodesNotRestarted,
  restartDecision,
  restartPolicyProblem,
} from '../../../src/api/containerrecreaterequest-restart-policy.js';
import type { WireContainer, WirePod } from '../../../src/api/wire.js';
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
        "spec.containers[0].name: not allowed to recreate container app: the Pod's restartPolicy is Never, so kubelet " +
        'would not start it again whatever exit code the stop ends it with (a stop may end a container with any ' +
        "code: 0 when it handles the signal, 143 when SIGTERM kills it, 137 after the grace period's SIGKILL)",
    });
  });

  it('denies OnFailure, naming the clean exit a SIGTERM may give', async () => {
    const decision = await admit(pod('OnFailure'), ['side']);
    assert.equal(decision.allowed, false);
    assert.match(
      decision.allowed ? '' : decision.message,
      /^spec\.containers\[0\]\.name: not allowed to recreate container side: the Pod's restartPolicy is OnFailure, so kubelet would not start it again if the stop ends it with exit code 0 /,
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

type Rule = V1ContainerRestartRule;
const restart = (operator: string, values: number[]): Rule => ({ action: 'Restart', exitCodes: { operator, values } });
const restartAll = (operator: string, values: number[]): Rule => ({
  action: 'RestartAllContainers',
  exitCodes: { operator, values },
});

function ruled(podPolicy: string | undefined, own: string | undefined, rules?: Rule[]): WirePod {
  const app: WireContainer = {
    name: 'app',
    image: 'busybox',
    ...(own === undefined ? {} : { restartPolicy: own }),
    ...(rules === undefined ? {} : { restartPolicyRules: rules }),
  };
  return { spec: { ...(podPolicy === undefined ? {} : { restartPolicy: podPolicy }), containers: [app] } };
}

describe('CRR admission: the exit codes kubelet would not restart (policies × restartPolicyRules)', () => {
  // [what, pod policy, container policy, rules, exit codes kubelet would not restart ('' = admitted)]
  const table: Array<[string, string | undefined, string | undefined, Rule[] | undefined, string]> = [
    ['pod unset (Always)', undefined, undefined, undefined, ''],
    ['pod Always', 'Always', undefined, undefined, ''],
    ['pod OnFailure: a clean exit stays down', 'OnFailure', undefined, undefined, '0'],
    ['pod Never', 'Never', undefined, undefined, '0-255'],
    ["own Always over the pod's Never", 'Never', 'Always', undefined, ''],
    ["own Never over the pod's Always", 'Always', 'Never', undefined, '0-255'],
    ['own OnFailure', undefined, 'OnFailure', undefined, '0'],
    [
      'rule Restart In [0, 143], own Never: 137 (SIGKILL) stays down',
      'Never',
      'Never',
      [restart('In', [0, 143])],
      '1-142, 144-255',
    ],
    ['rule Restart In [0] covers what OnFailure leaves', 'Never', 'OnFailure', [restart('In', [0])], ''],
    ['rule Restart NotIn [255], own Never', 'Never', 'Never', [restart('NotIn', [255])], '255'],
    ['rule Restart NotIn [255], own OnFailure restarts 255', 'Never', 'OnFailure', [restart('NotIn', [255])], ''],
    ['rule Restart NotIn [] matches every code', 'Never', 'Never', [restart('NotIn', [])], ''],
    ['a rule without exitCodes never matches', 'Always', 'Never', [{ action: 'Restart' }], '0-255'],
    ['an unknown operator never matches', 'Always', 'Never', [restart('Maybe', [0])], '0-255'],
    ['RestartAllContainers restarts the container too', 'Never', 'Never', [restartAll('NotIn', [])], ''],
    [
      'rules in order: RestartAllContainers on 137/143, Restart on 0',
      'Never',
      'Never',
      [restartAll('In', [137, 143]), restart('In', [0])],
      '1-136, 138-142, 144-255',
    ],
    [
      'the first matching rule decides: an unknown action falls to the policy, not to the next rule',
      'Always',
      'Never',
      [{ action: 'Later', exitCodes: { operator: 'In', values: [0] } }, restart('NotIn', [])],
      '0',
    ],
    ["an unknown own policy: its rules, then the Pod's policy", 'Never', 'Sometimes', [restart('In', [0])], '1-255'],
  ];
  for (const [what, podPolicy, own, rules, refused] of table) {
    it(what, () => {
      const target = ruled(podPolicy, own, rules);
      assert.equal(codeRanges(exitCodesNotRestarted(target, 'app')), refused);
      assert.equal(restartPolicyProblem(target, 'app') === undefined, refused === '');
    });
  }

  it('says which rule decided', () => {
    const target = ruled('Never', 'Never', [restartAll('In', [137, 143]), restart('In', [0])]);
    assert.deepEqual(restartDecision(target, 'app', 143), {
      restarts: true,
      source: 'rule',
      rule: { index: 0, action: 'RestartAllContainers' },
    });
    assert.deepEqual(restartDecision(target, 'app', 0), {
      restarts: true,
      source: 'rule',
      rule: { index: 1, action: 'Restart' },
    });
    assert.deepEqual(restartDecision(target, 'app', 1), { restarts: false, source: 'container', policy: 'Never' });
  });

  it('the message names the policy, the rules and the exit codes left down', () => {
    assert.equal(
      restartPolicyProblem(ruled('Never', 'Never', [restart('In', [0, 143])]), 'app'),
      'not allowed to recreate container app: its own restartPolicy is Never and no Restart or RestartAllContainers ' +
        'rule of its restartPolicyRules matches those codes, so kubelet would not start it again if the stop ends it ' +
        'with exit code 1-142, 144-255 (a stop may end a container with any code: 0 when it handles the signal, 143 ' +
        "when SIGTERM kills it, 137 after the grace period's SIGKILL)",
    );
  });

  it('a native sidecar (init container with restartPolicy Always) is restarted after any exit, even in a Never pod', () => {
    const target: WirePod = {
      spec: {
        restartPolicy: 'Never',
        initContainers: [{ name: 'proxy', image: 'busybox', restartPolicy: 'Always' }],
        containers: [{ name: 'app', image: 'busybox' }],
      },
    };
    assert.equal(restartPolicyProblem(target, 'proxy'), undefined);
  });
});
