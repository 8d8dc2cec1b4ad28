// Admission of ContainerRecreateRequests (OpenKruise's CRR mutating webhook, reference §1.3): on create the
// defaults, the labels and each container's preStop/ports/statusContext filled from the pod, and every check
// with OpenKruise's message under the path of the field; on update spec and the identity labels are immutable.
// This webhook runs before the CRD schema, so it checks the shapes it reads itself: a field of the wrong type is
// denied by its type with the value given, never by a rule about its value.
import {
  CRR_ACTIVE_LABEL,
  CRR_FAILURE_POLICIES,
  CRR_MIN_ACTIVE_DEADLINE_SECONDS,
  CRR_NODE_NAME_LABEL,
  CRR_POD_UID_LABEL,
  CRR_UNREADY_ACQUIRED_KEY,
  VIRTUAL_KUBELET_LABEL,
  VIRTUAL_KUBELET_LABEL_VALUE,
} from './constants.js';
import type {
  ContainerRecreateRequest,
  ContainerRecreateRequestContainer,
  ContainerRecreateRequestStrategy,
} from './containerrecreaterequest.js';
import { fieldError, notSupportedError, typeError } from './field-checks.js';
import type { FieldError } from './field-errors.js';
import type { WireNode, WirePod } from './wire.js';
import { isRecord } from '../util/is-record.js';

/** Pod condition OpenKruise accepts as "sidecars terminated" (a finished pod may still be recreated then). */
export const SIDECAR_TERMINATED_CONDITION = 'SidecarTerminated';

const invalid = (field: string, message: string, given?: unknown): FieldError =>
  fieldError('FieldValueInvalid', field, message, given);
const required = (field: string, message: string): FieldError => ({ field, type: 'FieldValueRequired', message });
const forbidden = (field: string, message: string): FieldError => ({ field, type: 'FieldValueForbidden', message });

function isInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v);
}

/** An error when a present value is not an integer, or is an integer below `minimum`. */
function integerError(field: string, value: unknown, minimum: number, rule: string): FieldError | undefined {
  const shape = typeError(field, value, 'integer');
  if (shape) return shape;
  return isInt(value) && value < minimum ? invalid(field, rule, value) : undefined;
}

const EMPTY_CONTAINERS = 'containers list can not be empty: name at least one container, e.g. [{name: app}]';

/** spec.containers must be a non-empty list of objects whose name is a string (empty names: fillCrrFromPod). */
function containerListErrors(containers: unknown): FieldError[] {
  const path = 'spec.containers';
  if (containers === undefined || containers === null) return [required(path, EMPTY_CONTAINERS)];
  if (!Array.isArray(containers)) {
    return [
      fieldError(
        'FieldValueTypeInvalid',
        path,
        'must be a list of the containers to recreate, e.g. [{name: app}]',
        containers,
      ),
    ];
  }
  if (containers.length === 0) return [required(path, EMPTY_CONTAINERS)];
  const errors: FieldError[] = [];
  containers.forEach((container: unknown, i) => {
    const at = `${path}[${i}]`;
    if (!isRecord(container)) {
      errors.push(
        fieldError('FieldValueTypeInvalid', at, 'must be an object naming the container, e.g. {name: app}', container),
      );
      return;
    }
    const nameError = typeError(`${at}.name`, container['name'], 'string');
    if (nameError) errors.push(nameError);
  });
  return errors;
}

