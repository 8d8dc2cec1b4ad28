// PodProbeMarker validation (admission and the controller's own check): OpenKruise's rules and messages
// (pkg/webhook/podprobemarker/validating), plus what OpenKruise leaves out and a probe the agent cannot run would
// need: grpc handlers refused (the agent runs exec, httpGet and tcpSocket only), podConditionType may not be one of
// the conditions the kubelet (or Kruise) owns, label values and annotation sizes checked as for any object.
// Takes raw input: a malformed object yields field errors, never a throw.
import { POD_PROBE_NAME_SEPARATOR } from './constants.js';
import { belowMinimumError, fieldError, typeError } from './field-checks.js';
import type { FieldError } from './field-errors.js';
import { isEmptyLabelSelector, labelKeyError, labelSelectorErrors, labelValueError } from './label-selector.js';
import { isRecord } from '../util/is-record.js';
import { jsonEqual } from '../kube/merge-patch.js';
import { probeSizeErrors } from './podprobemarker-limits.js';

export const NIL_SELECTOR_MESSAGE = 'empty Selector is not valid for PodProbeMarker.';
export const EMPTY_SELECTOR_MESSAGE = 'empty selector is not valid for podProbeMarker.';
export const EMPTY_PROBES_MESSAGE = 'empty probes is not valid for PodProbeMarker.';
export const PROBE_NAME_SEPARATOR_MESSAGE = "probe name can't contains '#'.";
export const EMPTY_PROBE_NAME_MESSAGE = "probe name can't be empty in PodProbeMarker.";
export const EMPTY_CONTAINER_NAME_MESSAGE = "probe containerName can't be empty in PodProbeMarker.";
export const DUPLICATE_PROBE_NAME_MESSAGE = 'probe name must be unique in PodProbeMarker.';
export const NO_MARK_MESSAGE = 'podConditionType and markerPolicy cannot be empty at the same time';
export const DUPLICATE_POLICY_STATE_MESSAGE = 'marker policy state must be unique.';
export const POLICY_STATE_MESSAGE = "marker policy state must be 'Succeeded' or 'Failed'";
export const EMPTY_POLICY_MESSAGE = "marker policy annotations or labels can't be both empty";
export const MORE_THAN_ONE_HANDLER_MESSAGE = 'may not specify more than 1 handler type';
export const NO_HANDLER_MESSAGE = 'must specify a handler type';
export const GRPC_MESSAGE = 'grpc probes are not supported by PodProbeMarker (use exec, httpGet or tcpSocket)';
/** tcpSocket/httpGet `host` and an httpGet `Host` header are refused: a probe reaches only its pod (CVE-2026-24005). */
export const PROBE_HOST_MESSAGE =
  "a custom probe reaches only its pod's own IP: host can't be set (it would let the agent dial any address the node can reach)";
export const IMMUTABLE_SELECTOR_MESSAGE = 'selector must be immutable';

/** Conditions the kubelet or Kruise itself sets on pods: a probe may neither be named as one nor write one. */
export const RESERVED_POD_CONDITION_TYPES: readonly string[] = [
  'PodScheduled',
  'Initialized',
  'Ready',
  'ContainersReady',
  'PodReadyToStartContainers',
  'DisruptionTarget',
  'PodResizePending',
  'PodResizeInProgress',
  'KruisePodReady',
  'InPlaceUpdateReady',
];

const HANDLERS = ['exec', 'httpGet', 'tcpSocket'] as const;
const POLICY_STATES = ['Succeeded', 'Failed'];
const HTTP_SCHEMES = ['HTTP', 'HTTPS'];
const HTTP_HEADER_NAME = /^[-A-Za-z0-9]+$/;
/** Kubernetes' limit on the annotations of one object (TotalAnnotationSizeLimitB). */
const MAX_ANNOTATIONS_BYTES = 256 * 1024;

export interface PodProbeMarkerValidationOptions {
  /** On UPDATE: the stored object (the selector may not change, as OpenKruise). */
  oldObject?: unknown;
  /**
   * Check the size limits (podprobemarker-limits.ts; default true). Admission does; the controller does not: a marker
   * that got past admission is bounded by the NodePodProbe budget, which leaves it out and says so.
   */
  sizeLimits?: boolean;
}

