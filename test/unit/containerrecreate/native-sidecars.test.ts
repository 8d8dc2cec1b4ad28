// Native sidecars (init containers with restartPolicy Always) in the rules of CRR admission and planning, env-from-
// metadata restarts and launch priority: a sidecar is a container kubelet starts again (whatever the pod's
// restartPolicy), found in initContainerStatuses; a plain init container is refused; a sidecar never takes a launch
// priority or a barrier. Pure: no API server, no runtime (the real cluster: test/e2e/containerrecreate/native-sidecars).
import assert from 'node:assert/strict';
import { RUNTIME_CONTAINERS_META_ANNOTATION } from '../../../src/api/constants.js';
import type { ContainerRecreateRequest } from '../../../src/api/containerrecreaterequest.js';
import { restartPolicyProblem } from '../../../src/api/containerrecreaterequest-restart-policy.js';
import { envHash } from '../../../src/api/runtime-container-meta.js';
import type { WireContainer, WireContainerStatus, WirePod } from '../../../src/api/wire.js';
import type { AdmissionRequest } from '../../../src/controller/admission/admission-review.js';
import { crrAdmissionHandler } from '../../../src/controller/admission/crr/handler.js';
import { mutatePodForLaunchPriority } from '../../../src/controller/admission/launchpriority/pod-mutation.js';
import { reportedContainers } from '../../../src/daemon/containerrecreate/controller.js';
import { nextStep } from '../../../src/daemon/containerrecreate/recreate-states.js';
import { containerPriority } from '../../../src/daemon/containermeta/batches.js';
import { planContainerMeta, type MetaAction } from '../../../src/daemon/containermeta/meta-plan.js';
import { barrierPlan, hasBarrierEnv } from '../../../src/daemon/launchpriority/barrier-plan.js';
import type { RuntimeContainer } from '../../../src/daemon/podruntime/pod-containers.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { rfc3339 } from '../../../src/util/time.js';

const NOW = 1_700_000_100_000;

function status(name: string, restartCount = 0, ready = true): WireContainerStatus {
  return {
    name,
    image: 'busybox',
    imageID: '',
    ready,
    restartCount,
    containerID: `containerd://${name}-1`,
    state: { running: { startedAt: new Date(NOW - 60_000).toISOString() } },
  };
}

/** A pod with a plain init container `setup`, a sidecar `proxy` (preStop exec) and the regular container `app`. */
function sidecarPod(restartPolicy = 'Always', phase = 'Running'): WirePod {
  return {
    metadata: { name: 'web', namespace: 'ns', uid: 'uid-1' },
    spec: {
      nodeName: 'node-a',
      restartPolicy,
      initContainers: [
        { name: 'setup', image: 'busybox' },
        {
          name: 'proxy',
          image: 'busybox',
          restartPolicy: 'Always',
          lifecycle: { preStop: { exec: { command: ['sh', '-c', 'echo bye'] } } },
        },
      ],
      containers: [{ name: 'app', image: 'busybox' }],
    },
    status: {
      phase,
      initContainerStatuses: [
        { ...status('setup'), ready: true, state: { terminated: { exitCode: 0 } } },
        status('proxy', 3),
      ],
      containerStatuses: [status('app')],
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
      spec: { podName: 'web', containers: containers.map((name) => ({ name })) },
    } as KubeObject,
  };
  return crrAdmissionHandler({
    pod: () => Promise.resolve({ found: true, pod: structuredClone(target) }),
    node: () => Promise.resolve({ found: true, node: { metadata: { name: 'node-a' } } }),
  })(request);
}

const SETUP_REFUSED =
  'not allowed to recreate init container setup: it has no restartPolicy Always, so kubelet ran it once before the ' +
  'other containers and never starts it again; only regular containers and native sidecars (init containers with ' +
  'restartPolicy: Always) can be recreated';

