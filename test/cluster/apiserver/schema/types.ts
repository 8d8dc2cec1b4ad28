// OpenAPI v3 schema of a CRD version (apiextensions.k8s.io/v1 JSONSchemaProps) with its JSON names,
// as found in a CRD's spec.versions[].schema.openAPIV3Schema.

export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: string;
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

export interface JSONSchemaProps {
  id?: string;
  $schema?: string;
  $ref?: string;
  description?: string;
  title?: string;
  type?: string;
  format?: string;
  default?: unknown;
  example?: unknown;
  externalDocs?: unknown;
  nullable?: boolean;
  maximum?: number;
  exclusiveMaximum?: boolean;
  minimum?: number;
  exclusiveMinimum?: boolean;
  multipleOf?: number;
  maxLength?: number;
  minLength?: number;
  pattern?: string;
  maxItems?: number;
  minItems?: number;
  uniqueItems?: boolean;
  maxProperties?: number;
  minProperties?: number;
  required?: string[];
  enum?: unknown[];
  /** Must be a single schema in a CRD (an array is rejected by checkStructural). */
  items?: JSONSchemaProps | JSONSchemaProps[];
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: JSONSchemaProps | boolean;
  patternProperties?: Record<string, JSONSchemaProps>;
  additionalItems?: JSONSchemaProps | boolean;
  definitions?: Record<string, JSONSchemaProps>;
  dependencies?: Record<string, unknown>;
  allOf?: JSONSchemaProps[];
  anyOf?: JSONSchemaProps[] | undefined;
  oneOf?: JSONSchemaProps[];
  not?: JSONSchemaProps;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: string;
  /** CEL rules: checked for shape by checkStructural, NOT evaluated by applyStructuralSchema. */
  'x-kubernetes-validations'?: ValidationRule[];
}

/** One step of a field path. */
export type PathSegment = { readonly field: string } | { readonly index: number } | { readonly key: string };

export type FieldPath = readonly PathSegment[];

/** Kube's field.Path string: `spec.images[nginx].tags[0].tag`; the empty path is `<nil>`. */
export function formatPath(path: FieldPath): string {
  return formatPathOrEmpty(path) || '<nil>';
}

/** As formatPath, but '' for the root (the form kube-openapi puts inside its messages). */
export function formatPathOrEmpty(path: FieldPath): string {
  let out = '';
  for (const segment of path) {
    if ('field' in segment) out = out === '' ? segment.field : `${out}.${segment.field}`;
    else if ('index' in segment) out = `${out}[${segment.index}]`;
    else out = `${out}[${segment.key}]`;
  }
  return out;
}

export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A schema node that is a JSON object: a CRD may hold anything where a schema belongs, its fields are checked as read. */
export function isSchemaObject(value: unknown): value is JSONSchemaProps {
  return isJsonObject(value);
}

/** The single items schema, if the node has one. */
export function itemsSchema(schema: JSONSchemaProps): JSONSchemaProps | undefined {
  return isJsonObject(schema.items) ? schema.items : undefined;
}

/** The additionalProperties schema, if it is one (not a boolean). */
export function additionalPropertiesSchema(schema: JSONSchemaProps): JSONSchemaProps | undefined {
  return isJsonObject(schema.additionalProperties) ? schema.additionalProperties : undefined;
}

/** JSON type of a value in the vocabulary of schema messages (an integral number is "integer"). */
export function jsonType(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** Structural equality of JSON values. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]));
  }
  if (isJsonObject(a) && isJsonObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

/** The schema of property `key` (own properties only: `constructor` is a field name, not Object's). */
export function propertySchema(schema: JSONSchemaProps, key: string): JSONSchemaProps | undefined {
  const properties = schema.properties;
  return properties && Object.hasOwn(properties, key) ? properties[key] : undefined;
}

/** Set a field on a JSON object without ever touching its prototype (a key may be `__proto__`). */
export function setField(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}
