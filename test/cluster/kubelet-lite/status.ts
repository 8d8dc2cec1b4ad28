// Pod status as kubelet reports it (kubelet_pods.go#generateAPIPodStatus, #convertToAPIContainerStatuses,
// #getPhase; status/generate.go for the conditions). Pure: everything it needs comes in through StatusInputs.
import type { InstanceView, PodRuntimeView, SandboxView } from './runtime-view.js';
import { isoFromNanos } from './runtime-view.js';
import { restartCountOf } from './labels.js';
import type { Container, ContainerState, ContainerStatus, Pod, PodCondition, PodStatus } from './types.js';

export interface WaitingReason {
  reason: string;
  message: string;
}

export interface StatusInputs {
  pod: Pod;
  view: PodRuntimeView;
  /** The pod's current sandbox, if any. */
  sandbox?: SandboxView;
  hostIPs: string[];
  /** Last start failure per container name (kubelet's reasonCache). */
  reasons: Map<string, WaitingReason>;
  ready(container: Container, id: string): boolean;
  started(container: Container, id: string): boolean;
  /** The pod is being terminated (deletionTimestamp) and its containers are stopped. */
  terminal?: boolean;
  now: Date;
}

/** Kubelet-owned condition types; any other condition (readiness gates) is kept as it is. */
const OWNED = new Set(['PodScheduled', 'PodReadyToStartContainers', 'Initialized', 'ContainersReady', 'Ready']);

function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d+Z$/, 'Z');
}

function terminatedOf(instance: InstanceView): ContainerState {
  const s = instance.status;
  return {
    terminated: {
      exitCode: s?.exit_code ?? 0,
      reason: s?.reason || undefined,
      message: s?.message || undefined,
      startedAt: isoFromNanos(s?.started_at),
      finishedAt: isoFromNanos(s?.finished_at),
      containerID: `containerd://${instance.id}`,
    },
  };
}

function stateOf(instance: InstanceView): ContainerState {
  if (instance.state === 'CONTAINER_RUNNING')
    return { running: { startedAt: isoFromNanos(instance.status?.started_at) } };
  if (instance.state === 'CONTAINER_EXITED') return terminatedOf(instance);
  if (instance.state === 'CONTAINER_CREATED') return { waiting: { reason: 'ContainerCreating' } };
  return {
    terminated: {
      exitCode: 137,
      reason: 'ContainerStatusUnknown',
      message: 'The container could not be located when the pod was terminated',
      containerID: `containerd://${instance.id}`,
    },
  };
}

function containerStatus(c: Container, inputs: StatusInputs, defaultWaiting: string): ContainerStatus {
  const instances = inputs.view.containers.get(c.name) ?? [];
  const latest = instances[0];
  const recorded = inputs.reasons.get(c.name);
  if (!latest) {
    return {
      name: c.name,
      state: { waiting: recorded ? { ...recorded } : { reason: defaultWaiting } },
      lastState: {},
      ready: false,
      restartCount: 0,
      image: c.image,
      imageID: '',
      started: false,
    };
  }
  const running = latest.state === 'CONTAINER_RUNNING';
  let state = stateOf(latest);
  let lastState: ContainerState = {};
  if (running) {
    const previous = instances[1];
    if (previous) lastState = stateOf(previous);
  } else if (recorded && !inputs.terminal) {
    // to be restarted, with a recorded failure (CrashLoopBackOff, CreateContainerConfigError, ...)
    lastState = state;
    state = { waiting: { ...recorded } };
  }
  return {
    name: c.name,
    state,
    lastState,
    ready: running && inputs.ready(c, latest.id),
    restartCount: restartCountOf(latest.status?.annotations),
    image: c.image,
    imageID: latest.status?.image_ref ?? '',
    containerID: `containerd://${latest.id}`,
    started: running && inputs.started(c, latest.id),
  };
}

/** getPhase (1.28-1.31 rules; a terminal phase is kept). */
export function podPhase(pod: Pod, init: ContainerStatus[], regular: ContainerStatus[], terminal: boolean): string {
  const previous = pod.status?.phase;
  if (previous === 'Succeeded' || previous === 'Failed') return previous;
  const policy = pod.spec.restartPolicy ?? 'Always';
  let pendingInit = 0;
  let failedInit = 0;
  const sidecars = new Set(
    (pod.spec.initContainers ?? []).filter((c) => c.restartPolicy === 'Always').map((c) => c.name),
  );
  for (const s of init) {
    if (sidecars.has(s.name)) {
      if (!(s.state.running && s.started)) pendingInit++;
      continue;
    }
    if (s.state.terminated) {
      if (s.state.terminated.exitCode !== 0) failedInit++;
    } else if (s.state.waiting) {
      if (s.lastState.terminated && s.lastState.terminated.exitCode !== 0) failedInit++;
      else pendingInit++;
    } else pendingInit++;
  }
  let unknown = 0;
  let running = 0;
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;
  for (const s of regular) {
    if (s.state.running) running++;
    else if (s.state.terminated) {
      stopped++;
      if (s.state.terminated.exitCode === 0) succeeded++;
    } else if (s.state.waiting) {
      if (s.lastState.terminated) stopped++;
      else waiting++;
    } else unknown++;
  }
  if (failedInit > 0 && policy === 'Never') return 'Failed';
  if (waiting > 0) return 'Pending';
  if (pendingInit > 0 && running === 0 && stopped === 0) return 'Pending';
  if (running > 0 && unknown === 0)
    return terminal ? (succeeded === regular.length ? 'Succeeded' : 'Failed') : 'Running';
  if (running === 0 && stopped > 0 && unknown === 0) {
    if (terminal || policy === 'Never') return stopped === succeeded ? 'Succeeded' : 'Failed';
    if (policy === 'Always') return 'Running';
    return stopped === succeeded ? 'Succeeded' : 'Running';
  }
  return 'Pending';
}

