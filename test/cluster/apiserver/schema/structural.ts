// checkStructural: the problems kube-apiserver reports for a CRD version's openAPIV3Schema, i.e. what
// makes it non-structural (type missing, value validations in anyOf/allOf/oneOf/not that set type,
// default, nullable, ... or that specify fields not specified outside, metadata restricted beyond
// name/generateName, additionalProperties at the root) and what apiextensions rejects outright
// ($ref, uniqueItems, additionalProperties beside properties, bad list/map types, invalid patterns,
// defaults that do not validate or are not pruned). Each problem is one line in kube's wording:
// `properties[spec].type: Required value: must not be empty for specified object fields`.

import type { FieldError } from '../../../../src/api/field-errors.js';
import { forbidden, invalid, notSupported, publicError, required, type SchemaError } from './errors.js';
import { pruneUnknownFields } from './prune.js';
import { formatPath, isJsonObject, isSchemaObject, type FieldPath, type JSONSchemaProps } from './types.js';
import { compilePattern, isIntOrStringAnyOf, validateValue } from './validate.js';

const OPENAPI_TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];
const META_FIELDS = ['metadata', 'apiVersion', 'kind'];

type Level = 'root' | 'item' | 'field';

interface Context {
  /** Inside the schema of root (or embedded) metadata. */
  insideResourceMeta: boolean;
  /** Set when defaults are not allowed here; the reason follows "must not be set". */
  forbidDefaults?: string;
}

/**
 * Problems that make `schema` unacceptable as a CRD structural schema; empty when it is fine.
 * `basePath` prefixes every path (e.g. `spec.versions[0].schema.openAPIV3Schema`).
 */
export function checkStructural(schema: unknown, basePath = ''): string[] {
  return checkStructuralErrors(schema, basePath).map((p) => `${p.field}: ${p.message}`);
}

/** The same problems as field errors (type, field, message as kube words them), sorted like kube sorts them. */
export function checkStructuralErrors(schema: unknown, basePath = ''): FieldError[] {
  const base: FieldPath = basePath === '' ? [] : [{ field: basePath }];
  const problems: SchemaError[] = [];
  if (!isJsonObject(schema)) {
    problems.push(invalid(base, typeof schema, 'the schema must be an object'));
  } else {
    checkNode(schema, base, 'root', { insideResourceMeta: false }, problems);
  }
  const line = (p: SchemaError): string => `${p.field}: ${p.message}`;
  return problems.sort((a, b) => (line(a) < line(b) ? -1 : line(a) > line(b) ? 1 : 0)).map(publicError);
}

