// Field errors as kube-apiserver reports them (k8s.io/apimachinery field.Error): a path, a type and a message body.
// The Status `causes` of a 422 Invalid are built from these.

export type FieldErrorType =
  | 'FieldValueNotFound'
  | 'FieldValueRequired'
  | 'FieldValueDuplicate'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'FieldValueTypeInvalid'
  | 'InternalError';

export interface FieldError {
  /** Path of the field, e.g. `spec.containers[0].image` or `data[bad key]`. */
  field: string;
  type: FieldErrorType;
  /** The error body without the field, e.g. `Invalid value: "x": must be lower case`. */
  message: string;
  detail?: string | undefined;
}

/** How a value is shown inside an error body (strings quoted, like Go's %q for strings). */
export function describeValue(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  // strings, objects and arrays as JSON; undefined (and anything else JSON has no text for) as null
  return JSON.stringify(value) ?? 'null';
}

function make(field: string, type: FieldErrorType, head: string, detail?: string): FieldError {
  return { field, type, message: detail ? `${head}: ${detail}` : head, detail };
}

export const fieldError = {
  required: (field: string, detail?: string): FieldError => make(field, 'FieldValueRequired', 'Required value', detail),
  invalid: (field: string, value: unknown, detail: string): FieldError =>
    make(field, 'FieldValueInvalid', `Invalid value: ${describeValue(value)}`, detail),
  notSupported: (field: string, value: unknown, valid: string[]): FieldError =>
    make(
      field,
      'FieldValueNotSupported',
      `Unsupported value: ${describeValue(value)}`,
      valid.length ? `supported values: ${valid.map((v) => JSON.stringify(v)).join(', ')}` : undefined,
    ),
  forbidden: (field: string, detail: string): FieldError => make(field, 'FieldValueForbidden', 'Forbidden', detail),
  duplicate: (field: string, value: unknown): FieldError =>
    make(field, 'FieldValueDuplicate', `Duplicate value: ${describeValue(value)}`),
  tooLong: (field: string, max: number): FieldError =>
    make(field, 'FieldValueTooLong', 'Too long', `may not be more than ${max} bytes`),
  typeInvalid: (field: string, value: unknown, detail: string): FieldError =>
    make(field, 'FieldValueTypeInvalid', `Invalid value: ${describeValue(value)}`, detail),
};

/** `a.b` + `c` → `a.b.c`; index and key helpers follow kube's path notation. */
export const fieldPath = {
  child: (parent: string, name: string): string => (parent ? `${parent}.${name}` : name),
  index: (parent: string, i: number): string => `${parent}[${i}]`,
  key: (parent: string, key: string): string => `${parent}[${key}]`,
};
