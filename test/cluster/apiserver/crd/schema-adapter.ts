// Custom resources through their CRD version's structural schema (the schema module does the work):
// prune unknown fields, apply defaults, validate (with ratcheting against the stored object on update).
import { applyStructuralSchema, type JSONSchemaProps } from '../schema/index.js';
import type { FieldError } from '../field-errors.js';
import { isPlainObject, type KubeObject } from '../types.js';

export interface SchemaResult {
  object: KubeObject;
  errors: FieldError[];
  /** Paths (`spec.foo`) present in the input and dropped by pruning. */
  unknownFields: string[];
}

export function applySchema(schema: unknown, obj: KubeObject, old: KubeObject | undefined): SchemaResult {
  const result = applyStructuralSchema(schema as JSONSchemaProps, obj, {
    mode: old ? 'update' : 'create',
    oldObject: old,
  });
  const object = (isPlainObject(result.object) ? result.object : obj) as KubeObject;
  if (!isPlainObject(object.metadata)) object.metadata = obj.metadata;
  return { object, errors: result.errors, unknownFields: result.unknownFields };
}
