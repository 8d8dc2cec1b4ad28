// The 422 Status kube-apiserver answers when an object fails validation (apimachinery's NewInvalid):
// message `<Kind>[.<group>] "<name>" is invalid: <errors>` where one error is printed alone and several
// as `[a, b]` (duplicates dropped), and one cause per error.

import { formatFieldErrors, type FieldError } from '../../../../src/api/field-errors.js';

export interface StatusCause {
  reason: string;
  message: string;
  field: string;
}

export interface InvalidStatus {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure';
  message: string;
  reason: 'Invalid';
  details: { name: string; group?: string; kind: string; causes: StatusCause[] };
  code: 422;
}

/**
 * Status body for a rejected object. `kind` is the Kind (kubectl prints `details.kind` verbatim, so
 * not the resource); `group` is the API group, '' (default) for core kinds.
 */
export function formatInvalidStatus(
  kind: string,
  name: string,
  errors: readonly FieldError[],
  group = '',
): InvalidStatus {
  const qualifiedKind = group === '' ? kind : `${kind}.${group}`;
  const message =
    errors.length === 0
      ? `${qualifiedKind} ${JSON.stringify(name)} is invalid`
      : `${qualifiedKind} ${JSON.stringify(name)} is invalid: ${formatFieldErrors(errors)}`;
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason: 'Invalid',
    details: {
      name,
      ...(group !== '' && { group }),
      kind,
      causes: errors.map((e) => ({ reason: e.type, message: e.message, field: e.field })),
    },
    code: 422,
  };
}