function checkNode(s: JSONSchemaProps, path: FieldPath, level: Level, ctx: Context, out: SchemaError[]): void {
  checkStandard(s, path, ctx, out);
  checkExtensions(s, path, out);
  checkDefault(s, path, out);

  const type = s.type ?? '';
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  const embedded = s['x-kubernetes-embedded-resource'] === true;

  if (type === 'array' && s.items === undefined) out.push(required(at(path, 'items'), 'must be specified'));
  if (embedded && type !== 'object') {
    if (type === '') out.push(required(at(path, 'type'), 'must be object if x-kubernetes-embedded-resource is true'));
    else out.push(invalid(at(path, 'type'), type, 'must be object if x-kubernetes-embedded-resource is true'));
  } else if (type === '' && !intOrString && !preserve) {
    const detail = {
      root: 'must not be empty at the root',
      item: 'must not be empty for specified array items',
      field: 'must not be empty for specified object fields',
    }[level];
    out.push(required(at(path, 'type'), detail));
  }
  if (embedded && s.additionalProperties !== undefined) {
    out.push(forbidden(at(path, 'additionalProperties'), 'must not be used if x-kubernetes-embedded-resource is set'));
  }
  if (level === 'root' && type !== '' && type !== 'object')
    out.push(invalid(at(path, 'type'), type, 'must be object at the root'));
  if (level === 'root' && s.additionalProperties !== undefined) {
    out.push(forbidden(at(path, 'additionalProperties'), 'must not be used at the root'));
  }
  if (s.properties && s.additionalProperties !== undefined && Object.keys(s.properties).length > 0) {
    if (s.additionalProperties === false || isJsonObject(s.additionalProperties)) {
      out.push(forbidden(at(path, 'additionalProperties'), 'additionalProperties and properties are mutual exclusive'));
    }
  }
  if (level === 'root' || embedded) checkResourceMetaFields(s, path, level, out);
  if (embedded && !preserve && Object.keys(s.properties ?? {}).length === 0) {
    out.push(
      required(
        at(path, 'properties'),
        'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields',
      ),
    );
  }

  checkJunctors(s, path, level, out);

  if (isJsonObject(s.items)) checkNode(s.items, at(path, 'items'), 'item', ctx, out);
  for (const [key, property] of Object.entries(s.properties ?? {})) {
    const childPath: FieldPath = [...path, { field: 'properties' }, { key }];
    if (!isJsonObject(property)) {
      out.push(invalid(childPath, typeof property, 'must be a schema object'));
      continue;
    }
    let childCtx = ctx;
    if ((level === 'root' || embedded) && META_FIELDS.includes(key)) {
      childCtx = { ...ctx, insideResourceMeta: true };
      if (level === 'root') childCtx.forbidDefaults = `in top-level ${key}`;
    }
    checkNode(property, childPath, 'field', childCtx, out);
  }
  if (isJsonObject(s.additionalProperties)) {
    const childCtx = ctx.insideResourceMeta
      ? { ...ctx, forbidDefaults: 'inside additionalProperties applying to object metadata' }
      : ctx;
    checkNode(s.additionalProperties, at(path, 'additionalProperties'), 'field', childCtx, out);
  }
}

/** Checks apiextensions applies to every schema node, inside logical junctors too. */
function checkStandard(s: JSONSchemaProps, path: FieldPath, ctx: Context, out: SchemaError[]): void {
  if (s.type !== undefined && s.type !== '' && s.type !== 'null' && !OPENAPI_TYPES.includes(s.type)) {
    out.push(notSupported(at(path, 'type'), s.type, OPENAPI_TYPES));
  }
  if (s.type === 'null')
    out.push(forbidden(at(path, 'type'), 'type cannot be set to null, use nullable as an alternative'));
  if (s.default !== undefined && ctx.forbidDefaults !== undefined) {
    out.push(forbidden(at(path, 'default'), `must not be set ${ctx.forbidDefaults}`));
  }
  const unsupported: [keyof JSONSchemaProps, string][] = [
    ['id', 'id'],
    ['additionalItems', 'additionalItems'],
    ['patternProperties', 'patternProperties'],
    ['definitions', 'definitions'],
    ['dependencies', 'dependencies'],
    ['$ref', '$ref'],
  ];
  for (const [key, label] of unsupported) {
    if (s[key] !== undefined) out.push(forbidden(at(path, label), `${label} is not supported`));
  }
  if (Array.isArray(s.items)) out.push(forbidden(at(path, 'items'), 'items must be a schema object and not an array'));
  if (s.uniqueItems === true) {
    out.push(
      forbidden(
        at(path, 'uniqueItems'),
        'uniqueItems cannot be set to true since the runtime complexity becomes quadratic',
      ),
    );
  }
  if (ctx.insideResourceMeta && s['x-kubernetes-embedded-resource'] === true) {
    out.push(forbidden(at(path, 'x-kubernetes-embedded-resource'), 'must not be used inside of resource meta'));
  }
  if (s.pattern !== undefined && compilePattern(s.pattern) === null) {
    out.push(invalid(at(path, 'pattern'), s.pattern, 'must be a valid regular expression'));
  }
}

