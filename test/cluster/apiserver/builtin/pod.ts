// Pod (core/v1): defaults, validation, the spec fields an update may change, graceful deletion and the table.
//
// Graceful deletion, as kube-apiserver does it: a DELETE of a pod bound to a node (spec.nodeName set) and not in a
// terminal phase only sets metadata.deletionTimestamp and deletionGracePeriodSeconds; the pod stays until a DELETE
// with gracePeriodSeconds=0 (kubelet sends it once the containers are gone) or until its Node is deleted.
// Unbound or finished pods, and pods bound to a node that does not exist, are deleted at once.
import { ageOf } from '../age.js';
import { fieldError, fieldPath, type FieldError } from '../field-errors.js';
import type { ClusterView } from '../resource-types.js';
import { column, nameColumn, type TableConverter } from '../table.js';
import { isPlainObject, jsonEqual, type JsonObject, type KubeObject } from '../types.js';
import { builtinResource, dig, ensureObject, str } from './meta.js';
import { dns1123LabelErrors, dns1123SubdomainErrors } from './names.js';

const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];
const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'];
const DEFAULT_GRACE_SECONDS = 30;

function containerLists(spec: JsonObject): [string, unknown[]][] {
  const lists: [string, unknown[]][] = [];
  for (const key of ['initContainers', 'containers']) {
    const v = spec[key];
    if (Array.isArray(v)) lists.push([key, v]);
  }
  return lists;
}

function defaultContainer(c: JsonObject): void {
  if (c.imagePullPolicy === undefined && typeof c.image === 'string') {
    const lastSegment = c.image.split('/').pop() ?? '';
    const tagged = lastSegment.includes(':') && !c.image.includes('@');
    c.imagePullPolicy =
      c.image.includes('@') || (tagged && !lastSegment.endsWith(':latest')) ? 'IfNotPresent' : 'Always';
  }
  c.terminationMessagePath ??= '/dev/termination-log';
  c.terminationMessagePolicy ??= 'File';
  if (Array.isArray(c.ports)) {
    for (const p of c.ports) if (isPlainObject(p)) p.protocol ??= 'TCP';
  }
  if (Array.isArray(c.env)) {
    for (const e of c.env) {
      const ref = dig(e, 'valueFrom', 'fieldRef');
      if (isPlainObject(ref)) ref.apiVersion ??= 'v1';
    }
  }
}

/** Defaults kube-apiserver applies to a new pod. */
export function defaultPod(pod: KubeObject): void {
  const spec = ensureObject(pod, 'spec');
  spec.restartPolicy ??= 'Always';
  spec.terminationGracePeriodSeconds ??= DEFAULT_GRACE_SECONDS;
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.schedulerName ??= 'default-scheduler';
  spec.securityContext ??= {};
  spec.enableServiceLinks ??= true;
  spec.priority ??= 0;
  if (spec.serviceAccountName === undefined && typeof spec.serviceAccount === 'string') {
    spec.serviceAccountName = spec.serviceAccount;
  }
  for (const [, list] of containerLists(spec)) for (const c of list) if (isPlainObject(c)) defaultContainer(c);
}

function validateContainers(spec: JsonObject): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  if (!Array.isArray(spec.containers) || spec.containers.length === 0) {
    errs.push(fieldError.required('spec.containers'));
  }
  for (const [key, list] of containerLists(spec)) {
    list.forEach((c, i) => {
      const path = fieldPath.index(`spec.${key}`, i);
      if (!isPlainObject(c)) {
        errs.push(fieldError.typeInvalid(path, c, 'must be an object'));
        return;
      }
      if (typeof c.name !== 'string' || c.name === '') {
        errs.push(fieldError.required(`${path}.name`));
      } else {
        for (const e of dns1123LabelErrors(c.name)) errs.push(fieldError.invalid(`${path}.name`, c.name, e));
        if (seen.has(c.name)) errs.push(fieldError.duplicate(`${path}.name`, c.name));
        seen.add(c.name);
      }
      if (typeof c.image !== 'string' || c.image.trim() === '') errs.push(fieldError.required(`${path}.image`));
      if (c.imagePullPolicy !== undefined && !PULL_POLICIES.includes(str(c.imagePullPolicy) ?? '')) {
        errs.push(fieldError.notSupported(`${path}.imagePullPolicy`, c.imagePullPolicy, PULL_POLICIES));
      }
      if (Array.isArray(c.ports)) {
        c.ports.forEach((p, j) => {
          const port = dig(p, 'containerPort');
          if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) {
            errs.push(
              fieldError.invalid(`${path}.ports[${j}].containerPort`, port, 'must be between 1 and 65535, inclusive'),
            );
          }
        });
      }
      if (Array.isArray(c.env)) {
        c.env.forEach((e, j) => {
          if (typeof dig(e, 'name') !== 'string' || dig(e, 'name') === '') {
            errs.push(fieldError.required(`${path}.env[${j}].name`));
          }
        });
      }
    });
  }
  return errs;
}