export function validatePodProbeMarker(object: unknown, options: PodProbeMarkerValidationOptions = {}): FieldError[] {
  const errors: FieldError[] = [];
  const spec = isRecord(object) && isRecord(object.spec) ? object.spec : undefined;
  if (!spec) return [fieldError('FieldValueRequired', 'spec', 'Required value')];
  errors.push(...selectorErrors(spec.selector));
  errors.push(...probesErrors(spec.probes));
  const old = options.oldObject;
  // an update that leaves the spec as it was (a finalizer, a label) passes a marker stored before these limits
  const specUnchanged = isRecord(old) && isRecord(old.spec) && jsonEqual(old.spec, spec);
  if (options.sizeLimits !== false && !specUnchanged && Array.isArray(spec.probes)) {
    const metadata = isRecord(object) && isRecord(object.metadata) ? object.metadata : {};
    const name = typeof metadata.name === 'string' ? metadata.name : '';
    errors.push(...probeSizeErrors(name, spec.probes as unknown[]));
  }
  if (isRecord(old) && isRecord(old.spec) && JSON.stringify(old.spec.selector) !== JSON.stringify(spec.selector)) {
    errors.push(fieldError('FieldValueInvalid', 'spec.selector', IMMUTABLE_SELECTOR_MESSAGE, spec.selector ?? null));
  }
  return errors;
}

function selectorErrors(selector: unknown): FieldError[] {
  if (selector === undefined || selector === null) {
    return [fieldError('FieldValueInvalid', 'spec.selector', NIL_SELECTOR_MESSAGE, null)];
  }
  const problems = labelSelectorErrors(selector);
  if (problems.length > 0) return problems.map((p) => fieldError('FieldValueInvalid', 'spec.selector', p));
  if (isEmptyLabelSelector(selector)) {
    return [fieldError('FieldValueInvalid', 'spec.selector', EMPTY_SELECTOR_MESSAGE, selector)];
  }
  return [];
}

function probesErrors(probes: unknown): FieldError[] {
  const bad = typeError('spec.probes', probes, 'array');
  if (bad) return [bad];
  const list = (probes as unknown[] | undefined) ?? [];
  if (list.length === 0) return [fieldError('FieldValueInvalid', 'spec.probes', EMPTY_PROBES_MESSAGE, list)];
  const errors: FieldError[] = [];
  const names = new Set<string>();
  const conditionTypes = new Set<string>();
  for (const [i, probe] of list.entries()) {
    const at = `spec.probes[${i}]`;
    if (!isRecord(probe)) {
      errors.push(fieldError('FieldValueTypeInvalid', at, 'must be an object', probe));
      continue;
    }
    const name = typeof probe.name === 'string' ? probe.name : '';
    if (name === '') errors.push(fieldError('FieldValueInvalid', `${at}.name`, EMPTY_PROBE_NAME_MESSAGE, name));
    else if (name.includes(POD_PROBE_NAME_SEPARATOR)) {
      errors.push(fieldError('FieldValueInvalid', `${at}.name`, PROBE_NAME_SEPARATOR_MESSAGE, name));
    } else if (RESERVED_POD_CONDITION_TYPES.includes(name)) {
      errors.push(fieldError('FieldValueInvalid', `${at}.name`, `probe name can't be ${name}`, name));
    } else if (names.has(name)) {
      errors.push(fieldError('FieldValueInvalid', `${at}.name`, DUPLICATE_PROBE_NAME_MESSAGE, name));
    }
    names.add(name);
    if (typeof probe.containerName !== 'string' || probe.containerName === '') {
      errors.push(fieldError('FieldValueInvalid', `${at}.containerName`, EMPTY_CONTAINER_NAME_MESSAGE, ''));
    }
    errors.push(...probeSpecErrors(probe.probe, `${at}.probe`));
    errors.push(...conditionTypeErrors(probe.podConditionType, `${at}.podConditionType`, conditionTypes));
    const policies = probe.markerPolicy;
    const badPolicies = typeError(`${at}.markerPolicy`, policies, 'array');
    if (badPolicies) errors.push(badPolicies);
    const policyList = badPolicies ? [] : ((policies as unknown[] | undefined) ?? []);
    const conditionType = probe.podConditionType;
    if ((typeof conditionType !== 'string' || conditionType === '') && policyList.length === 0) {
      errors.push(fieldError('FieldValueInvalid', at, NO_MARK_MESSAGE));
    }
    const states = new Set<string>();
    for (const [j, policy] of policyList.entries()) {
      errors.push(...policyErrors(policy, `${at}.markerPolicy[${j}]`, states));
    }
  }
  return errors;
}

