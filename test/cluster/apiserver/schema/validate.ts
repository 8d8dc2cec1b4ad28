// Validation of a (pruned, defaulted) object against a structural schema, with kube-apiserver's
// error types and messages (kube-openapi's `<path> in body ...` details wrapped in field errors).
// Covers type (integer vs number, int-or-string), nullable, required, enum, format, numeric bounds,
// string length and pattern, item and property counts, uniqueItems, additionalProperties,
// allOf/anyOf/oneOf/not, x-kubernetes-list-type set/map uniqueness and embedded resources.
// x-kubernetes-validations (CEL) rules are NOT evaluated.

import {
  duplicate,
  invalid,
  notSupported,
  required,
  tooLong,
  tooMany,
  typeInvalid,
  type SchemaError,
} from './errors.js';
import { conformsToFormat } from './formats.js';
import {
  additionalPropertiesSchema,
  formatPathOrEmpty,
  isJsonObject,
  itemsSchema,
  jsonEqual,
  jsonType,
  propertySchema,
  type FieldPath,
  type JSONSchemaProps,
} from './types.js';

const patternCache = new Map<string, RegExp | null>();

/** All schema violations of `value`; `path` is where `value` sits in the object. */
export function validateValue(value: unknown, schema: JSONSchemaProps, path: FieldPath = []): SchemaError[] {
  const errors: SchemaError[] = [];
  validateNode(value, schema, path, errors);
  return errors;
}

function validateNode(value: unknown, schema: JSONSchemaProps, path: FieldPath, errors: SchemaError[]): void {
  if (value === undefined) return;
  const name = formatPathOrEmpty(path);
  const intOrString = schema['x-kubernetes-int-or-string'] === true;

  if (value === null) {
    if (schema.nullable === true) return;
    if (intOrString) errors.push(typeInvalid(path, 'null', `${inBody(name)} must be of type integer,string: "null"`));
    else if (schema.type)
      errors.push(typeInvalid(path, 'null', `${inBody(name)} must be of type ${schema.type}: "null"`));
    return;
  }

  const actual = jsonType(value);
  if (intOrString) {
    if (actual !== 'integer' && actual !== 'string') {
      errors.push(typeInvalid(path, actual, `${inBody(name)} must be of type integer,string: "${actual}"`));
      return;
    }
  } else if (schema.type && !typeMatches(schema.type, actual)) {
    errors.push(typeInvalid(path, actual, `${inBody(name)} must be of type ${schema.type}: "${actual}"`));
    return;
  }

  if (schema.format && !conformsToFormat(schema.format, value)) {
    errors.push(
      typeInvalid(
        path,
        value,
        `${inBody(name)} must be of type ${schema.format}: ${JSON.stringify(typeof value === 'string' ? value : JSON.stringify(value))}`,
      ),
    );
  }
  if (schema.enum && !schema.enum.some((allowed) => jsonEqual(allowed, value))) {
    errors.push(notSupported(path, value, schema.enum));
  }
  if (typeof value === 'string') validateString(value, schema, path, name, errors);
  else if (typeof value === 'number') validateNumber(value, schema, path, name, errors);
  else if (Array.isArray(value)) validateArray(value, schema, path, name, errors);
  else if (isJsonObject(value)) validateObject(value, schema, path, name, errors);
  validateJunctors(value, schema, path, name, errors);
}

function typeMatches(type: string, actual: string): boolean {
  return type === actual || (type === 'number' && actual === 'integer');
}

function validateString(value: string, schema: JSONSchemaProps, path: FieldPath, name: string, errors: SchemaError[]) {
  const length = [...value].length;
  if (schema.maxLength !== undefined && length > schema.maxLength) errors.push(tooLong(path, value, schema.maxLength));
  if (schema.minLength !== undefined && length < schema.minLength) {
    errors.push(invalid(path, value, `${inBody(name)} should be at least ${schema.minLength} chars long`));
  }
  if (schema.pattern !== undefined) {
    const pattern = compilePattern(schema.pattern);
    if (pattern && !pattern.test(value)) {
      errors.push(invalid(path, value, `${inBody(name)} should match '${schema.pattern}'`));
    }
  }
}

