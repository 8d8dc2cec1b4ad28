// Pod status generation (kubelet_pods.go#generateAPIPodStatus, #getPhase; status/generate.go) from a runtime view.
import assert from 'node:assert/strict';
import type { ContainerStatus__Output } from '../../../src/cri/types.js';
import type { InstanceView, PodRuntimeView, SandboxView } from '../../cluster/kubelet-lite/runtime-view.js';
import { generatePodStatus, type WaitingReason } from '../../cluster/kubelet-lite/status.js';
import type { Pod } from '../../cluster/kubelet-lite/types.js';
import { testPod } from './pure.test.js';

const NOW = new Date('2026-01-01T00:00:10Z');
const SANDBOX: SandboxView = { id: 'sb', attempt: 0, ready: true, createdAt: 0, ip: '10.0.0.9', additionalIps: [] };

function instance(
  id: string,
  state: string,
  extra: Partial<ContainerStatus__Output> = {},
  restartCount = 0,
): InstanceView {
  return {
    id,
    sandboxId: 'sb',
    createdAt: 0,
    state,
    status: {
      id,
      state,
      started_at: '1767225600000000000',
      finished_at: state === 'CONTAINER_EXITED' ? '1767225605000000000' : '0',
      exit_code: 0,
      reason: '',
      message: '',
      image_ref: 'reg/img@sha256:ab',
      annotations: { 'io.kubernetes.container.restartCount': String(restartCount) },
      ...extra,
    } as ContainerStatus__Output,
  };
}

function status(
  pod: Pod,
  containers: Record<string, InstanceView[]>,
  reasons: Record<string, WaitingReason> = {},
  ready = true,
) {
  const view: PodRuntimeView = { sandboxes: [SANDBOX], containers: new Map(Object.entries(containers)) };
  return generatePodStatus({
    pod,
    view,
    sandbox: SANDBOX,
    hostIPs: ['127.0.0.1'],
    reasons: new Map(Object.entries(reasons)),
    ready: () => ready,
    started: () => true,
    now: NOW,
  });
}

const cond = (s: ReturnType<typeof status>, type: string) => s.conditions?.find((c) => c.type === type);

