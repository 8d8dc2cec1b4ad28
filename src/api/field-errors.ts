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

export interface FieldError {
  /** Kube-style path: `spec.images[nginx].tags[0].tag` (map keys in brackets, list indexes in brackets). */
  field: string;
  type: FieldErrorType;
  /**
   * Human text. Validation of apps.kruise.io objects puts OpenKruise's own message here (e.g.
   * `image can not be empty`); the schema module puts what kube-apiserver prints after `field: `
   * (e.g. `Required value`, `Invalid value: "x": spec.a in body must be of type integer: "string"`).
   */
  message: string;
  /** The bare detail without the `Type: value:` prefix, where the message carries one. */
  detail?: string;
}

/** `field: message`, the way kube prints one error. */
export function formatFieldError(error: FieldError): string {
  return `${error.field}: ${error.message}`;
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
