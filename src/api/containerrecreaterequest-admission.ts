// Admission of ContainerRecreateRequests (OpenKruise's CRR mutating webhook, reference §1.3): on create the
// defaults, the labels and each container's preStop/ports/statusContext filled from the pod, and every check
// with OpenKruise's message under the path of the field; on update spec and the identity labels are immutable.
// A CRR may name a native sidecar (an init container with restartPolicy Always; its status is read from
// initContainerStatuses), which OpenKruise refuses ("not found ... containerStatus"); a plain init container is refused.
// This webhook runs before the CRD schema, so it checks the shapes it reads itself: a field of the wrong type is
// denied by its type with the value given, never by a rule about its value.
import { isPodActive } from './pod-active.js';
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
import type { ContainerRecreateRequestContainerContext, ProbeHandler } from './containerrecreaterequest.js';
import { fieldError, notSupportedError, typeError, type JsonObject } from './field-checks.js';
import type { FieldError } from './field-errors.js';
import { plainInitContainerProblem, podContainer } from './pod-sidecars.js';
import type { WireNode, WirePod } from './wire.js';
import type { KubeObject, ObjectMeta } from '../kube/object.js';
import { isRecord } from '../util/is-record.js';

/** A CRR as an admission request carries it: metadata as the API server decoded it, the rest unchecked JSON. */
export interface CrrUnderAdmission extends KubeObject {
  spec?: unknown;
}

/** The spec once defaultAndCheckCrrSpec has passed it: the fields the webhook reads checked, the rest as given. */
export interface CheckedCrrSpec extends JsonObject {
  podName: string;
  containers: JsonObject[];
  strategy: JsonObject;
}

export interface CheckedCrr extends KubeObject {
  metadata: ObjectMeta;
  spec: CheckedCrrSpec;
}

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

/**
 * Checks that need no pod, and the defaults (active label, strategy). Mutates `crr` (a copy of the request's object)
 * and returns it with its spec checked, or the errors.
 */
export function defaultAndCheckCrrSpec(crr: CrrUnderAdmission): { crr: CheckedCrr } | { errors: FieldError[] } {
  const specError = typeError('spec', crr.spec, 'object');
  if (specError) return { errors: [specError] };
  const errors: FieldError[] = [];
  const add = (error: FieldError | undefined): void => {
    if (error) errors.push(error);
  };
  const spec: JsonObject = isRecord(crr.spec) ? crr.spec : {};
  const podName = spec['podName'];
  const podNameError = typeError('spec.podName', podName, 'string');
  if (podNameError) errors.push(podNameError);
  else if (!podName) errors.push(required('spec.podName', 'podName can not be empty'));
  const metadata = (crr.metadata ??= {});
  (metadata.labels ??= {})[CRR_ACTIVE_LABEL] = 'true';
  const containers = spec['containers'];
  errors.push(...containerListErrors(containers));
  add(
    integerError(
      'spec.activeDeadlineSeconds',
      spec['activeDeadlineSeconds'],
      CRR_MIN_ACTIVE_DEADLINE_SECONDS,
      `activeDeadlineSeconds can not be less than ${CRR_MIN_ACTIVE_DEADLINE_SECONDS}s`,
    ),
  );
  add(
    integerError(
      'spec.ttlSecondsAfterFinished',
      spec['ttlSecondsAfterFinished'],
      0,
      'ttlSecondsAfterFinished must be non-negative integer',
    ),
  );
  const strategy = isRecord(spec['strategy']) ? spec['strategy'] : {};
  const strategyError = typeError('spec.strategy', spec['strategy'], 'object');
  if (strategyError) errors.push(strategyError);
  else errors.push(...defaultAndCheckStrategy((spec['strategy'] = strategy)));
  // No errors means podName is a string and containers a list of objects; the two tests say so to the compiler.
  if (errors.length > 0 || typeof podName !== 'string' || !Array.isArray(containers)) return { errors };
  return { crr: { ...crr, metadata, spec: { ...spec, podName, containers: containers.filter(isRecord), strategy } } };
}

/** The strategy's durations, and failurePolicy (empty → Fail). */
function defaultAndCheckStrategy(strategy: JsonObject): FieldError[] {
  const errors: FieldError[] = [];
  for (const field of ['terminationGracePeriodSeconds', 'unreadyGracePeriodSeconds', 'minStartedSeconds'] as const) {
    const error = integerError(`spec.strategy.${field}`, strategy[field], 0, `${field} must be non-negative integer`);
    if (error) errors.push(error);
  }
  const failurePolicy = strategy['failurePolicy'];
  const failurePolicyError =
    typeError('spec.strategy.failurePolicy', failurePolicy, 'string') ??
    notSupportedError('spec.strategy.failurePolicy', failurePolicy, CRR_FAILURE_POLICIES);
  if (failurePolicyError) errors.push(failurePolicyError);
  else if (!failurePolicy) strategy['failurePolicy'] = 'Fail';
  return errors;
}

export type PodLookup = { found: true; pod: WirePod } | { found: false };
export type NodeLookup = { found: true; node: WireNode } | { found: false };