function validateNumber(value: number, schema: JSONSchemaProps, path: FieldPath, name: string, errors: SchemaError[]) {
  if (schema.minimum !== undefined) {
    const below = schema.exclusiveMinimum ? value <= schema.minimum : value < schema.minimum;
    if (below) {
      const bound = schema.exclusiveMinimum ? 'greater than' : 'greater than or equal to';
      errors.push(invalid(path, value, `${inBody(name)} should be ${bound} ${schema.minimum}`));
    }
  }
  if (schema.maximum !== undefined) {
    const above = schema.exclusiveMaximum ? value >= schema.maximum : value > schema.maximum;
    if (above) {
      const bound = schema.exclusiveMaximum ? 'less than' : 'less than or equal to';
      errors.push(invalid(path, value, `${inBody(name)} should be ${bound} ${schema.maximum}`));
    }
  }
  if (schema.multipleOf !== undefined && schema.multipleOf > 0) {
    const quotient = value / schema.multipleOf;
    if (Math.abs(quotient - Math.round(quotient)) > 1e-9) {
      errors.push(invalid(path, value, `${inBody(name)} should be a multiple of ${schema.multipleOf}`));
    }
  }
}

function validateArray(
  value: unknown[],
  schema: JSONSchemaProps,
  path: FieldPath,
  name: string,
  errors: SchemaError[],
) {
  if (schema.minItems !== undefined && value.length < schema.minItems) {
    errors.push(invalid(path, value, `${inBody(name)} should have at least ${schema.minItems} items`));
  }
  if (schema.maxItems !== undefined && value.length > schema.maxItems) {
    errors.push(tooMany(path, value.length, schema.maxItems));
  }
  if (
    schema.uniqueItems === true &&
    value.some((item, i) => value.findIndex((other) => jsonEqual(other, item)) !== i)
  ) {
    errors.push(invalid(path, value, `${inBody(name)} shouldn't contain duplicates`));
  }
  const items = itemsSchema(schema);
  if (items) value.forEach((item, index) => validateNode(item, items, [...path, { index }], errors));
  validateListType(value, schema, path, errors);
}

/** x-kubernetes-list-type: set items are unique; map items are unique by their x-kubernetes-list-map-keys. */
function validateListType(value: unknown[], schema: JSONSchemaProps, path: FieldPath, errors: SchemaError[]) {
  const listType = schema['x-kubernetes-list-type'];
  if (listType === 'set') {
    value.forEach((item, index) => {
      if (value.findIndex((other) => jsonEqual(other, item)) !== index)
        errors.push(duplicate([...path, { index }], item));
    });
  } else if (listType === 'map') {
    const keys = schema['x-kubernetes-list-map-keys'] ?? [];
    const items = itemsSchema(schema);
    const seen: Record<string, unknown>[] = [];
    value.forEach((item, index) => {
      if (!isJsonObject(item)) return;
      const identity: Record<string, unknown> = {};
      for (const key of keys) {
        const keyValue = Object.hasOwn(item, key) ? item[key] : items && propertySchema(items, key)?.default;
        if (keyValue !== undefined) identity[key] = keyValue;
      }
      if (seen.some((other) => jsonEqual(other, identity))) errors.push(duplicate([...path, { index }], identity));
      else seen.push(identity);
    });
  }
}

