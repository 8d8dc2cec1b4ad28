// Field errors worded the way kube-apiserver words them (apimachinery's field.Error.ErrorBody), with
// bad values printed the way Go's fmt prints them (%v for numbers and booleans, %q for strings, %#v for
// lists and maps: `[]interface {}{"a", 1}`, `map[string]interface {}{"k":"v"}`).

import { FIELD_ERROR_TYPE_TEXT, type FieldError, type FieldErrorType } from '../../../../src/api/field-errors.js';
import { formatPath, isJsonObject, type FieldPath } from './types.js';

/** A field error that still knows its path as segments (needed for ratcheting). */
export interface SchemaError extends FieldError {
  path: FieldPath;
}

/** Marks "print no value" (kube's omitValue). */
export const OMIT_VALUE: unique symbol = Symbol('omit value');

/** ErrorBody: `<Type text>[: <value>][: <detail>]`. */
export function errorBody(type: FieldErrorType, value: unknown, detail: string): string {
  let body = FIELD_ERROR_TYPE_TEXT[type];
  const valueless =
    type === 'FieldValueRequired' ||
    type === 'FieldValueForbidden' ||
    type === 'FieldValueTooLong' ||
    type === 'InternalError' ||
    value === OMIT_VALUE;
  if (!valueless) body += `: ${goValue(value)}`;
  if (detail !== '') body += `: ${detail}`;
  return body;
}

export function schemaError(type: FieldErrorType, path: FieldPath, value: unknown, detail: string): SchemaError {
  const message = errorBody(type, value, detail);
  return { field: formatPath(path), type, message, ...(detail !== '' && { detail }), path };
}

export const required = (path: FieldPath, detail = ''): SchemaError =>
  schemaError('FieldValueRequired', path, '', detail);
export const invalid = (path: FieldPath, value: unknown, detail: string): SchemaError =>
  schemaError('FieldValueInvalid', path, value, detail);
export const typeInvalid = (path: FieldPath, value: unknown, detail: string): SchemaError =>
  schemaError('FieldValueTypeInvalid', path, value, detail);
export const forbidden = (path: FieldPath, detail: string): SchemaError =>
  schemaError('FieldValueForbidden', path, '', detail);
export const duplicate = (path: FieldPath, value: unknown): SchemaError =>
  schemaError('FieldValueDuplicate', path, value, '');

export function notSupported(path: FieldPath, value: unknown, supported: readonly unknown[]): SchemaError {
  const quoted = supported.map((v) => JSON.stringify(typeof v === 'string' ? v : JSON.stringify(v)));
  return schemaError(
    'FieldValueNotSupported',
    path,
    value,
    quoted.length ? `supported values: ${quoted.join(', ')}` : '',
  );
}

export function tooLong(path: FieldPath, value: unknown, maxLength: number): SchemaError {
  return schemaError('FieldValueTooLong', path, value, `may not be longer than ${maxLength}`);
}

export function tooMany(path: FieldPath, actual: number, max: number): SchemaError {
  return schemaError('FieldValueTooMany', path, actual, `must have at most ${max} items`);
}

/** Strip the internal path, leaving the public FieldError. */
export function publicError(error: SchemaError): FieldError {
  const { field, type, message, detail } = error;
  return { field, type, message, ...(detail !== undefined && { detail }) };
}

/** Go's fmt for a bad value in ErrorBody. */
export function goValue(value: unknown): string {
  if (value === null || value === undefined) return '"null"';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') return goNumber(value);
  if (typeof value === 'boolean') return String(value);
  return goSyntax(value);
}

/** Go's %#v of a decoded JSON value. */
function goSyntax(value: unknown): string {
  if (value === null || value === undefined) return 'interface {}(nil)';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') return goNumber(value);
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[]interface {}{${value.map(goSyntax).join(', ')}}`;
  if (isJsonObject(value)) {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${goSyntax(value[k])}`);
    return `map[string]interface {}{${entries.join(', ')}}`;
  }
  // nothing else comes out of JSON
  return typeof value === 'bigint' ? value.toString() : typeof value;
}

/** Go's %v of an int64 or float64: integers as digits, floats in shortest form with e-notation outside [1e-4, 1e21). */
function goNumber(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return String(n);
  const abs = Math.abs(n);
  if (abs !== 0 && (abs < 1e-4 || abs >= 1e21)) {
    return n.toExponential().replace(/e([+-])(\d)$/, 'e$10$2');
  }
  return String(n);
}