function validatePod(pod: KubeObject, old: KubeObject | undefined): FieldError[] {
  const spec = pod.spec;
  if (!isPlainObject(spec)) return [fieldError.required('spec')];
  const errs = validateContainers(spec);
  if (spec.restartPolicy !== undefined && !RESTART_POLICIES.includes(str(spec.restartPolicy) ?? '')) {
    errs.push(fieldError.notSupported('spec.restartPolicy', spec.restartPolicy, RESTART_POLICIES));
  }
  if (typeof spec.nodeName === 'string' && spec.nodeName !== '') {
    for (const e of dns1123SubdomainErrors(spec.nodeName))
      errs.push(fieldError.invalid('spec.nodeName', spec.nodeName, e));
  }
  const grace = spec.terminationGracePeriodSeconds;
  if (grace !== undefined && (typeof grace !== 'number' || !Number.isInteger(grace) || grace < 0)) {
    errs.push(fieldError.invalid('spec.terminationGracePeriodSeconds', grace, 'must be greater than or equal to 0'));
  }
  if (old && isPlainObject(old.spec) && !jsonEqual(mutableSpecStripped(spec), mutableSpecStripped(old.spec))) {
    errs.push(
      fieldError.forbidden(
        'spec',
        'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
      ),
    );
  }
  return errs;
}

/** The pod spec without the fields an update may change, for the immutability check. */
function mutableSpecStripped(spec: JsonObject): JsonObject {
  const copy: JsonObject = { ...spec };
  delete copy.activeDeadlineSeconds;
  delete copy.tolerations;
  delete copy.terminationGracePeriodSeconds;
  for (const [key, list] of containerLists(spec)) {
    copy[key] = list.map((c) => {
      if (!isPlainObject(c)) return c;
      const rest = { ...c };
      delete rest.image;
      return rest;
    });
  }
  return copy;
}