function checkExtensions(s: JSONSchemaProps, path: FieldPath, out: SchemaError[]): void {
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  if (s['x-kubernetes-preserve-unknown-fields'] === false) {
    out.push(invalid(at(path, 'x-kubernetes-preserve-unknown-fields'), false, 'must be true or undefined'));
  }
  if (intOrString && s['x-kubernetes-preserve-unknown-fields'] === true) {
    out.push(
      invalid(
        at(path, 'x-kubernetes-preserve-unknown-fields'),
        true,
        'must be false if x-kubernetes-int-or-string is true',
      ),
    );
  }
  if (intOrString && s['x-kubernetes-embedded-resource'] === true) {
    out.push(
      invalid(at(path, 'x-kubernetes-embedded-resource'), true, 'must be false if x-kubernetes-int-or-string is true'),
    );
  }
  const mapType = s['x-kubernetes-map-type'];
  if (mapType !== undefined) {
    if (s.type !== 'object') {
      const detail = 'must be object if x-kubernetes-map-type is specified';
      out.push(s.type ? invalid(at(path, 'type'), s.type, detail) : required(at(path, 'type'), detail));
    }
    if (mapType !== 'atomic' && mapType !== 'granular') {
      out.push(notSupported(at(path, 'x-kubernetes-map-type'), mapType, ['atomic', 'granular']));
    }
  }
  const listType = s['x-kubernetes-list-type'];
  const mapKeys = s['x-kubernetes-list-map-keys'] ?? [];
  if (listType !== undefined) {
    if (s.type !== 'array') {
      const detail = 'must be array if x-kubernetes-list-type is specified';
      out.push(s.type ? invalid(at(path, 'type'), s.type, detail) : required(at(path, 'type'), detail));
    }
    if (!['atomic', 'set', 'map'].includes(listType)) {
      out.push(notSupported(at(path, 'x-kubernetes-list-type'), listType, ['atomic', 'set', 'map']));
    }
  }
  if (mapKeys.length > 0 && listType !== 'map') {
    const detail = 'must be map if x-kubernetes-list-map-keys is non-empty';
    out.push(
      listType === undefined
        ? required(at(path, 'x-kubernetes-list-type'), detail)
        : invalid(at(path, 'x-kubernetes-list-type'), listType, detail),
    );
  }
  const items = isJsonObject(s.items) ? (s.items as JSONSchemaProps) : undefined;
  if (listType === 'map') {
    if (mapKeys.length === 0) {
      out.push(required(at(path, 'x-kubernetes-list-map-keys'), 'must not be empty if x-kubernetes-list-type is map'));
    }
    if (!items) out.push(required(at(path, 'items'), 'must have a schema if x-kubernetes-list-type is map'));
    else if (items.type !== 'object') {
      out.push(
        invalid(
          [...path, { field: 'items' }, { field: 'type' }],
          items.type ?? '',
          "must be object if parent array's x-kubernetes-list-type is map",
        ),
      );
    } else {
      const seen = new Set<string>();
      for (const key of mapKeys) {
        const keyPath: FieldPath = [...path, { field: 'items' }, { field: 'properties' }, { key }];
        const keySchema = items.properties && Object.hasOwn(items.properties, key) ? items.properties[key] : undefined;
        if (!keySchema) {
          out.push(
            invalid(at(path, 'x-kubernetes-list-map-keys'), mapKeys, 'entries must all be names of item properties'),
          );
        } else {
          if (keySchema.type === 'array' || keySchema.type === 'object') {
            out.push(
              invalid(
                at(keyPath, 'type'),
                keySchema.type,
                "must be a scalar type if parent array's x-kubernetes-list-type is map",
              ),
            );
          }
          if (!(items.required ?? []).includes(key) && keySchema.default === undefined) {
            out.push(
              required(
                at(keyPath, 'default'),
                'this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property',
              ),
            );
          }
          if (keySchema.nullable === true) {
            out.push(
              forbidden(
                at(keyPath, 'nullable'),
                'this property is in x-kubernetes-list-map-keys, so it cannot be nullable',
              ),
            );
          }
        }
        if (seen.has(key))
          out.push(invalid(at(path, 'x-kubernetes-list-map-keys'), mapKeys, 'must not contain duplicate entries'));
        seen.add(key);
      }
    }
  }
  if ((listType === 'set' || listType === 'map') && items?.nullable === true) {
    out.push(
      forbidden(
        [...path, { field: 'items' }, { field: 'nullable' }],
        `cannot be nullable when x-kubernetes-list-type is ${listType}`,
      ),
    );
  }
  (s['x-kubernetes-validations'] ?? []).forEach((rule, index) => {
    const rulePath: FieldPath = [...path, { field: 'x-kubernetes-validations' }, { index }];
    if (typeof rule?.rule !== 'string' || rule.rule.trim() === '')
      out.push(required(at(rulePath, 'rule'), 'rule is not specified'));
  });
}

