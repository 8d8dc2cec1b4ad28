// Failures answered by the API server, as a typed error carrying the Kubernetes Status.
import { isRecord } from '../util/is-record.js';

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

/** metav1.Status as sent by the API server for failures. */
export interface Status {
  kind?: 'Status';
  apiVersion?: string;
  status?: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code?: number;
}

/** Reasons the API server uses (metav1.StatusReason), for the helpers below. */
export const StatusReason = {
  NotFound: 'NotFound',
  AlreadyExists: 'AlreadyExists',
  Conflict: 'Conflict',
  Gone: 'Gone',
  Expired: 'Expired',
  Invalid: 'Invalid',
  Forbidden: 'Forbidden',
  Unauthorized: 'Unauthorized',
  TooManyRequests: 'TooManyRequests',
  Timeout: 'Timeout',
  ServerTimeout: 'ServerTimeout',
} as const;

export class ApiError extends Error {
  override readonly name = 'ApiError';
  /** HTTP status code (also Status.code). */
  readonly code: number;
  readonly reason: string;
  readonly details?: StatusDetails | undefined;
  readonly status: Status;
  readonly verb: string;
  readonly path: string;

  constructor(status: Status, verb: string, path: string) {
    const code = status.code ?? 0;
    const reason = status.reason ?? reasonForCode(code);
    super(`${verb} ${path}: ${code} ${reason}: ${status.message ?? '(no message)'}`);
    this.code = code;
    this.reason = reason;
    this.details = status.details;
    this.status = status;
    this.verb = verb;
    this.path = path;
  }

  /** Build from an HTTP answer: a Status body when the server sent one, else a Status made from the code and text. */
  static fromResponse(code: number, body: string, verb: string, path: string): ApiError {
    let status: Status | undefined;
    try {
      const parsed: unknown = JSON.parse(body);
      if (isRecord(parsed) && parsed.kind === 'Status') status = parsed;
    } catch {
      // not JSON: fall through
    }
    if (!status) {
      const text = body.trim().slice(0, 500);
      status = {
        kind: 'Status',
        status: 'Failure',
        code,
        reason: reasonForCode(code),
        message: text || `HTTP ${code}`,
      };
    }
    return new ApiError({ ...status, code: status.code ?? code }, verb, path);
  }
}

function reasonForCode(code: number): string {
  switch (code) {
    case 400:
      return 'BadRequest';
    case 401:
      return StatusReason.Unauthorized;
    case 403:
      return StatusReason.Forbidden;
    case 404:
      return StatusReason.NotFound;
    case 405:
      return 'MethodNotAllowed';
    case 409:
      return StatusReason.Conflict;
    case 410:
      return StatusReason.Gone;
    case 415:
      return 'UnsupportedMediaType';
    case 422:
      return StatusReason.Invalid;
    case 429:
      return StatusReason.TooManyRequests;
    case 500:
      return 'InternalError';
    case 503:
      return 'ServiceUnavailable';
    case 504:
      return StatusReason.Timeout;
    default:
      return 'Unknown';
  }
}

function asApiError(err: unknown): ApiError | undefined {
  return err instanceof ApiError ? err : undefined;
}

export function isNotFound(err: unknown): boolean {
  return asApiError(err)?.code === 404;
}

/** For `.catch(ignoreNotFound)` on a delete or read: a 404 means the object is already gone; anything else throws. */
export function ignoreNotFound(err: unknown): void {
  if (!isNotFound(err)) throw err;
}

/** 409 with any reason other than AlreadyExists (an update or patch lost a resourceVersion race). */
export function isConflict(err: unknown): boolean {
  const e = asApiError(err);
  return e?.code === 409 && e.reason !== StatusReason.AlreadyExists;
}

export function isAlreadyExists(err: unknown): boolean {
  const e = asApiError(err);
  return e?.code === 409 && e.reason === StatusReason.AlreadyExists;
}

/** 410 Gone / Expired: the resourceVersion (or continue token) is too old; the caller must list afresh. */
export function isGone(err: unknown): boolean {
  const e = asApiError(err);
  return e?.code === 410 || e?.reason === StatusReason.Expired || e?.reason === StatusReason.Gone;
}

export function isInvalid(err: unknown): boolean {
  return asApiError(err)?.code === 422;
}

export function isForbidden(err: unknown): boolean {
  return asApiError(err)?.code === 403;
}
