// Defaulting as kube-apiserver does it: a property's `default` is set when the property is missing
// (or null and not nullable); then defaulting recurses into every value, defaulted ones included, so
// `default: {}` on an object brings in its properties' defaults. Root metadata is never defaulted.

import {
  additionalPropertiesSchema,
  isJsonObject,
  itemsSchema,
  propertySchema,
  setField,
  type JSONSchemaProps,
} from './types.js';

export function applyDefaults(value: unknown, schema: JSONSchemaProps, isRoot = false): void {
  if (Array.isArray(value)) {
    const items = itemsSchema(schema);
    if (items) value.forEach((item) => applyDefaults(item, items));
    return;
  }
  if (!isJsonObject(value)) return;
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    if (isRoot && key === 'metadata') continue;
    if (property.default === undefined) continue;
    const current = Object.hasOwn(value, key) ? value[key] : undefined;
    if (current === undefined || (current === null && property.nullable !== true)) {
      setField(value, key, structuredClone(property.default));
    }
  }
  const additional = additionalPropertiesSchema(schema);
  for (const key of Object.keys(value)) {
    if (isRoot && key === 'metadata') continue;
    const property = propertySchema(schema, key) ?? additional;
    if (property) applyDefaults(value[key], property);
  }
}