/** Guaranteed when every container's cpu and memory limits equal its requests, BestEffort when none set any. */
function qosClass(pod: KubeObject): string {
  const containers = dig(pod, 'spec', 'containers');
  if (!Array.isArray(containers)) return 'BestEffort';
  let any = false;
  let guaranteed = true;
  for (const c of containers) {
    const requests = dig(c, 'resources', 'requests');
    const limits = dig(c, 'resources', 'limits');
    if (isPlainObject(requests) && Object.keys(requests).length) any = true;
    if (isPlainObject(limits) && Object.keys(limits).length) any = true;
    for (const r of ['cpu', 'memory']) {
      const limit = isPlainObject(limits) ? limits[r] : undefined;
      const request = isPlainObject(requests) ? (requests[r] ?? limit) : limit;
      if (limit === undefined || str(limit) !== str(request)) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

function podGracePeriod(pod: KubeObject, requested: number | undefined, cluster: ClusterView): number {
  const nodeName = dig(pod, 'spec', 'nodeName');
  const phase = dig(pod, 'status', 'phase');
  if (typeof nodeName !== 'string' || nodeName === '' || !cluster.nodeExists(nodeName)) return 0;
  if (phase === 'Succeeded' || phase === 'Failed') return 0;
  if (requested !== undefined) return Math.max(0, requested);
  const fromSpec = dig(pod, 'spec', 'terminationGracePeriodSeconds');
  return typeof fromSpec === 'number' && fromSpec >= 0 ? fromSpec : DEFAULT_GRACE_SECONDS;
}

function statusText(pod: KubeObject): string {
  let reason = str(dig(pod, 'status', 'reason')) ?? str(dig(pod, 'status', 'phase')) ?? 'Pending';
  const statuses = dig(pod, 'status', 'containerStatuses');
  if (Array.isArray(statuses)) {
    for (const cs of statuses) {
      const waiting = str(dig(cs, 'state', 'waiting', 'reason'));
      const terminated = dig(cs, 'state', 'terminated');
      if (waiting) reason = waiting;
      else if (isPlainObject(terminated)) {
        reason =
          str(terminated.reason) ??
          (terminated.signal
            ? `Signal:${str(terminated.signal) ?? ''}`
            : `ExitCode:${str(terminated.exitCode) ?? '0'}`);
      }
    }
  }
  if (pod.metadata.deletionTimestamp) reason = 'Terminating';
  return reason;
}

const podTable: TableConverter = {
  columns: [
    nameColumn,
    column('Ready', 'string', 0, 'The aggregate readiness state of this pod for accepting traffic.'),
    column('Status', 'string', 0, 'The aggregate status of the containers in this pod.'),
    column('Restarts', 'string', 0, 'The number of times the containers in this pod have been restarted.'),
    column('Age', 'string'),
    column('IP', 'string', 1, 'IP address allocated to the pod.'),
    column('Node', 'string', 1, 'Name of the Node this pod is assigned to.'),
    column('Nominated Node', 'string', 1),
    column('Readiness Gates', 'string', 1),
  ],
  cells(pod, now) {
    const containers = dig(pod, 'spec', 'containers');
    const statuses = dig(pod, 'status', 'containerStatuses');
    const total = Array.isArray(containers) ? containers.length : 0;
    let ready = 0;
    let restarts = 0;
    if (Array.isArray(statuses)) {
      for (const cs of statuses) {
        if (dig(cs, 'ready') === true) ready++;
        const r = dig(cs, 'restartCount');
        if (typeof r === 'number') restarts += r;
      }
    }
    const gates = dig(pod, 'spec', 'readinessGates');
    return [
      pod.metadata.name ?? '',
      `${ready}/${total}`,
      statusText(pod),
      String(restarts),
      ageOf(pod.metadata.creationTimestamp, now),
      str(dig(pod, 'status', 'podIP')) ?? '<none>',
      str(dig(pod, 'spec', 'nodeName')) ?? '<none>',
      str(dig(pod, 'status', 'nominatedNodeName')) ?? '<none>',
      Array.isArray(gates) && gates.length ? `0/${gates.length}` : '<none>',
    ];
  },
};

export const podResource = builtinResource({
  group: '',
  version: 'v1',
  kind: 'Pod',
  plural: 'pods',
  namespaced: true,
  shortNames: ['po'],
  categories: ['all'],
  subresources: ['status', 'binding'],
  table: podTable,
  behaviour: {
    returnDeletedObject: true,
    fieldSelectors: {
      'spec.nodeName': (o) => str(dig(o, 'spec', 'nodeName')),
      'spec.restartPolicy': (o) => str(dig(o, 'spec', 'restartPolicy')),
      'spec.schedulerName': (o) => str(dig(o, 'spec', 'schedulerName')),
      'spec.serviceAccountName': (o) => str(dig(o, 'spec', 'serviceAccountName')),
      'spec.hostNetwork': (o) => String(dig(o, 'spec', 'hostNetwork') === true),
      'status.phase': (o) => str(dig(o, 'status', 'phase')),
      'status.podIP': (o) => str(dig(o, 'status', 'podIP')),
      'status.nominatedNodeName': (o) => str(dig(o, 'status', 'nominatedNodeName')),
    },
    prepareForCreate(pod) {
      defaultPod(pod);
      pod.status = { phase: 'Pending', qosClass: qosClass(pod) };
    },
    prepareForUpdate(pod) {
      defaultPod(pod);
    },
    validate: validatePod,
    deleteGracePeriod: podGracePeriod,
  },
});