/** Checks that need no pod, and the strategy defaults. Mutates `crr` (a copy of the request's object). */
export function defaultAndCheckCrrSpec(crr: ContainerRecreateRequest): FieldError[] {
  const specError = typeError('spec', crr.spec, 'object');
  if (specError) return [specError];
  const errors: FieldError[] = [];
  const add = (error: FieldError | undefined): void => {
    if (error) errors.push(error);
  };
  const spec = (crr.spec ??= { podName: '', containers: [] });
  const podNameError = typeError('spec.podName', spec.podName, 'string');
  if (podNameError) errors.push(podNameError);
  else if (!spec.podName) errors.push(required('spec.podName', 'podName can not be empty'));
  const labels = (crr.metadata.labels ??= {});
  labels[CRR_ACTIVE_LABEL] = 'true';
  errors.push(...containerListErrors(spec.containers));
  add(
    integerError(
      'spec.activeDeadlineSeconds',
      spec.activeDeadlineSeconds,
      CRR_MIN_ACTIVE_DEADLINE_SECONDS,
      `activeDeadlineSeconds can not be less than ${CRR_MIN_ACTIVE_DEADLINE_SECONDS}s`,
    ),
  );
  add(
    integerError(
      'spec.ttlSecondsAfterFinished',
      spec.ttlSecondsAfterFinished,
      0,
      'ttlSecondsAfterFinished must be non-negative integer',
    ),
  );
  const strategyError = typeError('spec.strategy', spec.strategy, 'object');
  if (strategyError) errors.push(strategyError);
  else errors.push(...defaultAndCheckStrategy((spec.strategy ??= {})));
  return errors;
}

/** The strategy's durations, and failurePolicy (empty → Fail). */
function defaultAndCheckStrategy(strategy: ContainerRecreateRequestStrategy): FieldError[] {
  const errors: FieldError[] = [];
  for (const field of ['terminationGracePeriodSeconds', 'unreadyGracePeriodSeconds', 'minStartedSeconds'] as const) {
    const error = integerError(`spec.strategy.${field}`, strategy[field], 0, `${field} must be non-negative integer`);
    if (error) errors.push(error);
  }
  const failurePolicy: unknown = strategy.failurePolicy;
  const failurePolicyError =
    typeError('spec.strategy.failurePolicy', failurePolicy, 'string') ??
    notSupportedError('spec.strategy.failurePolicy', failurePolicy, CRR_FAILURE_POLICIES);
  if (failurePolicyError) errors.push(failurePolicyError);
  else if (!failurePolicy) strategy.failurePolicy = 'Fail';
  return errors;
}

export type PodLookup = { found: true; pod: WirePod } | { found: false };
export type NodeLookup = { found: true; node: WireNode } | { found: false };

function podIsActive(pod: WirePod): boolean {
  const phase = pod.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && !pod.metadata?.deletionTimestamp;
}

