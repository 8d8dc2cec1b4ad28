// apiextensions.k8s.io/v1 CustomResourceDefinition: defaults, validation (names, versions, structural schemas,
// printer columns) and the status the API server maintains (acceptedNames, storedVersions, conditions
// NamesAccepted and Established, set as soon as the CRD is written).
import { column, nameColumn } from '../table.js';
import { builtinResource, dig, ensureObject, str } from '../builtin/meta.js';
import { dns1123LabelErrors, dns1123SubdomainErrors } from '../builtin/names.js';
import { fieldError, type FieldError } from '../field-errors.js';
import { parseJsonPath } from '../jsonpath.js';
import { isPlainObject, type KubeObject } from '../types.js';
import { structuralErrors } from './structural.js';

export const CRD_STORAGE_KEY = 'apiextensions.k8s.io/customresourcedefinitions';
export const CRD_CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

const SCOPES = ['Namespaced', 'Cluster'];
const COLUMN_TYPES = ['integer', 'number', 'string', 'boolean', 'date'];

function defaultCrd(crd: KubeObject): void {
  const spec = ensureObject(crd, 'spec');
  const names = ensureObject(spec, 'names');
  if (typeof names.kind === 'string') {
    names.singular ??= names.kind.toLowerCase();
    names.listKind ??= `${names.kind}List`;
  }
  spec.conversion ??= { strategy: 'None' };
  if (Array.isArray(spec.versions)) {
    for (const v of spec.versions) {
      if (!isPlainObject(v) || !Array.isArray(v.additionalPrinterColumns)) continue;
      for (const c of v.additionalPrinterColumns) if (isPlainObject(c)) c.priority ??= 0;
    }
  }
}

function validateVersions(spec: Record<string, unknown>): FieldError[] {
  const errs: FieldError[] = [];
  const versions = spec.versions;
  if (!Array.isArray(versions) || versions.length === 0) {
    return [fieldError.required('spec.versions', 'must have exactly one version marked as storage version')];
  }
  let storage = 0;
  const seen = new Set<string>();
  versions.forEach((v, i) => {
    const path = `spec.versions[${i}]`;
    if (!isPlainObject(v)) {
      errs.push(fieldError.typeInvalid(path, v, 'must be an object'));
      return;
    }
    if (typeof v.name !== 'string' || v.name === '') errs.push(fieldError.required(`${path}.name`));
    else {
      for (const e of dns1123LabelErrors(v.name)) errs.push(fieldError.invalid(`${path}.name`, v.name, e));
      if (seen.has(v.name)) errs.push(fieldError.duplicate(`${path}.name`, v.name));
      seen.add(v.name);
    }
    if (typeof v.served !== 'boolean') errs.push(fieldError.required(`${path}.served`));
    if (typeof v.storage !== 'boolean') errs.push(fieldError.required(`${path}.storage`));
    if (v.storage === true) storage++;
    const schema = dig(v, 'schema', 'openAPIV3Schema');
    if (schema === undefined) errs.push(fieldError.required(`${path}.schema.openAPIV3Schema`, 'schemas are required'));
    else errs.push(...structuralErrors(schema, `${path}.schema.openAPIV3Schema`));
    const columns = v.additionalPrinterColumns;
    if (Array.isArray(columns)) {
      columns.forEach((c, j) => {
        const cp = `${path}.additionalPrinterColumns[${j}]`;
        if (typeof dig(c, 'name') !== 'string') errs.push(fieldError.required(`${cp}.name`));
        const type = dig(c, 'type');
        if (!COLUMN_TYPES.includes(String(type))) errs.push(fieldError.notSupported(`${cp}.type`, type, COLUMN_TYPES));
        const jsonPath = dig(c, 'jsonPath');
        if (typeof jsonPath !== 'string') errs.push(fieldError.required(`${cp}.jsonPath`));
        else {
          try {
            parseJsonPath(jsonPath);
          } catch (err) {
            errs.push(fieldError.invalid(`${cp}.jsonPath`, jsonPath, (err as Error).message));
          }
        }
      });
    }
  });
  if (storage !== 1) {
    errs.push(
      fieldError.invalid(
        'spec.versions',
        versions.map((v) => dig(v, 'name')),
        'must have exactly one version marked as storage version',
      ),
    );
  }
  return errs;
}

