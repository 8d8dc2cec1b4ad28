// Small shape checks shared by the validation functions, which take raw (unknown) input so that a
// malformed object yields field errors instead of a crash. Errors about a value carry the value given.

import type { FieldError, FieldErrorType } from './field-errors.js';

export type JsonObject = Record<string, unknown>;

/** JSON type name of a value, as schema messages use it. */
export function jsonTypeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** A field error; pass `given` when the message does not show the value that broke the rule. */
export function fieldError(type: FieldErrorType, field: string, message: string, given?: unknown): FieldError {
  return given === undefined ? { field, type, message } : { field, type, message, value: given };
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
  return fieldError('FieldValueTypeInvalid', field, `must be of type ${expected}, got ${actual}`, value);
}

/** An error when `value` is an integer below `minimum` (0: non-negative, 1: positive); other values pass. */
export function belowMinimumError(field: string, value: unknown, minimum: 0 | 1): FieldError | undefined {
  const integer = optionalInteger(value);
  if (integer === undefined || integer >= minimum) return undefined;
  const rule = minimum === 1 ? 'must be greater than 0' : 'must be greater than or equal to 0';
  return fieldError('FieldValueInvalid', field, rule, value);
}

/** An error when a present, non-empty string is not one of `supported`, in kube's words for it. */
export function notSupportedError(field: string, value: unknown, supported: readonly string[]): FieldError | undefined {
  if (typeof value !== 'string' || value === '' || supported.includes(value)) return undefined;
  const list = supported.map((s) => JSON.stringify(s)).join(', ');
  return fieldError('FieldValueNotSupported', field, `supported values: ${list}`, value);
}

/** A present value that is an integer, else undefined (type errors are reported separately). */
export function optionalInteger(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) ? value : undefined;
}
