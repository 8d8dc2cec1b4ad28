// Validation of ObjectMeta shared by every kind, and the helper that builds a built-in ResourceType.
import { fieldError, fieldPath, type FieldError } from '../field-errors.js';
import { STANDARD_VERBS, type KindBehaviour, type ResourceType } from '../resource-types.js';
import { defaultTable, type TableConverter } from '../table.js';
import { isPlainObject, type KubeObject } from '../types.js';
import { dns1123SubdomainErrors, labelValueErrors, qualifiedNameErrors, type NameValidator } from './names.js';

const MAX_ANNOTATIONS_BYTES = 256 * 1024;

function validateStringMap(value: unknown, path: string, checkValue?: (v: string) => string[]): FieldError[] {
  if (value === undefined || value === null) return [];
  if (!isPlainObject(value)) return [fieldError.typeInvalid(path, value, 'must be a map of strings')];
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(value)) {
    for (const e of qualifiedNameErrors(k)) errs.push(fieldError.invalid(path, k, e));
    if (typeof v !== 'string') errs.push(fieldError.typeInvalid(fieldPath.key(path, k), v, 'must be a string'));
    else if (checkValue) for (const e of checkValue(v)) errs.push(fieldError.invalid(fieldPath.key(path, k), v, e));
  }
  return errs;
}

/** Checks every kind shares: name, labels, annotations, finalizers, ownerReferences. */
export function validateObjectMeta(obj: KubeObject, nameErrors: NameValidator): FieldError[] {
  const m = obj.metadata;
  const errs: FieldError[] = [];
  if (!m.name) {
    errs.push(fieldError.required('metadata.name', 'name or generateName is required'));
  } else {
    for (const e of nameErrors(m.name)) errs.push(fieldError.invalid('metadata.name', m.name, e));
  }
  errs.push(...validateStringMap(m.labels, 'metadata.labels', labelValueErrors));
  errs.push(...validateStringMap(m.annotations, 'metadata.annotations'));
  if (isPlainObject(m.annotations)) {
    let size = 0;
    for (const [k, v] of Object.entries(m.annotations)) size += k.length + (typeof v === 'string' ? v.length : 0);
    if (size > MAX_ANNOTATIONS_BYTES) errs.push(fieldError.tooLong('metadata.annotations', MAX_ANNOTATIONS_BYTES));
  }
  if (m.finalizers !== undefined) {
    if (!Array.isArray(m.finalizers)) {
      errs.push(fieldError.typeInvalid('metadata.finalizers', m.finalizers, 'must be a list of strings'));
    } else {
      m.finalizers.forEach((f, i) => {
        const path = fieldPath.index('metadata.finalizers', i);
        if (typeof f !== 'string') errs.push(fieldError.typeInvalid(path, f, 'must be a string'));
        else for (const e of qualifiedNameErrors(f)) errs.push(fieldError.invalid(path, f, e));
      });
    }
  }
  if (m.ownerReferences !== undefined) {
    if (!Array.isArray(m.ownerReferences)) {
      errs.push(fieldError.typeInvalid('metadata.ownerReferences', m.ownerReferences, 'must be a list'));
    } else {
      let controllers = 0;
      m.ownerReferences.forEach((ref, i) => {
        const path = fieldPath.index('metadata.ownerReferences', i);
        if (!isPlainObject(ref)) {
          errs.push(fieldError.typeInvalid(path, ref, 'must be an object'));
          return;
        }
        for (const key of ['apiVersion', 'kind', 'name', 'uid'] as const) {
          if (typeof ref[key] !== 'string' || ref[key] === '') errs.push(fieldError.required(`${path}.${key}`));
        }
        if (ref.controller === true) controllers++;
      });
      if (controllers > 1) {
        errs.push(
          fieldError.invalid(
            'metadata.ownerReferences',
            m.ownerReferences,
            'Only one reference can have Controller set to true',
          ),
        );
      }
    }
  }
  return errs;
}

export interface BuiltinSpec {
  group: string;
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  subresources?: string[];
  behaviour?: Partial<KindBehaviour>;
  table?: TableConverter;
  /** Share storage with another resource (events.k8s.io Event lives with core Event). */
  storageKey?: string;
  fromStorage?: (obj: KubeObject) => KubeObject;
  toStorage?: (obj: KubeObject) => KubeObject;
}

export function builtinResource(spec: BuiltinSpec): ResourceType {
  const behaviour: KindBehaviour = {
    tracksGeneration: false,
    allowUnconditionalUpdate: true,
    strategicMerge: true,
    returnDeletedObject: false,
    nameErrors: dns1123SubdomainErrors,
    fieldSelectors: {},
    ...spec.behaviour,
  };
  return {
    group: spec.group,
    version: spec.version,
    kind: spec.kind,
    listKind: `${spec.kind}List`,
    plural: spec.plural,
    singular: spec.kind.toLowerCase(),
    shortNames: spec.shortNames ?? [],
    categories: spec.categories ?? [],
    namespaced: spec.namespaced,
    storageKey: spec.storageKey ?? `${spec.group || 'core'}/${spec.plural}`,
    subresources: spec.subresources ?? [],
    verbs: STANDARD_VERBS,
    behaviour,
    table: spec.table ?? defaultTable,
    fromStorage: spec.fromStorage ?? ((o) => o),
    toStorage: spec.toStorage ?? ((o) => o),
  };
}

/** A nested value by path, or undefined. */
export function dig(obj: unknown, ...path: (string | number)[]): unknown {
  let cur = obj;
  for (const p of path) {
    if (typeof p === 'number') {
      if (!Array.isArray(cur)) return undefined;
      cur = cur[p];
    } else {
      if (!isPlainObject(cur)) return undefined;
      cur = cur[p];
    }
  }
  return cur;
}

export function str(value: unknown): string | undefined {
  return typeof value === 'string'
    ? value
    : typeof value === 'number' || typeof value === 'boolean'
      ? String(value)
      : undefined;
}

/** The object at `obj[key]`, created when absent. */
export function ensureObject(obj: Record<string, unknown>, key: string): Record<string, unknown> {
  const cur = obj[key];
  if (isPlainObject(cur)) return cur;
  const fresh: Record<string, unknown> = {};
  obj[key] = fresh;
  return fresh;
}