function validateObject(
  value: Record<string, unknown>,
  schema: JSONSchemaProps,
  path: FieldPath,
  name: string,
  errors: SchemaError[],
) {
  const count = Object.keys(value).length;
  if (schema.minProperties !== undefined && count < schema.minProperties) {
    errors.push(invalid(path, value, `${inBody(name)} should have at least ${schema.minProperties} properties`));
  }
  if (schema.maxProperties !== undefined && count > schema.maxProperties) {
    errors.push(tooMany(path, count, schema.maxProperties));
  }
  for (const field of schema.required ?? []) {
    if (!Object.hasOwn(value, field) || value[field] === undefined) errors.push(required([...path, { field }]));
  }
  if (schema['x-kubernetes-embedded-resource'] === true) validateEmbeddedResource(value, path, errors);

  const additional = additionalPropertiesSchema(schema);
  for (const [key, child] of Object.entries(value)) {
    const property = propertySchema(schema, key);
    if (property) validateNode(child, property, [...path, { field: key }], errors);
    else if (additional) validateNode(child, additional, [...path, { key }], errors);
    else if (schema.additionalProperties === false && schema['x-kubernetes-preserve-unknown-fields'] !== true) {
      errors.push(
        invalid(
          [...path, { field: key }],
          key,
          `${name === '' ? '' : `${name}.`}${key} in body is a forbidden property`,
        ),
      );
    }
  }
}

/** An embedded object needs a non-empty apiVersion and kind (its metadata is kept as ObjectMeta). */
function validateEmbeddedResource(value: Record<string, unknown>, path: FieldPath, errors: SchemaError[]) {
  for (const field of ['apiVersion', 'kind']) {
    const fieldValue = value[field];
    const fieldPath = [...path, { field }];
    if (fieldValue === undefined || fieldValue === null || fieldValue === '')
      errors.push(required(fieldPath, 'must not be empty'));
    else if (typeof fieldValue !== 'string') errors.push(typeInvalid(fieldPath, fieldValue, 'must be a string'));
  }
  const metadata = value['metadata'];
  if (metadata !== undefined && metadata !== null && !isJsonObject(metadata)) {
    errors.push(typeInvalid([...path, { field: 'metadata' }], metadata, 'must be an object'));
  }
}

function validateJunctors(
  value: unknown,
  schema: JSONSchemaProps,
  path: FieldPath,
  name: string,
  errors: SchemaError[],
) {
  const skipAnyOf = schema['x-kubernetes-int-or-string'] === true && isIntOrStringAnyOf(schema.anyOf);
  for (const [index, sub] of (schema.allOf ?? []).entries()) {
    const intOrStringBranch =
      index === 0 && schema['x-kubernetes-int-or-string'] === true && isIntOrStringAnyOf(sub.anyOf);
    validateNode(value, intOrStringBranch ? { ...sub, anyOf: undefined } : sub, path, errors);
  }
  if (schema.anyOf && !skipAnyOf) {
    const passes = schema.anyOf.some((sub) => validateValue(value, sub, path).length === 0);
    if (!passes) errors.push(invalid(path, value, `${inBody(name)} must validate at least one schema (anyOf)`));
  }
  if (schema.oneOf) {
    const passing = schema.oneOf.filter((sub) => validateValue(value, sub, path).length === 0).length;
    if (passing !== 1)
      errors.push(invalid(path, value, `${inBody(name)} must validate one and only one schema (oneOf)`));
  }
  if (schema.not && validateValue(value, schema.not, path).length === 0) {
    errors.push(invalid(path, value, `${inBody(name)} must not validate the schema (not)`));
  }
}

/** kube-openapi's subject of a message: `spec.x in body`, or `in body` at the root. */
function inBody(name: string): string {
  return name === '' ? 'in body' : `${name} in body`;
}

/** The `anyOf: [{type: integer}, {type: string}]` that accompanies x-kubernetes-int-or-string. */
export function isIntOrStringAnyOf(anyOf: readonly JSONSchemaProps[] | undefined): boolean {
  return anyOf?.length === 2 && jsonEqual(anyOf[0], { type: 'integer' }) && jsonEqual(anyOf[1], { type: 'string' });
}

/** Compile a schema pattern once; null if it is not a valid (JavaScript) regular expression. */
export function compilePattern(pattern: string): RegExp | null {
  let compiled = patternCache.get(pattern);
  if (compiled === undefined) {
    try {
      compiled = new RegExp(pattern, 'u');
    } catch {
      try {
        compiled = new RegExp(pattern);
      } catch {
        compiled = null;
      }
    }
    patternCache.set(pattern, compiled);
  }
  return compiled;
}