describe('native sidecars: CRR admission', () => {
  it('admits a sidecar, with its statusContext from initContainerStatuses and its preStop, even in a restartPolicy Never pod', async () => {
    for (const policy of ['Always', 'Never', 'OnFailure']) {
      const decision = await admit(sidecarPod(policy), ['proxy']);
      assert.equal(decision.allowed, true, `${policy}: ${JSON.stringify(decision)}`);
      const spec = (decision as unknown as { object: { spec: { containers: unknown[] } } }).object.spec;
      assert.deepEqual(spec.containers, [
        {
          name: 'proxy',
          preStop: { exec: { command: ['sh', '-c', 'echo bye'] } },
          statusContext: { containerID: 'containerd://proxy-1', restartCount: 3 },
        },
      ]);
    }
  });

  it('refuses a plain init container with a message saying why, under the container field', async () => {
    assert.deepEqual(await admit(sidecarPod(), ['app', 'setup']), {
      allowed: false,
      code: 400,
      message: `spec.containers[1].name: ${SETUP_REFUSED}`,
    });
  });

  it('refuses a sidecar kubelet has not reported yet, naming initContainerStatus', async () => {
    const pod = sidecarPod();
    pod.status!.initContainerStatuses = pod.status!.initContainerStatuses!.filter((s) => s.name !== 'proxy');
    const decision = await admit(pod, ['proxy']);
    assert.equal(decision.allowed, false);
    assert.match(
      (decision as { message: string }).message,
      /^spec\.containers\[0\]\.name: not found proxy initContainerStatus \(native sidecar\) in Pod Status/,
    );
  });

  it('in a restartPolicy Never pod admits the sidecar and still refuses the regular container beside it', async () => {
    const decision = await admit(sidecarPod('Never'), ['proxy', 'app']);
    assert.equal(decision.allowed, false);
    const message = (decision as { message: string }).message;
    assert.match(message, /spec\.containers\[1\]\.name: .*container app: the Pod's restartPolicy is Never/);
    assert.doesNotMatch(message, /proxy/);
  });

  it('restartPolicyProblem: none for a sidecar of a running pod whatever its policy; a finished pod or a plain init container has one', () => {
    assert.equal(restartPolicyProblem(sidecarPod('Never'), 'proxy'), undefined);
    assert.equal(
      restartPolicyProblem(sidecarPod('Never', 'Succeeded'), 'proxy'),
      'not allowed to recreate sidecar proxy: the Pod is Succeeded, so kubelet starts no sidecar again',
    );
    assert.equal(restartPolicyProblem(sidecarPod(), 'setup'), SETUP_REFUSED);
  });
});

function rc(name: string, id: string, extra: Partial<RuntimeContainer> = {}): RuntimeContainer {
  return {
    id,
    name,
    state: 'running',
    createdAtNs: 1n,
    startedAtMs: NOW - 60_000,
    restartCount: 0,
    plainHash: 0,
    labels: {},
    annotations: {},
    ...extra,
  };
}

function crr(names: string[], orderedRecreate: boolean, states?: Array<{ name: string; phase: 'Recreating' }>) {
  const value: ContainerRecreateRequest = {
    metadata: { name: 'r', namespace: 'ns' },
    spec: {
      podName: 'web',
      containers: names.map((n) => ({
        name: n,
        statusContext: { containerID: `containerd://${n}-1`, restartCount: 0 },
      })),
      strategy: { orderedRecreate },
    },
    status: {
      phase: 'Recreating',
      containerRecreateStates: states?.map((s) => ({ ...s, isKilled: true })),
    },
  };
  return value;
}

describe('native sidecars: the CRR agent', () => {
  it('reads a sidecar from initContainerStatuses and leaves a plain init container out', () => {
    const reported = reportedContainers(sidecarPod(), 'uid-1');
    assert.deepEqual([...reported.keys()], ['app', 'proxy']);
    assert.deepEqual(reported.get('proxy'), { id: 'proxy-1', ready: true, running: true, waiting: undefined });
  });

  it("keeps the CRR's order between a sidecar and a regular container; orderedRecreate waits for the first", () => {
    const reported = reportedContainers(sidecarPod(), 'uid-1');
    const running = new Map([
      ['proxy', rc('proxy', 'proxy-1')],
      ['app', rc('app', 'app-1')],
    ]);
    for (const [names, first] of [
      [['proxy', 'app'], 'proxy'],
      [['app', 'proxy'], 'app'],
    ] as const) {
      const step = nextStep({ crr: crr([...names], true), runtime: running, reported, nowMs: NOW });
      assert.equal(step.kind === 'kill' && step.container, first);
    }
    // proxy stopped, kubelet has not started it again yet
    const stopped = new Map([
      ['proxy', rc('proxy', 'proxy-1', { state: 'exited' })],
      ['app', rc('app', 'app-1')],
    ]);
    const recreating = [{ name: 'proxy', phase: 'Recreating' as const }];
    const ordered = nextStep({ crr: crr(['proxy', 'app'], true, recreating), runtime: stopped, reported, nowMs: NOW });
    assert.equal(ordered.kind, 'wait');
    const unordered = nextStep({
      crr: crr(['proxy', 'app'], false, recreating),
      runtime: stopped,
      reported,
      nowMs: NOW,
    });
    assert.equal(unordered.kind === 'kill' && unordered.container, 'app');
    // kubelet started proxy again (proxy-2, restartCount 1) and reports it ready: app is next
    const restarted = new Map([
      ['proxy', rc('proxy', 'proxy-2', { restartCount: 1 })],
      ['app', rc('app', 'app-1')],
    ]);
    const pod = sidecarPod();
    pod.status!.initContainerStatuses![1] = { ...status('proxy', 1), containerID: 'containerd://proxy-2' };
    const next = nextStep({
      crr: crr(['proxy', 'app'], true, recreating),
      runtime: restarted,
      reported: reportedContainers(pod, 'uid-1'),
      nowMs: NOW,
    });
    assert.equal(next.kind === 'kill' && next.container, 'app');
    assert.equal(next.kind === 'kill' && next.states[0]!.phase, 'Succeeded');
  });
});

/** A container whose env V comes from the pod's annotation k-<name>. */
function envContainer(name: string, extra: Partial<WireContainer> = {}): WireContainer {
  return {
    name,
    image: 'busybox',
    env: [{ name: 'V', valueFrom: { fieldRef: { fieldPath: `metadata.annotations['k-${name}']` } } }],
    ...extra,
  };
}

describe('native sidecars: env from metadata', () => {
  const hashOf = (value: string): number => envHash([{ name: 'V', value }]);
  const updating = (): WirePod => ({
    metadata: {
      name: 'web',
      namespace: 'ns',
      uid: 'u',
      annotations: {
        'k-app': 'v1',
        'k-proxy': 'v2',
        [RUNTIME_CONTAINERS_META_ANNOTATION]: JSON.stringify({
          containers: ['app', 'proxy'].map((name) => ({
            name,
            containerID: `containerd://${name}-1`,
            restartCount: 0,
            hashes: { plainHash: 1, extractedEnvFromMetadataHash: hashOf('v1') },
          })),
        }),
      },
    },
    spec: {
      readinessGates: [{ conditionType: 'InPlaceUpdateReady' }],
      initContainers: [
        envContainer('setup'),
        envContainer('proxy', {
          restartPolicy: 'Always',
          env: [
            { name: 'V', valueFrom: { fieldRef: { fieldPath: "metadata.annotations['k-proxy']" } } },
            { name: 'KRUISE_CONTAINER_PRIORITY', value: '100' },
          ],
        }),
      ],
      containers: [envContainer('app')],
    },
    status: {
      initContainerStatuses: [status('setup'), status('proxy')],
      containerStatuses: [status('app')],
      conditions: [{ type: 'InPlaceUpdateReady', status: 'False', lastTransitionTime: rfc3339(NOW - 10_000) }],
    },
  });

  it('records a sidecar in runtime-containers-meta and restarts it for new values like a regular container', () => {
    const pod = updating();
    const actions = planContainerMeta({
      pod,
      runtime: new Map(['app', 'proxy', 'setup'].map((n) => [n, rc(n, `${n}-1`, { plainHash: 1 })])),
      readEnvHashes: new Map(),
      envUnread: false,
      memory: { stopped: new Set(), restarts: new Map(), noticed: new Map() },
      nowMs: NOW,
      kubeletSettleMs: 0,
    });
    const restarts = actions.filter((a): a is Extract<MetaAction, { kind: 'restart' }> => a.kind === 'restart');
    assert.deepEqual(
      restarts.map((r) => [r.container, r.runtimeId, r.expected]),
      [['proxy', 'proxy-1', hashOf('v2')]],
    );
    const annotate = actions.find((a): a is Extract<MetaAction, { kind: 'annotate' }> => a.kind === 'annotate');
    const state = JSON.parse(annotate!.annotations['apps.kruise.io/inplace-update-state']!) as {
      containerBatchesRecord: Array<{ containers: string[] }>;
    };
    assert.deepEqual(state.containerBatchesRecord[0]!.containers, ['proxy']);
  });

  it('records a sidecar after the regular containers in runtime-containers-meta; a plain init container is left out', () => {
    const pod = updating();
    delete pod.metadata!.annotations![RUNTIME_CONTAINERS_META_ANNOTATION];
    const actions = planContainerMeta({
      pod,
      runtime: new Map(['app', 'proxy', 'setup'].map((n) => [n, rc(n, `${n}-1`, { plainHash: 1 })])),
      readEnvHashes: new Map([
        ['app', hashOf('v1')],
        ['proxy', hashOf('v1')],
        ['setup', hashOf('v1')],
      ]),
      envUnread: false,
      memory: { stopped: new Set(), restarts: new Map(), noticed: new Map() },
      nowMs: NOW,
      kubeletSettleMs: 0,
    });
    const annotate = actions.find((a): a is Extract<MetaAction, { kind: 'annotate' }> => a.kind === 'annotate');
    const meta = JSON.parse(annotate!.annotations[RUNTIME_CONTAINERS_META_ANNOTATION]!) as {
      containers: Array<{ name: string }>;
    };
    assert.deepEqual(
      meta.containers.map((c) => c.name),
      ['app', 'proxy'],
    );
  });

  it('gives a sidecar no launch priority, whatever env it carries', () => {
    const pod = updating();
    assert.equal(containerPriority(pod, pod.spec!.initContainers![1]!), undefined);
  });
});

describe('native sidecars: launch priority', () => {
  const barrierEnv = (key: string) => ({
    name: 'KRUISE_CONTAINER_BARRIER',
    valueFrom: { configMapKeyRef: { name: 'web-barrier', key: key } },
  });

  it('the webhook never gives a sidecar a barrier and removes one given to it, with warnings', () => {
    const result = mutatePodForLaunchPriority({
      operation: 'CREATE',
      resource: { group: '', version: 'v1', resource: 'pods' },
      namespace: 'ns',
      object: {
        metadata: { name: 'web' },
        spec: {
          initContainers: [
            {
              name: 'proxy',
              restartPolicy: 'Always',
              env: [{ name: 'KRUISE_CONTAINER_PRIORITY', value: '5' }, barrierEnv('p_-1')],
            },
          ],
          containers: [
            { name: 'a', env: [{ name: 'KRUISE_CONTAINER_PRIORITY', value: '1' }] },
            { name: 'b', env: [{ name: 'KRUISE_CONTAINER_PRIORITY', value: '-1' }] },
          ],
        },
      },
    });
    assert.equal(result.allowed, true);
    const { object, warnings } = result as unknown as {
      object: { spec: { initContainers: WireContainer[] } };
      warnings: string[];
    };
    assert.deepEqual(object.spec.initContainers[0]!.env, [{ name: 'KRUISE_CONTAINER_PRIORITY', value: '5' }]);
    assert.deepEqual(warnings, [
      'spec.initContainers[0]: env KRUISE_CONTAINER_PRIORITY is ignored on an init container: kubelet starts init containers and native sidecars before every regular container',
      'spec.initContainers[0]: env KRUISE_CONTAINER_BARRIER was removed: an init container or native sidecar waiting on a launch barrier would block the regular containers, which kubelet starts after it',
    ]);
  });

  it('the agent releases a barrier key an init container waits on with the first level, and says so', () => {
    const pod = {
      metadata: { name: 'web' },
      spec: {
        initContainers: [{ name: 'proxy', restartPolicy: 'Always', env: [barrierEnv('p_-1')] }],
        containers: [
          { name: 'a', env: [barrierEnv('p_1')] },
          { name: 'b', env: [barrierEnv('p_-1')] },
        ],
      },
    };
    const plan = barrierPlan(pod);
    assert.deepEqual(plan.levels, [
      { priority: 1, keys: ['p_1', 'p_-1'], containers: ['a'] },
      { priority: -1, keys: ['p_-1'], containers: ['b'] },
    ]);
    assert.equal(plan.problems.length, 1);
    assert.match(
      plan.problems[0]!,
      /^init container proxy: env KRUISE_CONTAINER_BARRIER \(key p_-1\) is released with the first level/,
    );

    const onlyInit = {
      metadata: { name: 'web' },
      spec: { initContainers: pod.spec.initContainers, containers: [{ name: 'a' }] },
    };
    assert.equal(hasBarrierEnv(onlyInit), true);
    assert.deepEqual(barrierPlan(onlyInit).levels, [{ priority: -1, keys: ['p_-1'], containers: [] }]);
  });
});