function conditionTypeErrors(value: unknown, at: string, seen: Set<string>): FieldError[] {
  if (value === undefined || value === null || value === '') return [];
  if (typeof value !== 'string') return [typeError(at, value, 'string')!];
  if (seen.has(value)) {
    return [fieldError('FieldValueInvalid', at, `podConditionType ${value} must be unique in podProbeMarker`, value)];
  }
  seen.add(value);
  const why = labelKeyError(value);
  if (why) return [fieldError('FieldValueInvalid', at, why, value)];
  if (RESERVED_POD_CONDITION_TYPES.includes(value)) {
    return [fieldError('FieldValueInvalid', at, `podConditionType can't be ${value}: the kubelet or Kruise owns it`)];
  }
  return [];
}

function policyErrors(policy: unknown, at: string, states: Set<string>): FieldError[] {
  if (!isRecord(policy)) return [fieldError('FieldValueTypeInvalid', at, 'must be an object', policy)];
  const state = policy.state;
  if (typeof state === 'string' && states.has(state)) {
    return [fieldError('FieldValueInvalid', `${at}.state`, DUPLICATE_POLICY_STATE_MESSAGE, state)];
  }
  if (typeof state === 'string') states.add(state);
  if (typeof state !== 'string' || !POLICY_STATES.includes(state)) {
    return [fieldError('FieldValueRequired', `${at}.state`, `Required value: ${POLICY_STATE_MESSAGE}`)];
  }
  const labels = policy.labels;
  const annotations = policy.annotations;
  const errors: FieldError[] = [];
  const badLabels = typeError(`${at}.labels`, labels, 'object');
  const badAnnotations = typeError(`${at}.annotations`, annotations, 'object');
  if (badLabels) errors.push(badLabels);
  if (badAnnotations) errors.push(badAnnotations);
  if (errors.length > 0) return errors;
  const labelMap = (labels as Record<string, unknown> | undefined) ?? {};
  const annotationMap = (annotations as Record<string, unknown> | undefined) ?? {};
  if (Object.keys(labelMap).length === 0 && Object.keys(annotationMap).length === 0) {
    return [fieldError('FieldValueRequired', at, `Required value: ${EMPTY_POLICY_MESSAGE}`)];
  }
  for (const [key, value] of Object.entries(labelMap)) {
    const keyWhy = labelKeyError(key);
    if (keyWhy) errors.push(fieldError('FieldValueInvalid', `${at}.labels`, keyWhy, key));
    if (typeof value !== 'string')
      errors.push(fieldError('FieldValueTypeInvalid', `${at}.labels[${key}]`, 'must be a string', value));
    else {
      const valueWhy = labelValueError(value);
      if (valueWhy) errors.push(fieldError('FieldValueInvalid', `${at}.labels[${key}]`, valueWhy, value));
    }
  }
  let bytes = 0;
  for (const [key, value] of Object.entries(annotationMap)) {
    const keyWhy = labelKeyError(key.toLowerCase());
    if (keyWhy) errors.push(fieldError('FieldValueInvalid', `${at}.annotations`, keyWhy, key));
    if (typeof value !== 'string') {
      errors.push(fieldError('FieldValueTypeInvalid', `${at}.annotations[${key}]`, 'must be a string', value));
    } else bytes += Buffer.byteLength(key) + Buffer.byteLength(value);
  }
  if (bytes > MAX_ANNOTATIONS_BYTES) {
    errors.push(
      fieldError('FieldValueTooLong', `${at}.annotations`, `must have at most ${MAX_ANNOTATIONS_BYTES} bytes`),
    );
  }
  return errors;
}

