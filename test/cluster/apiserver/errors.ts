// Every failure the emulator returns is a Kubernetes Status object with kube-apiserver's code, reason and message.
import type { FieldError } from './field-errors.js';

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string | undefined;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

/** A resource as named in messages: `configmaps` in the core group, `nodeimages.apps.kruise.io` elsewhere. */
export interface QualifiedResource {
  group: string;
  resource: string;
}

export function qualifiedName(qr: QualifiedResource): string {
  return qr.group ? `${qr.resource}.${qr.group}` : qr.resource;
}

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toStatus(): Status {
    const status: Status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      code: this.code,
    };
    if (this.details) status.details = this.details;
    return status;
  }
}

export function successStatus(details?: StatusDetails): Status {
  const status: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 200 };
  if (details) status.details = details;
  return status;
}

export const apiErrors = {
  notFound: (qr: QualifiedResource, name: string): ApiError =>
    new ApiError(404, 'NotFound', `${qualifiedName(qr)} "${name}" not found`, {
      name,
      group: qr.group,
      kind: qr.resource,
    }),
  /** A path the server does not serve at all (no such resource type). */
  noRoute: (): ApiError => new ApiError(404, 'NotFound', 'the server could not find the requested resource', {}),
  alreadyExists: (qr: QualifiedResource, name: string): ApiError =>
    new ApiError(409, 'AlreadyExists', `${qualifiedName(qr)} "${name}" already exists`, {
      name,
      group: qr.group,
      kind: qr.resource,
    }),
  conflict: (qr: QualifiedResource, name: string, why: string): ApiError =>
    new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedName(qr)} "${name}": ${why}`, {
      name,
      group: qr.group,
      kind: qr.resource,
    }),
  staleObject: (qr: QualifiedResource, name: string): ApiError =>
    apiErrors.conflict(
      qr,
      name,
      'the object has been modified; please apply your changes to the latest version and try again',
    ),
  /** 422: `kind` is the Kind (ConfigMap, NodeImage.apps.kruise.io is built from group + kind). */
  invalid: (group: string, kind: string, name: string, errors: FieldError[]): ApiError => {
    const qualifiedKind = group ? `${kind}.${group}` : kind;
    const parts = errors.map((e) => (e.field ? `${e.field}: ${e.message}` : e.message));
    const summary = parts.length === 1 ? parts[0] : `[${parts.join(', ')}]`;
    return new ApiError(422, 'Invalid', `${qualifiedKind} "${name}" is invalid: ${summary}`, {
      name,
      group,
      kind,
      causes: errors.map((e) => ({ reason: e.type, message: e.message, field: e.field })),
    });
  },
  badRequest: (message: string): ApiError => new ApiError(400, 'BadRequest', message),
  forbidden: (qr: QualifiedResource, name: string, why: string): ApiError =>
    new ApiError(403, 'Forbidden', `${qualifiedName(qr)} "${name}" is forbidden: ${why}`, {
      name,
      group: qr.group,
      kind: qr.resource,
    }),
  methodNotAllowed: (): ApiError =>
    new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {}),
  unsupportedMediaType: (accepted: string[]): ApiError =>
    new ApiError(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
      {},
    ),
  notAcceptable: (message: string): ApiError => new ApiError(406, 'NotAcceptable', message, {}),
  tooLarge: (message: string): ApiError => new ApiError(413, 'RequestEntityTooLarge', message, {}),
  /** 410 for a watch whose resourceVersion fell out of the kept window. */
  expired: (message: string): ApiError => new ApiError(410, 'Expired', message),
  gone: (message: string): ApiError => new ApiError(410, 'Gone', message),
  internal: (message: string): ApiError =>
    new ApiError(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] }),
};

/** The Status kube-apiserver uses for a bare HTTP code (fault injection). */
export function statusForCode(code: number, reason?: string, message?: string): ApiError {
  const reasons: Record<number, string> = {
    400: 'BadRequest',
    401: 'Unauthorized',
    403: 'Forbidden',
    404: 'NotFound',
    405: 'MethodNotAllowed',
    409: 'Conflict',
    410: 'Gone',
    422: 'Invalid',
    429: 'TooManyRequests',
    500: 'InternalError',
    503: 'ServiceUnavailable',
    504: 'Timeout',
  };
  const why = reason ?? reasons[code] ?? 'Unknown';
  const details: StatusDetails = code === 429 || code === 503 ? { retryAfterSeconds: 1 } : {};
  return new ApiError(code, why, message ?? `injected failure (${code} ${why})`, details);
}