function condition(
  old: PodCondition[],
  type: string,
  ok: boolean,
  now: Date,
  reason?: string,
  message?: string,
): PodCondition {
  const status = ok ? 'True' : 'False';
  const previous = old.find((c) => c.type === type);
  const c: PodCondition = {
    type,
    status,
    lastProbeTime: null,
    lastTransitionTime:
      previous && previous.status === status && previous.lastTransitionTime
        ? previous.lastTransitionTime
        : rfc3339(now),
  };
  if (!ok && reason) c.reason = reason;
  if (!ok && message) c.message = message;
  return c;
}

export function generatePodStatus(inputs: StatusInputs): PodStatus {
  const { pod, now } = inputs;
  const old = pod.status ?? {};
  const oldConditions = old.conditions ?? [];
  const initSpecs = pod.spec.initContainers ?? [];
  const init = initSpecs.map((c) => containerStatus(c, inputs, 'PodInitializing'));
  const regular = pod.spec.containers.map((c) =>
    containerStatus(c, inputs, initSpecs.length > 0 ? 'PodInitializing' : 'ContainerCreating'),
  );
  const phase = podPhase(pod, init, regular, inputs.terminal ?? false);
  const done = phase === 'Succeeded' || phase === 'Failed';
  const sandboxReady =
    inputs.sandbox?.ready === true && (pod.spec.hostNetwork === true || inputs.sandbox.ip !== undefined);

  const notInitialized = initSpecs
    .filter((c, i) => {
      const s = init[i]!;
      if (c.restartPolicy === 'Always') return !(s.state.running && s.started);
      return !(s.state.terminated && s.state.terminated.exitCode === 0);
    })
    .map((c) => c.name);
  const initialized = notInitialized.length === 0 || (phase === 'Running' && initSpecs.length === 0);
  const unready = regular.filter((s) => !s.ready).map((s) => s.name);
  const containersReady = unready.length === 0 && !done;
  const gateProblems: string[] = [];
  for (const gate of pod.spec.readinessGates ?? []) {
    const c = oldConditions.find((x) => x.type === gate.conditionType);
    if (!c) gateProblems.push(`corresponding condition of pod readiness gate "${gate.conditionType}" does not exist.`);
    else if (c.status !== 'True')
      gateProblems.push(`the status of pod readiness gate "${gate.conditionType}" is not "True", but ${c.status}`);
  }
  const notReadyReason = done ? (phase === 'Succeeded' ? 'PodCompleted' : 'PodFailed') : 'ContainersNotReady';
  const unreadyMessage = `containers with unready status: [${unready.join(' ')}]`;
  const conditions: PodCondition[] = [
    condition(oldConditions, 'PodReadyToStartContainers', sandboxReady && !inputs.terminal, now),
    condition(
      oldConditions,
      'Initialized',
      initialized,
      now,
      'ContainersNotInitialized',
      `containers with incomplete status: [${notInitialized.join(' ')}]`,
    ),
    condition(
      oldConditions,
      'Ready',
      containersReady && gateProblems.length === 0,
      now,
      !containersReady ? notReadyReason : 'ReadinessGatesNotReady',
      !containersReady ? (done ? undefined : unreadyMessage) : gateProblems.join(', '),
    ),
    condition(
      oldConditions,
      'ContainersReady',
      containersReady,
      now,
      notReadyReason,
      done ? undefined : unreadyMessage,
    ),
    condition(oldConditions, 'PodScheduled', true, now),
    ...oldConditions.filter((c) => !OWNED.has(c.type)),
  ];
  const ips = inputs.sandbox?.ready && inputs.sandbox.ip ? [inputs.sandbox.ip, ...inputs.sandbox.additionalIps] : [];
  const podIPs = pod.spec.hostNetwork ? inputs.hostIPs : ips;
  const status: PodStatus = {
    ...old,
    phase,
    conditions,
    hostIP: inputs.hostIPs[0],
    hostIPs: inputs.hostIPs.map((ip) => ({ ip })),
    startTime: old.startTime ?? rfc3339(now),
    containerStatuses: regular,
  };
  if (initSpecs.length > 0) status.initContainerStatuses = init;
  if (podIPs.length > 0) {
    status.podIP = podIPs[0];
    status.podIPs = podIPs.map((ip) => ({ ip }));
  } else if (!done) {
    // keep the last IP of a finished pod (kubelet keeps it); drop it otherwise while no sandbox is ready
    delete status.podIP;
    delete status.podIPs;
  }
  return status;
}