describe('kubelet-lite: pod status', () => {
  const twoContainers = (): Pod =>
    testPod({
      containers: [
        { name: 'a', image: 'img:1' },
        { name: 'b', image: 'img:2' },
      ],
    });

  it('Running and Ready with both containers running and ready; pod IP from the sandbox', () => {
    const s = status(twoContainers(), {
      a: [instance('1', 'CONTAINER_RUNNING')],
      b: [instance('2', 'CONTAINER_RUNNING')],
    });
    assert.equal(s.phase, 'Running');
    assert.equal(s.podIP, '10.0.0.9');
    assert.deepEqual(s.podIPs, [{ ip: '10.0.0.9' }]);
    for (const t of ['PodScheduled', 'PodReadyToStartContainers', 'Initialized', 'ContainersReady', 'Ready'])
      assert.equal(cond(s, t)?.status, 'True', t);
    assert.deepEqual(s.containerStatuses?.[0], {
      name: 'a',
      state: { running: { startedAt: '2026-01-01T00:00:00Z' } },
      lastState: {},
      ready: true,
      restartCount: 0,
      image: 'img:1',
      imageID: 'reg/img@sha256:ab',
      containerID: 'containerd://1',
      started: true,
    });
  });

  it('Pending while a container waits with CreateContainerConfigError, even with the other running', () => {
    const s = status(
      twoContainers(),
      { a: [instance('1', 'CONTAINER_RUNNING')] },
      { b: { reason: 'CreateContainerConfigError', message: "couldn't find key p_1 in ConfigMap ns1/x" } },
    );
    assert.equal(s.phase, 'Pending');
    assert.deepEqual(s.containerStatuses?.[1]?.state, {
      waiting: { reason: 'CreateContainerConfigError', message: "couldn't find key p_1 in ConfigMap ns1/x" },
    });
    assert.equal(cond(s, 'Ready')?.reason, 'ContainersNotReady');
    assert.equal(cond(s, 'Ready')?.message, 'containers with unready status: [b]');
  });

  it('CrashLoopBackOff: Waiting with the backoff reason, lastState the exited instance, phase Running under Always', () => {
    const pod = testPod({ containers: [{ name: 'a', image: 'img:1' }] });
    const s = status(
      pod,
      { a: [instance('9', 'CONTAINER_EXITED', { exit_code: 1, reason: 'Error' }, 3)] },
      { a: { reason: 'CrashLoopBackOff', message: 'back-off 20s' } },
    );
    assert.equal(s.phase, 'Running');
    const cs = s.containerStatuses?.[0];
    assert.equal(cs?.state.waiting?.reason, 'CrashLoopBackOff');
    assert.equal(cs?.lastState.terminated?.exitCode, 1);
    assert.equal(cs?.lastState.terminated?.reason, 'Error');
    assert.equal(cs?.restartCount, 3);
  });

  it('Succeeded / Failed under restartPolicy Never', () => {
    const never = (): Pod => testPod({ restartPolicy: 'Never', containers: [{ name: 'a', image: 'img:1' }] });
    assert.equal(
      status(never(), { a: [instance('1', 'CONTAINER_EXITED', { exit_code: 0, reason: 'Completed' })] }).phase,
      'Succeeded',
    );
    const failed = status(never(), { a: [instance('1', 'CONTAINER_EXITED', { exit_code: 2, reason: 'Error' })] });
    assert.equal(failed.phase, 'Failed');
    assert.equal(cond(failed, 'Ready')?.reason, 'PodFailed');
  });

  it('PodInitializing while an init container runs; Initialized false naming it', () => {
    const pod = testPod({
      initContainers: [{ name: 'init', image: 'img:1' }],
      containers: [{ name: 'a', image: 'img:1' }],
    });
    const s = status(pod, { init: [instance('1', 'CONTAINER_RUNNING')] });
    assert.equal(s.phase, 'Pending');
    assert.equal(s.containerStatuses?.[0]?.state.waiting?.reason, 'PodInitializing');
    assert.equal(cond(s, 'Initialized')?.status, 'False');
    assert.equal(cond(s, 'Initialized')?.message, 'containers with incomplete status: [init]');
  });

  it('Ready waits for readiness gates and keeps conditions kubelet does not own', () => {
    const pod = testPod({
      containers: [{ name: 'a', image: 'img:1' }],
      readinessGates: [{ conditionType: 'InPlaceUpdateReady' }],
    });
    const running = { a: [instance('1', 'CONTAINER_RUNNING')] };
    const missing = status(pod, running);
    assert.equal(cond(missing, 'Ready')?.status, 'False');
    assert.equal(cond(missing, 'Ready')?.reason, 'ReadinessGatesNotReady');
    assert.equal(cond(missing, 'ContainersReady')?.status, 'True');
    pod.status = { conditions: [{ type: 'InPlaceUpdateReady', status: 'True' }] };
    const gated = status(pod, running);
    assert.equal(cond(gated, 'Ready')?.status, 'True');
    assert.equal(cond(gated, 'InPlaceUpdateReady')?.status, 'True');
  });

  it('keeps lastTransitionTime while a condition keeps its status; a terminal phase is sticky', () => {
    const pod = testPod({ containers: [{ name: 'a', image: 'img:1' }] });
    pod.status = {
      phase: 'Failed',
      conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: '2025-01-01T00:00:00Z' }],
    };
    const s = status(pod, { a: [instance('1', 'CONTAINER_RUNNING')] });
    assert.equal(s.phase, 'Failed');
    assert.equal(cond(s, 'PodScheduled')?.lastTransitionTime, '2025-01-01T00:00:00Z');
  });
});