/** Root and embedded objects: kind/apiVersion are strings, metadata an object; root metadata only restricts name/generateName. */
function checkResourceMetaFields(s: JSONSchemaProps, path: FieldPath, level: Level, out: SchemaError[]): void {
  const props = s.properties ?? {};
  for (const field of ['kind', 'apiVersion']) {
    const prop = Object.hasOwn(props, field) ? props[field] : undefined;
    if (prop && prop.type !== 'string') {
      out.push(
        invalid(
          [...path, { field: 'properties' }, { key: field }, { field: 'type' }],
          prop.type ?? '',
          'must be string',
        ),
      );
    }
  }
  const metadata = Object.hasOwn(props, 'metadata') ? props['metadata'] : undefined;
  if (!metadata) return;
  if (metadata.type !== 'object') {
    out.push(
      invalid(
        [...path, { field: 'properties' }, { key: 'metadata' }, { field: 'type' }],
        metadata.type ?? '',
        'must be object',
      ),
    );
  }
  if (level !== 'root') return;
  const allowed = new Set(['type', 'description', 'title', 'example', 'externalDocs', 'properties', 'default']);
  const extraKeys = Object.keys(metadata).filter((k) => !allowed.has(k));
  const extraProps = Object.keys(metadata.properties ?? {}).filter((k) => k !== 'name' && k !== 'generateName');
  if (extraKeys.length > 0 || extraProps.length > 0) {
    out.push(
      forbidden(
        [...path, { field: 'properties' }, { key: 'metadata' }],
        'must not specify anything other than name and generateName, but metadata is implicitly specified',
      ),
    );
  }
}

/** A default must validate against its own schema and survive pruning unchanged. */
function checkDefault(s: JSONSchemaProps, path: FieldPath, out: SchemaError[]): void {
  if (s.default === undefined) return;
  const copy = structuredClone(s.default);
  const dropped: string[] = [];
  pruneUnknownFields(copy, s, [], dropped);
  if (dropped.length > 0) {
    out.push(invalid(at(path, 'default'), s.default, `must not have unknown fields: ${dropped.join(', ')}`));
  }
  for (const problem of validateValue(s.default, s)) {
    out.push({ ...problem, field: formatPath(at(path, 'default')), message: problem.message });
  }
}

/** Value validations in allOf/anyOf/oneOf/not: no type, default, ...; fields they name must exist outside. */
function checkJunctors(s: JSONSchemaProps, path: FieldPath, level: Level, out: SchemaError[]): void {
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  const visit = (sub: JSONSchemaProps, subPath: FieldPath, allowIntOrStringAnyOf: boolean): void => {
    checkNested(sub, subPath, level, allowIntOrStringAnyOf, out);
    checkCompleteness(s, sub, path, subPath, out);
  };
  (s.allOf ?? []).forEach((sub, i) => visit(sub, [...path, { field: 'allOf' }, { index: i }], intOrString && i === 0));
  if (!(intOrString && isIntOrStringAnyOf(s.anyOf))) {
    (s.anyOf ?? []).forEach((sub, i) => visit(sub, [...path, { field: 'anyOf' }, { index: i }], false));
  }
  (s.oneOf ?? []).forEach((sub, i) => visit(sub, [...path, { field: 'oneOf' }, { index: i }], false));
  if (s.not) visit(s.not, at(path, 'not'), false);
}

