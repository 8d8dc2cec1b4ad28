// Small shape checks shared by the validation functions, which take raw (unknown) input so that a
// malformed object yields field errors instead of a crash.

import type { FieldError, FieldErrorType } from './field-errors.js';

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** JSON type name of a value, as schema messages use it. */
export function jsonTypeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

export function fieldError(type: FieldErrorType, field: string, message: string): FieldError {
  return { field, type, message };
}

/** An error when `value` is present but not of the expected JSON type; absent (undefined/null) is fine. */
export function typeError(
  field: string,
  value: unknown,
  expected: 'object' | 'array' | 'string' | 'integer' | 'boolean',
): FieldError | undefined {
  if (value === undefined || value === null) return undefined;
  const actual = jsonTypeName(value);
  if (actual === expected) return undefined;
  return fieldError('FieldValueTypeInvalid', field, `must be of type ${expected}, got ${actual}`);
}

/** A present value that is an integer, else undefined (type errors are reported separately). */
export function optionalInteger(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) ? value : undefined;
}