/** Checks against the pod; on success fills labels, grace period and each container's read-only fields. */
export function fillCrrFromPod(crr: ContainerRecreateRequest, lookup: PodLookup): FieldError[] {
  const spec = crr.spec;
  const ns = crr.metadata.namespace ?? '';
  if (!lookup.found) {
    return [
      {
        field: 'spec.podName',
        type: 'FieldValueNotFound',
        message: `no found Pod named ${spec.podName} in namespace ${ns}`,
      },
    ];
  }
  const pod = lookup.pod;
  const sidecarTerminated = (pod.status?.conditions ?? []).some((c) => c.type === SIDECAR_TERMINATED_CONDITION);
  if (!podIsActive(pod) && !sidecarTerminated) {
    return [invalid('spec.podName', `not allowed to recreate containers in an inactive Pod ${spec.podName}`)];
  }
  if (!pod.spec?.nodeName) {
    return [
      invalid(
        'spec.podName',
        `not allowed to recreate containers in a pending Pod: ${spec.podName} is not scheduled to a node yet`,
      ),
    ];
  }
  const labels = (crr.metadata.labels ??= {});
  labels[CRR_NODE_NAME_LABEL] = pod.spec.nodeName;
  labels[CRR_POD_UID_LABEL] = pod.metadata?.uid ?? '';
  if (
    spec.strategy &&
    (spec.strategy.terminationGracePeriodSeconds === undefined || spec.strategy.terminationGracePeriodSeconds === null)
  ) {
    if (pod.spec.terminationGracePeriodSeconds !== undefined) {
      spec.strategy.terminationGracePeriodSeconds = pod.spec.terminationGracePeriodSeconds;
    }
  }
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  spec.containers.forEach((c: ContainerRecreateRequestContainer, i) => {
    const path = `spec.containers[${i}]`;
    if (!c || typeof c.name !== 'string' || c.name === '') {
      errors.push(required(`${path}.name`, 'container name can not be empty'));
      return;
    }
    if (seen.has(c.name)) {
      errors.push({
        field: `${path}.name`,
        type: 'FieldValueDuplicate',
        message: `can not recreate ${c.name} multi times`,
      });
      return;
    }
    seen.add(c.name);
    if (c.preStop !== undefined || c.ports !== undefined || c.statusContext !== undefined) {
      errors.push(forbidden(path, 'preStop, ports, statusContext in container are ready-only fields'));
      return;
    }
    const podContainer = (pod.spec?.containers ?? []).find((pc) => pc.name === c.name);
    if (!podContainer) {
      errors.push({
        field: `${path}.name`,
        type: 'FieldValueNotFound',
        message: `container ${c.name} not found in Pod ${spec.podName}`,
      });
      return;
    }
    const status = (pod.status?.containerStatuses ?? []).find((cs) => cs.name === c.name);
    if (!status) {
      errors.push(invalid(`${path}.name`, `not found ${c.name} containerStatus in Pod Status`));
      return;
    }
    if (!status.containerID) {
      errors.push(
        invalid(
          `${path}.name`,
          `no containerID in ${c.name} containerStatus, maybe the container has not been initialized`,
        ),
      );
      return;
    }
    const preStop = podContainer.lifecycle?.preStop;
    if (preStop && (preStop.exec || preStop.httpGet || preStop.tcpSocket)) {
      c.preStop = {};
      if (preStop.exec) c.preStop.exec = preStop.exec;
      if (preStop.httpGet) c.preStop.httpGet = preStop.httpGet;
      if (preStop.tcpSocket) c.preStop.tcpSocket = preStop.tcpSocket;
      if (preStop.httpGet && podContainer.ports) c.ports = podContainer.ports;
    }
    c.statusContext = { containerID: status.containerID, restartCount: status.restartCount ?? 0 };
  });
  return errors;
}

/** The virtual-kubelet label is copied from the node (a missing node is an error). */
export function fillCrrFromNode(crr: ContainerRecreateRequest, nodeName: string, lookup: NodeLookup): FieldError[] {
  if (!lookup.found)
    return [{ field: 'spec.podName', type: 'FieldValueNotFound', message: `failed to get Node ${nodeName}` }];
  if (lookup.node.metadata?.labels?.[VIRTUAL_KUBELET_LABEL] === VIRTUAL_KUBELET_LABEL_VALUE) {
    (crr.metadata.labels ??= {})[VIRTUAL_KUBELET_LABEL] = VIRTUAL_KUBELET_LABEL_VALUE;
  }
  return [];
}

/** Update: spec and the identity labels are immutable; the unready-acquired time, once set, too. */
export function validateCrrUpdate(crr: ContainerRecreateRequest, old: ContainerRecreateRequest): FieldError[] {
  const errors: FieldError[] = [];
  if (JSON.stringify(crr.spec) !== JSON.stringify(old.spec)) {
    errors.push(forbidden('spec', 'spec of ContainerRecreateRequest is immutable'));
  }
  for (const key of [CRR_POD_UID_LABEL, CRR_NODE_NAME_LABEL]) {
    if (crr.metadata.labels?.[key] !== old.metadata.labels?.[key]) {
      errors.push(forbidden(`metadata.labels[${key}]`, `not allowed to update immutable label ${key}`));
    }
  }
  const before = old.metadata.annotations?.[CRR_UNREADY_ACQUIRED_KEY];
  if (before && crr.metadata.annotations?.[CRR_UNREADY_ACQUIRED_KEY] !== before) {
    errors.push(
      forbidden(
        `metadata.annotations[${CRR_UNREADY_ACQUIRED_KEY}]`,
        `not allowed to update immutable annotation ${CRR_UNREADY_ACQUIRED_KEY}`,
      ),
    );
  }
  return errors;
}
