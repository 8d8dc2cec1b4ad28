// Core (v1) kinds besides Pod: Namespace, Node, ConfigMap, Secret, Event, ServiceAccount.
import { ageOf } from '../age.js';
import { fieldError, fieldPath, type FieldError } from '../field-errors.js';
import { ageColumn, column, nameColumn, type TableConverter } from '../table.js';
import { isPlainObject, type KubeObject } from '../types.js';
import { builtinResource, dig, ensureObject, str } from './meta.js';
import { configMapKeyErrors, dns1123LabelErrors, pathSegmentNameErrors } from './names.js';

const MAX_DATA_BYTES = 1024 * 1024;
const BASE64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function count(value: unknown): number {
  return isPlainObject(value) ? Object.keys(value).length : 0;
}

export const namespaceResource = builtinResource({
  group: '',
  version: 'v1',
  kind: 'Namespace',
  plural: 'namespaces',
  namespaced: false,
  shortNames: ['ns'],
  subresources: ['status'],
  table: {
    columns: [nameColumn, column('Status', 'string', 0, 'The status of the namespace'), ageColumn],
    cells: (o, now) => [
      o.metadata.name ?? '',
      str(dig(o, 'status', 'phase')) ?? '',
      ageOf(o.metadata.creationTimestamp, now),
    ],
  },
  behaviour: {
    returnDeletedObject: true,
    nameErrors: dns1123LabelErrors,
    fieldSelectors: { 'status.phase': (o) => str(dig(o, 'status', 'phase')) },
    prepareForCreate(ns) {
      const spec = ensureObject(ns, 'spec');
      spec.finalizers = ['kubernetes'];
      ns.status = { phase: 'Active' };
      ns.metadata.labels = { ...ns.metadata.labels, 'kubernetes.io/metadata.name': ns.metadata.name ?? '' };
    },
    prepareForUpdate(ns) {
      ns.metadata.labels = { ...ns.metadata.labels, 'kubernetes.io/metadata.name': ns.metadata.name ?? '' };
    },
    prepareForDelete(ns) {
      ns.status = { ...(isPlainObject(ns.status) ? ns.status : {}), phase: 'Terminating' };
    },
    readyToRemove: (ns) => {
      const finalizers = dig(ns, 'spec', 'finalizers');
      return !Array.isArray(finalizers) || finalizers.length === 0;
    },
  },
});

function nodeReadyText(node: KubeObject): string {
  const conditions = dig(node, 'status', 'conditions');
  let text = 'Unknown';
  if (Array.isArray(conditions)) {
    const ready = conditions.find((c) => dig(c, 'type') === 'Ready');
    if (ready)
      text = dig(ready, 'status') === 'True' ? 'Ready' : dig(ready, 'status') === 'False' ? 'NotReady' : 'Unknown';
  }
  if (dig(node, 'spec', 'unschedulable') === true) text += ',SchedulingDisabled';
  return text;
}

function nodeAddress(node: KubeObject, type: string): string {
  const addresses = dig(node, 'status', 'addresses');
  if (!Array.isArray(addresses)) return '<none>';
  return (
    str(
      dig(
        addresses.find((a) => dig(a, 'type') === type),
        'address',
      ),
    ) ?? '<none>'
  );
}

const nodeTable: TableConverter = {
  columns: [
    nameColumn,
    column('Status', 'string', 0, 'The status of the node'),
    column('Roles', 'string', 0, 'The roles of the node'),
    ageColumn,
    column('Version', 'string', 0, 'Kubelet Version reported by the node.'),
    column('Internal-IP', 'string', 1),
    column('External-IP', 'string', 1),
    column('OS-Image', 'string', 1),
    column('Kernel-Version', 'string', 1),
    column('Container-Runtime', 'string', 1),
  ],
  cells(node, now) {
    const roles = Object.keys(node.metadata.labels ?? {})
      .filter((k) => k.startsWith('node-role.kubernetes.io/'))
      .map((k) => k.slice('node-role.kubernetes.io/'.length))
      .filter((r) => r !== '');
    const info = (k: string): string => str(dig(node, 'status', 'nodeInfo', k)) ?? '';
    return [
      node.metadata.name ?? '',
      nodeReadyText(node),
      roles.length ? roles.sort().join(',') : '<none>',
      ageOf(node.metadata.creationTimestamp, now),
      info('kubeletVersion'),
      nodeAddress(node, 'InternalIP'),
      nodeAddress(node, 'ExternalIP'),
      info('osImage') || '<unknown>',
      info('kernelVersion') || '<unknown>',
      info('containerRuntimeVersion') || '<unknown>',
    ];
  },
};