function validateCrd(crd: KubeObject, old: KubeObject | undefined): FieldError[] {
  const spec = crd.spec;
  if (!isPlainObject(spec)) return [fieldError.required('spec')];
  const errs: FieldError[] = [];
  const group = spec.group;
  if (typeof group !== 'string' || group === '') errs.push(fieldError.required('spec.group'));
  else {
    for (const e of dns1123SubdomainErrors(group)) errs.push(fieldError.invalid('spec.group', group, e));
    if (!group.includes('.'))
      errs.push(fieldError.invalid('spec.group', group, 'should be a domain with at least one dot'));
  }
  const names = isPlainObject(spec.names) ? spec.names : {};
  const plural = names.plural;
  if (typeof plural !== 'string' || plural === '') errs.push(fieldError.required('spec.names.plural'));
  else for (const e of dns1123LabelErrors(plural)) errs.push(fieldError.invalid('spec.names.plural', plural, e));
  if (typeof names.kind !== 'string' || names.kind === '') errs.push(fieldError.required('spec.names.kind'));
  if (typeof names.singular === 'string') {
    for (const e of dns1123LabelErrors(names.singular))
      errs.push(fieldError.invalid('spec.names.singular', names.singular, e));
  }
  if (typeof plural === 'string' && typeof group === 'string' && crd.metadata.name !== `${plural}.${group}`) {
    errs.push(fieldError.invalid('metadata.name', crd.metadata.name, 'must be spec.names.plural+"."+spec.group'));
  }
  if (!SCOPES.includes(String(spec.scope))) {
    errs.push(
      spec.scope === undefined
        ? fieldError.required('spec.scope')
        : fieldError.notSupported('spec.scope', spec.scope, SCOPES),
    );
  }
  errs.push(...validateVersions(spec));
  if (old && isPlainObject(old.spec)) {
    if (old.spec.scope !== spec.scope) errs.push(fieldError.invalid('spec.scope', spec.scope, 'field is immutable'));
    if (old.spec.group !== spec.group) errs.push(fieldError.invalid('spec.group', spec.group, 'field is immutable'));
  }
  return errs;
}

/** The status kube-apiserver's CRD controllers converge to for an accepted CRD. */
export function acceptedStatus(crd: KubeObject, now: string): Record<string, unknown> {
  const spec = isPlainObject(crd.spec) ? crd.spec : {};
  const previous = isPlainObject(crd.status) ? crd.status : {};
  const oldConditions = Array.isArray(previous.conditions) ? previous.conditions : [];
  const since = (type: string): string =>
    str(
      dig(
        oldConditions.find((c) => dig(c, 'type') === type && dig(c, 'status') === 'True'),
        'lastTransitionTime',
      ),
    ) ?? now;
  const storage = (Array.isArray(spec.versions) ? spec.versions : []).find((v) => dig(v, 'storage') === true);
  const stored = new Set(Array.isArray(previous.storedVersions) ? previous.storedVersions.map(String) : []);
  const storageName = str(dig(storage, 'name'));
  if (storageName) stored.add(storageName);
  const conditions: Record<string, unknown>[] = [
    {
      type: 'NamesAccepted',
      status: 'True',
      lastTransitionTime: since('NamesAccepted'),
      reason: 'NoConflicts',
      message: 'no conflicts found',
    },
    {
      type: 'Established',
      status: 'True',
      lastTransitionTime: since('Established'),
      reason: 'InitialNamesAccepted',
      message: 'the initial names have been accepted',
    },
  ];
  if (crd.metadata.deletionTimestamp) {
    conditions.push({
      type: 'Terminating',
      status: 'True',
      lastTransitionTime: now,
      reason: 'InstanceDeletionInProgress',
      message: 'CustomResource deletion is in progress',
    });
  }
  return { conditions, acceptedNames: spec.names ?? {}, storedVersions: [...stored] };
}

export function crdResource(now: () => string): ReturnType<typeof builtinResource> {
  return builtinResource({
    group: 'apiextensions.k8s.io',
    version: 'v1',
    kind: 'CustomResourceDefinition',
    plural: 'customresourcedefinitions',
    namespaced: false,
    shortNames: ['crd', 'crds'],
    categories: ['api-extensions'],
    subresources: ['status'],
    table: {
      columns: [nameColumn, column('Created At', 'date')],
      cells: (o) => [o.metadata.name ?? '', o.metadata.creationTimestamp ?? null],
    },
    behaviour: {
      tracksGeneration: true,
      strategicMerge: true,
      returnDeletedObject: true,
      prepareForCreate(crd) {
        defaultCrd(crd);
        crd.metadata.finalizers = [...new Set([...(crd.metadata.finalizers ?? []), CRD_CLEANUP_FINALIZER])];
        crd.status = acceptedStatus({ ...crd, status: undefined }, now());
      },
      prepareForUpdate(crd) {
        defaultCrd(crd);
        crd.status = acceptedStatus(crd, now());
      },
      prepareForDelete(crd) {
        crd.status = acceptedStatus(crd, now());
      },
      validate: validateCrd,
    },
  });
}
