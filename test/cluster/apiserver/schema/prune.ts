// Pruning as kube-apiserver does it for structural schemas: fields not specified by the schema are
// dropped, except under x-kubernetes-preserve-unknown-fields (or additionalProperties: true).
// apiVersion, kind and metadata of the root and of x-kubernetes-embedded-resource objects are kept;
// root metadata is left to the caller, embedded metadata is cut down to ObjectMeta's fields.
// Then null values of non-nullable fields without a default are dropped (kube does this before
// defaulting, so such a null counts as absent).

import {
  additionalPropertiesSchema,
  formatPath,
  isJsonObject,
  itemsSchema,
  propertySchema,
  type FieldPath,
  type JSONSchemaProps,
} from './types.js';

const OBJECT_META_FIELDS = new Set([
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
]);

/** Drop unknown fields from `value` in place; the path of every dropped field is appended to `dropped`. */
export function pruneUnknownFields(
  value: unknown,
  schema: JSONSchemaProps,
  path: FieldPath,
  dropped: string[],
  isRoot = false,
): void {
  if (Array.isArray(value)) {
    const items = itemsSchema(schema);
    if (items) value.forEach((item, index) => pruneUnknownFields(item, items, [...path, { index }], dropped));
    return;
  }
  if (!isJsonObject(value)) return;
  const embedded = schema['x-kubernetes-embedded-resource'] === true;
  const keepUnknown = schema['x-kubernetes-preserve-unknown-fields'] === true || schema.additionalProperties === true;
  const additional = additionalPropertiesSchema(schema);
  for (const key of Object.keys(value)) {
    if ((isRoot || embedded) && (key === 'apiVersion' || key === 'kind')) continue;
    if (isRoot && key === 'metadata') continue;
    if (embedded && key === 'metadata') {
      pruneObjectMeta(value[key], [...path, { field: key }], dropped);
      continue;
    }
    const property = propertySchema(schema, key);
    if (property) {
      pruneUnknownFields(value[key], property, [...path, { field: key }], dropped);
    } else if (additional) {
      pruneUnknownFields(value[key], additional, [...path, { key }], dropped);
    } else if (!keepUnknown) {
      delete value[key];
      dropped.push(formatPath([...path, { field: key }]));
    }
  }
}

function pruneObjectMeta(metadata: unknown, path: FieldPath, dropped: string[]): void {
  if (!isJsonObject(metadata)) return;
  for (const key of Object.keys(metadata)) {
    if (OBJECT_META_FIELDS.has(key)) continue;
    delete metadata[key];
    dropped.push(formatPath([...path, { field: key }]));
  }
}

/** Drop `null` values of fields that are neither nullable nor defaulted (kube's PruneNonNullableNullsWithoutDefaults). */
export function pruneNonNullableNulls(value: unknown, schema: JSONSchemaProps, isRoot = false): void {
  if (Array.isArray(value)) {
    const items = itemsSchema(schema);
    if (items) value.forEach((item) => pruneNonNullableNulls(item, items));
    return;
  }
  if (!isJsonObject(value)) return;
  const embedded = schema['x-kubernetes-embedded-resource'] === true;
  const additional = additionalPropertiesSchema(schema);
  for (const key of Object.keys(value)) {
    if ((isRoot || embedded) && key === 'metadata') continue;
    const property = propertySchema(schema, key) ?? additional;
    if (!property) continue;
    if (value[key] === null && property.nullable !== true && property.default === undefined) delete value[key];
    else pruneNonNullableNulls(value[key], property);
  }
}