export const nodeResource = builtinResource({
  group: '',
  version: 'v1',
  kind: 'Node',
  plural: 'nodes',
  namespaced: false,
  shortNames: ['no'],
  subresources: ['status'],
  table: nodeTable,
  behaviour: {
    returnDeletedObject: true,
    fieldSelectors: { 'spec.unschedulable': (o) => String(dig(o, 'spec', 'unschedulable') === true) },
  },
});

function validateDataKeys(obj: KubeObject, keys: string[], binaryKey?: string): FieldError[] {
  const errs: FieldError[] = [];
  let size = 0;
  const seen = new Set<string>();
  for (const key of keys) {
    const map = obj[key];
    if (map === undefined || map === null) continue;
    if (!isPlainObject(map)) {
      errs.push(fieldError.typeInvalid(key, map, 'must be a map'));
      continue;
    }
    for (const [k, v] of Object.entries(map)) {
      for (const e of configMapKeyErrors(k)) errs.push(fieldError.invalid(fieldPath.key(key, k), k, e));
      if (seen.has(k)) errs.push(fieldError.invalid(fieldPath.key(key, k), k, 'duplicate of key present in data'));
      seen.add(k);
      if (typeof v !== 'string') {
        errs.push(fieldError.typeInvalid(fieldPath.key(key, k), v, 'must be a string'));
        continue;
      }
      if (key === binaryKey && !BASE64_RE.test(v)) {
        errs.push(fieldError.invalid(fieldPath.key(key, k), '<value omitted>', 'must be base64 encoded'));
      }
      size += k.length + v.length;
    }
  }
  if (size > MAX_DATA_BYTES) errs.push(fieldError.tooLong('', MAX_DATA_BYTES));
  return errs;
}

export const configMapResource = builtinResource({
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  plural: 'configmaps',
  namespaced: true,
  shortNames: ['cm'],
  table: {
    columns: [nameColumn, column('Data', 'string'), ageColumn],
    cells: (o, now) => [
      o.metadata.name ?? '',
      String(count(o.data) + count(o.binaryData)),
      ageOf(o.metadata.creationTimestamp, now),
    ],
  },
  behaviour: {
    validate(cm, old) {
      const errs = validateDataKeys(cm, ['data', 'binaryData'], 'binaryData');
      if (old?.immutable === true && (cm.immutable !== true || JSON.stringify(cm.data) !== JSON.stringify(old.data))) {
        errs.push(fieldError.forbidden('data', 'field is immutable when `immutable` is set'));
      }
      return errs;
    },
  },
});

/** stringData is write-only: folded into data (base64) on every write, as kube-apiserver does. */
function foldStringData(secret: KubeObject): void {
  if (isPlainObject(secret.stringData)) {
    const data = ensureObject(secret, 'data');
    for (const [k, v] of Object.entries(secret.stringData)) {
      if (typeof v === 'string') data[k] = Buffer.from(v, 'utf8').toString('base64');
    }
  }
  delete secret.stringData;
  if (typeof secret.type !== 'string' || secret.type === '') secret.type = 'Opaque';
}

function validateSecret(secret: KubeObject, old: KubeObject | undefined): FieldError[] {
  const errs = validateDataKeys(secret, ['data'], 'data');
  const data = isPlainObject(secret.data) ? secret.data : {};
  if (secret.type === 'kubernetes.io/dockerconfigjson') {
    const raw = data['.dockerconfigjson'];
    if (typeof raw !== 'string') {
      errs.push(fieldError.required('data[.dockerconfigjson]'));
    } else {
      try {
        JSON.parse(Buffer.from(raw, 'base64').toString('utf8'));
      } catch (err) {
        errs.push(fieldError.invalid('data[.dockerconfigjson]', '<secret contents redacted>', String(err)));
      }
    }
  }
  if (old && old.type !== secret.type) errs.push(fieldError.invalid('type', secret.type, 'field is immutable'));
  return errs;
}

