// Field errors as Kubernetes reports them: a machine-readable type, the path of the field, and a message.
// Used by the apps.kruise.io validation functions (admission webhooks, agent status) and by the API
// emulator's schema module, so a client sees the same shape whichever of them rejected its input.

/** Kubernetes' `field.ErrorType` values (they are also the `reason` of a 422 Status cause). */
export type FieldErrorType =
  | 'FieldValueRequired'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueTypeInvalid'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'FieldValueDuplicate'
  | 'FieldValueForbidden'
  | 'FieldValueNotFound'
  | 'InternalError';

/** What kube prints for each type before the value given (apimachinery's `ErrorType.String()`). */
export const FIELD_ERROR_TYPE_TEXT: Record<FieldErrorType, string> = {
  FieldValueRequired: 'Required value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueTypeInvalid: 'Invalid value',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueForbidden: 'Forbidden',
  FieldValueNotFound: 'Not found',
  InternalError: 'Internal error',
};

export interface FieldError {
  /** Kube-style path: `spec.images[nginx].tags[0].tag` (map keys in brackets, list indexes in brackets). */
  field: string;
  type: FieldErrorType;
  /**
   * Human text. Validation of apps.kruise.io objects puts the rule here, in OpenKruise's words where it has
   * some (e.g. `image can not be empty`), with what is allowed; the schema module puts what kube-apiserver
   * prints after `field: ` (e.g. `Required value`, `Invalid value: "x": spec.a in body must be of type integer: "string"`).
   */
  message: string;
  /** The bare detail without the `Type: value:` prefix, where the message carries one. */
  detail?: string;
  /**
   * The value given, where the message does not already show it: printed between the field and the message
   * as kube prints a bad value (`spec.a: Invalid value: -1: must be greater than 0`).
   */
  value?: unknown;
}

/** Longest value printed in an error; longer ones are cut with `…`. */
const MAX_VALUE_TEXT = 60;

/** A value given, as JSON (strings quoted, objects compact), cut to a readable length. */
function valueText(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > MAX_VALUE_TEXT ? `${text.slice(0, MAX_VALUE_TEXT - 1)}…` : text;
}

/** `field: message`, or `field: <Type>: <value given>: message` when the error carries the value, as kube prints one. */
export function formatFieldError(error: FieldError): string {
  if (error.value === undefined) return `${error.field}: ${error.message}`;
  return `${error.field}: ${FIELD_ERROR_TYPE_TEXT[error.type]}: ${valueText(error.value)}: ${error.message}`;
}

/** All errors in one line: the message alone for one error, `[a, b]` for several (kube's aggregate form). */
export function formatFieldErrors(errors: readonly FieldError[]): string {
  const unique = [...new Set(errors.map(formatFieldError))];
  if (unique.length === 1) return unique[0] ?? '';
  return `[${unique.join(', ')}]`;
}

/** Path of a named child field: `spec` + `image` → `spec.image`. */
export function childPath(parent: string, name: string): string {
  return parent === '' ? name : `${parent}.${name}`;
}

/** Path of a list element: `spec.tags` + 0 → `spec.tags[0]`. */
export function indexPath(parent: string, index: number): string {
  return `${parent}[${index}]`;
}

/** Path of a map entry: `spec.images` + `nginx` → `spec.images[nginx]`. */
export function keyPath(parent: string, key: string): string {
  return `${parent}[${key}]`;
}