/** Checks against the pod; on success fills labels, grace period and each container's read-only fields. */
export function fillCrrFromPod(crr: CheckedCrr, lookup: PodLookup): FieldError[] {
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
  if (!isPodActive(pod) && !sidecarTerminated) {
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
  const grace = spec.strategy['terminationGracePeriodSeconds'];
  if ((grace === undefined || grace === null) && pod.spec.terminationGracePeriodSeconds !== undefined) {
    spec.strategy['terminationGracePeriodSeconds'] = pod.spec.terminationGracePeriodSeconds;
  }
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  spec.containers.forEach((c, i) => {
    const path = `spec.containers[${i}]`;
    const name = c['name'];
    if (typeof name !== 'string' || name === '') {
      errors.push(required(`${path}.name`, 'container name can not be empty'));
      return;
    }
    if (seen.has(name)) {
      errors.push({
        field: `${path}.name`,
        type: 'FieldValueDuplicate',
        message: `can not recreate ${name} multi times`,
      });
      return;
    }
    seen.add(name);
    if (c['preStop'] !== undefined || c['ports'] !== undefined || c['statusContext'] !== undefined) {
      errors.push(forbidden(path, 'preStop, ports, statusContext in container are ready-only fields'));
      return;
    }
    const found = podContainer(pod, name);
    if (!found) {
      errors.push({
        field: `${path}.name`,
        type: 'FieldValueNotFound',
        message: `container ${name} not found in Pod ${spec.podName}`,
      });
      return;
    }
    if (found.kind === 'init') {
      errors.push(invalid(`${path}.name`, plainInitContainerProblem(name)));
      return;
    }
    const { container: specContainer, kind } = found;
    const statusList = kind === 'sidecar' ? 'initContainerStatuses' : 'containerStatuses';
    const status = (pod.status?.[statusList] ?? []).find((cs) => cs.name === name);
    if (!status) {
      const what = kind === 'sidecar' ? 'initContainerStatus (native sidecar)' : 'containerStatus';
      errors.push(invalid(`${path}.name`, `not found ${name} ${what} in Pod Status`));
      return;
    }
    if (!status.containerID) {
      errors.push(
        invalid(
          `${path}.name`,
          `no containerID in ${name} containerStatus, maybe the container has not been initialized`,
        ),
      );
      return;
    }
    const preStop = specContainer.lifecycle?.preStop;
    if (preStop && (preStop.exec || preStop.httpGet || preStop.tcpSocket)) {
      const handler: ProbeHandler = {};
      if (preStop.exec) handler.exec = preStop.exec;
      if (preStop.httpGet) handler.httpGet = preStop.httpGet;
      if (preStop.tcpSocket) handler.tcpSocket = preStop.tcpSocket;
      c['preStop'] = handler;
      if (preStop.httpGet && specContainer.ports) c['ports'] = specContainer.ports;
    }
    const statusContext: ContainerRecreateRequestContainerContext = {
      containerID: status.containerID,
      restartCount: status.restartCount ?? 0,
    };
    c['statusContext'] = statusContext;
  });
  return errors;
}

/** The virtual-kubelet label is copied from the node (a missing node is an error). */
export function fillCrrFromNode(crr: CheckedCrr, nodeName: string, lookup: NodeLookup): FieldError[] {
  if (!lookup.found)
    return [{ field: 'spec.podName', type: 'FieldValueNotFound', message: `failed to get Node ${nodeName}` }];
  if (lookup.node.metadata?.labels?.[VIRTUAL_KUBELET_LABEL] === VIRTUAL_KUBELET_LABEL_VALUE) {
    (crr.metadata.labels ??= {})[VIRTUAL_KUBELET_LABEL] = VIRTUAL_KUBELET_LABEL_VALUE;
  }
  return [];
}

/** Update: spec and the identity labels are immutable; the unready-acquired time, once set, too. */
export function validateCrrUpdate(crr: CrrUnderAdmission, old: CrrUnderAdmission): FieldError[] {
  const errors: FieldError[] = [];
  if (JSON.stringify(crr.spec) !== JSON.stringify(old.spec)) {
    errors.push(forbidden('spec', 'spec of ContainerRecreateRequest is immutable'));
  }
  for (const key of [CRR_POD_UID_LABEL, CRR_NODE_NAME_LABEL]) {
    if (crr.metadata?.labels?.[key] !== old.metadata?.labels?.[key]) {
      errors.push(forbidden(`metadata.labels[${key}]`, `not allowed to update immutable label ${key}`));
    }
  }
  const before = old.metadata?.annotations?.[CRR_UNREADY_ACQUIRED_KEY];
  if (before && crr.metadata?.annotations?.[CRR_UNREADY_ACQUIRED_KEY] !== before) {
    errors.push(
      forbidden(
        `metadata.annotations[${CRR_UNREADY_ACQUIRED_KEY}]`,
        `not allowed to update immutable annotation ${CRR_UNREADY_ACQUIRED_KEY}`,
      ),
    );
  }
  return errors;
}
