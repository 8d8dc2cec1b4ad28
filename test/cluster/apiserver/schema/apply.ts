// What kube-apiserver does with a custom resource body and its version's structural schema, in its
// order: prune unknown fields, drop non-nullable nulls, apply defaults, then validate. On update with
// the stored object given, errors on values that did not change are dropped (CRD validation
// ratcheting, on by default since Kubernetes 1.30). CEL rules (x-kubernetes-validations) are ignored.

import type { FieldError } from '../../../../src/api/field-errors.js';
import { applyDefaults } from './defaults.js';
import { publicError, typeInvalid, type SchemaError } from './errors.js';
import { pruneNonNullableNulls, pruneUnknownFields } from './prune.js';
import { isJsonObject, jsonEqual, jsonType, type FieldPath, type JSONSchemaProps } from './types.js';
import { validateValue } from './validate.js';

export interface ApplySchemaOptions {
  /** 'update' enables ratcheting against `oldObject`; default 'create'. */
  mode?: 'create' | 'update';
  /** The stored object, on update. */
  oldObject?: unknown;
}

export interface ApplySchemaResult {
  /** The pruned and defaulted copy of the input (the input itself is not modified). */
  object: unknown;
  errors: FieldError[];
  /**
   * Paths of the fields pruning dropped, e.g. `spec.foo` (kube reports these for fieldValidation=Strict
   * as `unknown field "spec.foo"` and for Warn as warnings).
   */
  unknownFields: string[];
}

export function applyStructuralSchema(
  schema: JSONSchemaProps,
  obj: unknown,
  opts: ApplySchemaOptions = {},
): ApplySchemaResult {
  if (!isJsonObject(obj)) {
    const actual = jsonType(obj);
    return {
      object: obj,
      errors: [publicError(typeInvalid([], actual, `in body must be of type object: "${actual}"`))],
      unknownFields: [],
    };
  }
  const object = structuredClone(obj);
  const unknownFields: string[] = [];
  pruneUnknownFields(object, schema, [], unknownFields, true);
  pruneNonNullableNulls(object, schema, true);
  applyDefaults(object, schema, true);
  let errors = validateValue(object, schema);
  if (opts.mode === 'update' && opts.oldObject !== undefined) errors = ratchet(errors, object, opts.oldObject);
  return { object, errors: errors.map(publicError), unknownFields };
}

/** Keep only the errors whose value (for a missing required field: whose parent) changed from `old`. */
function ratchet(errors: SchemaError[], updated: unknown, old: unknown): SchemaError[] {
  return errors.filter((error) => {
    const path = error.type === 'FieldValueRequired' ? error.path.slice(0, -1) : error.path;
    const before = valueAt(old, path);
    return before === undefined || !jsonEqual(before, valueAt(updated, path));
  });
}

function valueAt(root: unknown, path: FieldPath): unknown {
  let node = root;
  for (const segment of path) {
    if ('index' in segment) node = Array.isArray(node) ? node[segment.index] : undefined;
    else {
      const key = 'field' in segment ? segment.field : segment.key;
      node = isJsonObject(node) && Object.hasOwn(node, key) ? node[key] : undefined;
    }
    if (node === undefined) return undefined;
  }
  return node;
}