function probeSpecErrors(probe: unknown, at: string): FieldError[] {
  if (!isRecord(probe))
    return [fieldError('FieldValueInvalid', at, "probe can't be empty in podProbeMarker.", probe ?? null)];
  const errors: FieldError[] = [];
  if (probe.grpc !== undefined && probe.grpc !== null) {
    errors.push(fieldError('FieldValueForbidden', `${at}.grpc`, `Forbidden: ${GRPC_MESSAGE}`));
  }
  let handlers = 0;
  for (const kind of HANDLERS) {
    const handler = probe[kind];
    if (handler === undefined || handler === null) continue;
    if (handlers++ > 0) {
      errors.push(fieldError('FieldValueForbidden', `${at}.${kind}`, `Forbidden: ${MORE_THAN_ONE_HANDLER_MESSAGE}`));
      continue;
    }
    errors.push(...handlerErrors(kind, handler, `${at}.${kind}`));
  }
  if (handlers === 0 && (probe.grpc === undefined || probe.grpc === null)) {
    errors.push(fieldError('FieldValueRequired', at, `Required value: ${NO_HANDLER_MESSAGE}`));
  }
  for (const field of [
    'initialDelaySeconds',
    'timeoutSeconds',
    'periodSeconds',
    'successThreshold',
    'failureThreshold',
  ]) {
    const value = probe[field];
    const bad = typeError(`${at}.${field}`, value, 'integer') ?? belowMinimumError(`${at}.${field}`, value, 0);
    if (bad) errors.push(bad);
  }
  return errors;
}

function handlerErrors(kind: (typeof HANDLERS)[number], handler: unknown, at: string): FieldError[] {
  if (!isRecord(handler)) return [fieldError('FieldValueTypeInvalid', at, 'must be an object', handler)];
  if (kind === 'exec') {
    const command = handler.command;
    if (!Array.isArray(command) || command.length === 0)
      return [fieldError('FieldValueRequired', `${at}.command`, 'Required value')];
    return command.every((c) => typeof c === 'string')
      ? []
      : [fieldError('FieldValueTypeInvalid', `${at}.command`, 'must be a list of strings', command)];
  }
  const errors = portErrors(handler.port, `${at}.port`);
  if (handler.host !== undefined && handler.host !== null && handler.host !== '') {
    errors.push(fieldError('FieldValueForbidden', `${at}.host`, `Forbidden: ${PROBE_HOST_MESSAGE}`));
  }
  if (kind === 'httpGet') {
    const path = handler.path;
    if (typeof path !== 'string' || path === '')
      errors.push(fieldError('FieldValueRequired', `${at}.path`, 'Required value'));
    const scheme = handler.scheme ?? 'HTTP';
    if (typeof scheme !== 'string' || !HTTP_SCHEMES.includes(scheme)) {
      errors.push(fieldError('FieldValueNotSupported', `${at}.scheme`, 'supported values: "HTTP", "HTTPS"', scheme));
    }
    const headers = Array.isArray(handler.httpHeaders) ? (handler.httpHeaders as unknown[]) : [];
    for (const header of headers) {
      const name = isRecord(header) ? header.name : undefined;
      if (typeof name === 'string' && name.toLowerCase() === 'host') {
        errors.push(fieldError('FieldValueForbidden', `${at}.httpHeaders`, `Forbidden: ${PROBE_HOST_MESSAGE}`));
      }
      if (typeof name !== 'string' || !HTTP_HEADER_NAME.test(name)) {
        errors.push(
          fieldError(
            'FieldValueInvalid',
            `${at}.httpHeaders`,
            "a valid HTTP header must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')",
            name ?? null,
          ),
        );
      }
    }
  }
  return errors;
}

/** A port number (1-65535) or an IANA_SVC_NAME, with kube's messages. */
function portErrors(port: unknown, at: string): FieldError[] {
  if (typeof port === 'number') {
    return Number.isInteger(port) && port >= 1 && port <= 65535
      ? []
      : [fieldError('FieldValueInvalid', at, 'must be between 1 and 65535, inclusive', port)];
  }
  if (typeof port !== 'string') return [fieldError('FieldValueRequired', at, 'Required value')];
  const problems: string[] = [];
  if (port.length > 15) problems.push('must be no more than 15 characters');
  if (!/^[-a-z0-9]+$/.test(port))
    problems.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(port)) problems.push('must contain at least one letter (a-z)');
  if (port.includes('--')) problems.push('must not contain consecutive hyphens');
  if (port.startsWith('-') || port.endsWith('-')) problems.push('must not begin or end with a hyphen');
  return problems.map((p) => fieldError('FieldValueInvalid', at, p, port));
}