export const secretResource = builtinResource({
  group: '',
  version: 'v1',
  kind: 'Secret',
  plural: 'secrets',
  namespaced: true,
  table: {
    columns: [nameColumn, column('Type', 'string'), column('Data', 'string'), ageColumn],
    cells: (o, now) => [
      o.metadata.name ?? '',
      str(o.type) ?? 'Opaque',
      String(count(o.data)),
      ageOf(o.metadata.creationTimestamp, now),
    ],
  },
  behaviour: {
    fieldSelectors: { type: (o) => str(o.type) },
    prepareForCreate: foldStringData,
    prepareForUpdate: foldStringData,
    validate: validateSecret,
  },
});

const eventFieldSelectors: Record<string, (o: KubeObject) => string | undefined> = {
  reason: (o) => str(o.reason),
  type: (o) => str(o.type),
  source: (o) => str(dig(o, 'source', 'component')),
  reportingComponent: (o) => str(o.reportingComponent),
};
for (const f of ['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath']) {
  eventFieldSelectors[`involvedObject.${f}`] = (o) => str(dig(o, 'involvedObject', f));
}

function eventLastSeen(e: KubeObject, now: number): string {
  const t = dig(e, 'series', 'lastObservedTime') ?? e.lastTimestamp ?? e.eventTime ?? e.metadata.creationTimestamp;
  return ageOf(t, now);
}

export const eventTable: TableConverter = {
  columns: [
    column('Last Seen', 'string'),
    column('Type', 'string'),
    column('Reason', 'string'),
    column('Object', 'string'),
    column('Subobject', 'string', 1),
    column('Source', 'string', 1),
    column('Message', 'string'),
    column('First Seen', 'string', 1),
    column('Count', 'string', 1),
    { ...nameColumn, priority: 1 },
  ],
  cells(e, now) {
    const kind = str(dig(e, 'involvedObject', 'kind')) ?? '';
    const name = str(dig(e, 'involvedObject', 'name')) ?? '';
    return [
      eventLastSeen(e, now),
      str(e.type) ?? '',
      str(e.reason) ?? '',
      `${kind.toLowerCase()}/${name}`,
      str(dig(e, 'involvedObject', 'fieldPath')) ?? '',
      str(dig(e, 'source', 'component')) ?? str(e.reportingComponent) ?? '',
      str(e.message) ?? '',
      ageOf(e.firstTimestamp ?? e.eventTime, now),
      str(dig(e, 'count')) ?? '1',
      e.metadata.name ?? '',
    ];
  },
};

export const eventResource = builtinResource({
  group: '',
  version: 'v1',
  kind: 'Event',
  plural: 'events',
  namespaced: true,
  shortNames: ['ev'],
  table: eventTable,
  behaviour: {
    nameErrors: pathSegmentNameErrors,
    fieldSelectors: eventFieldSelectors,
    validate(e) {
      const errs: FieldError[] = [];
      const ns = str(dig(e, 'involvedObject', 'namespace'));
      if (ns && ns !== e.metadata.namespace) {
        errs.push(fieldError.invalid('involvedObject.namespace', ns, 'does not match event.namespace'));
      }
      if (e.type !== undefined && e.type !== 'Normal' && e.type !== 'Warning') {
        errs.push(fieldError.notSupported('type', e.type, ['Normal', 'Warning']));
      }
      return errs;
    },
  },
});

export const serviceAccountResource = builtinResource({
  group: '',
  version: 'v1',
  kind: 'ServiceAccount',
  plural: 'serviceaccounts',
  namespaced: true,
  shortNames: ['sa'],
  table: {
    columns: [nameColumn, column('Secrets', 'string'), ageColumn],
    cells: (o, now) => [
      o.metadata.name ?? '',
      String(Array.isArray(o.secrets) ? o.secrets.length : 0),
      ageOf(o.metadata.creationTimestamp, now),
    ],
  },
});