function checkNested(v: unknown, path: FieldPath, level: Level, skipAnyOf: boolean, out: SchemaError[]): void {
  if (!isSchemaObject(v)) {
    out.push(invalid(path, typeof v, 'must be a schema object'));
    return;
  }
  checkStandard(v, path, { insideResourceMeta: false }, out);
  if (v.type !== undefined) out.push(forbidden(at(path, 'type'), 'must be empty to be structural'));
  if (v.additionalProperties !== undefined)
    out.push(forbidden(at(path, 'additionalProperties'), 'must be undefined to be structural'));
  if (v.default !== undefined) out.push(forbidden(at(path, 'default'), 'must be undefined to be structural'));
  if (v.title) out.push(forbidden(at(path, 'title'), 'must be empty to be structural'));
  if (v.description) out.push(forbidden(at(path, 'description'), 'must be empty to be structural'));
  if (v.nullable === true) out.push(forbidden(at(path, 'nullable'), 'must be false to be structural'));
  for (const ext of [
    'x-kubernetes-preserve-unknown-fields',
    'x-kubernetes-embedded-resource',
    'x-kubernetes-int-or-string',
  ] as const) {
    if (v[ext] === true) out.push(forbidden(at(path, ext), 'must be false to be structural'));
  }
  if ((v['x-kubernetes-list-map-keys'] ?? []).length > 0) {
    out.push(forbidden(at(path, 'x-kubernetes-list-map-keys'), 'must be empty to be structural'));
  }
  if (v['x-kubernetes-list-type'] !== undefined)
    out.push(forbidden(at(path, 'x-kubernetes-list-type'), 'must be undefined to be structural'));
  if (v.properties && Object.hasOwn(v.properties, 'metadata')) {
    out.push(
      forbidden([...path, { field: 'properties' }, { key: 'metadata' }], 'must not be specified in a nested context'),
    );
  }
  const allOfIntOrString = skipAnyOf && isIntOrStringAnyOf(v.anyOf);
  if (!allOfIntOrString)
    (v.anyOf ?? []).forEach((sub, i) =>
      checkNested(sub, [...path, { field: 'anyOf' }, { index: i }], level, false, out),
    );
  (v.allOf ?? []).forEach((sub, i) => checkNested(sub, [...path, { field: 'allOf' }, { index: i }], level, false, out));
  (v.oneOf ?? []).forEach((sub, i) => checkNested(sub, [...path, { field: 'oneOf' }, { index: i }], level, false, out));
  if (v.not) checkNested(v.not, at(path, 'not'), level, false, out);
  if (isJsonObject(v.items)) checkNested(v.items, at(path, 'items'), 'item', false, out);
  for (const [key, prop] of Object.entries(v.properties ?? {})) {
    checkNested(prop, [...path, { field: 'properties' }, { key }], 'field', false, out);
  }
}

/** Every property/items a junctor names must be specified in the structural part of the same node. */
function checkCompleteness(
  structural: JSONSchemaProps | undefined,
  nested: unknown,
  structuralPath: FieldPath,
  nestedPath: FieldPath,
  out: SchemaError[],
): void {
  if (!isSchemaObject(nested)) return;
  for (const [key, prop] of Object.entries(nested.properties ?? {})) {
    const target =
      structural?.properties && Object.hasOwn(structural.properties, key) ? structural.properties[key] : undefined;
    const targetPath: FieldPath = [...structuralPath, { field: 'properties' }, { key }];
    const nestedPropPath: FieldPath = [...nestedPath, { field: 'properties' }, { key }];
    if (!target) {
      out.push(required(targetPath, `because it is defined in ${formatPath(nestedPropPath)}`));
      continue;
    }
    checkCompleteness(target, prop, targetPath, nestedPropPath, out);
  }
  if (isJsonObject(nested.items)) {
    const target = isJsonObject(structural?.items) ? (structural?.items as JSONSchemaProps) : undefined;
    if (!target)
      out.push(
        required(at(structuralPath, 'items'), `because it is defined in ${formatPath(at(nestedPath, 'items'))}`),
      );
    else checkCompleteness(target, nested.items, at(structuralPath, 'items'), at(nestedPath, 'items'), out);
  }
  for (const junctor of [
    ...(nested.allOf ?? []),
    ...(nested.anyOf ?? []),
    ...(nested.oneOf ?? []),
    ...(nested.not ? [nested.not] : []),
  ]) {
    checkCompleteness(structural, junctor, structuralPath, nestedPath, out);
  }
}

function at(path: FieldPath, field: string): FieldPath {
  return [...path, { field }];
}
