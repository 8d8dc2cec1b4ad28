// Typed CRI errors. Every failed call becomes a CriError whose `kind` says what went wrong in terms a caller
// acts on (retry later, give up, fix the credentials...), and whose message keeps the runtime's own words.
// Pull failures are classified from the runtime's message, because runtimes report registry errors with
// code UNKNOWN: containerd says "... 401 Unauthorized" / "...: not found", CRI-O "manifest unknown".
import { status as GrpcStatus } from '@grpc/grpc-js';
import { registryOf } from '../api/image-reference.js';
import { errorMessage } from '../util/error-message.js';

export type CriErrorKind =
  | 'NotFound'
  | 'Unavailable'
  | 'DeadlineExceeded'
  | 'AuthenticationFailed'
  | 'ImageNotFound'
  | 'RegistryUnreachable'
  | 'InvalidArgument'
  | 'Unimplemented'
  | 'Cancelled'
  | 'AlreadyExists'
  | 'FailedPrecondition'
  | 'ResourceExhausted'
  | 'PermissionDenied'
  | 'Internal'
  | 'Unknown';

/** What a failed call was doing, for the error message. */
export interface CriErrorContext {
  method: string;
  /** Socket path of the runtime. */
  socket?: string;
  /** Image of PullImage / ImageStatus / RemoveImage. */
  image?: string;
  /** Whether PullImage carried credentials. */
  withCredentials?: boolean;
  /** The deadline the call had, in ms. */
  deadlineMs?: number;
}

export class CriError extends Error {
  override readonly name: string = 'CriError';
  readonly kind: CriErrorKind;
  /** gRPC status code (grpc-js `status`), UNKNOWN when the failure was not a gRPC status. */
  readonly grpcCode: number;
  readonly method: string;
  /** The runtime's (or transport's) own message, verbatim. */
  readonly runtimeMessage: string;

  constructor(kind: CriErrorKind, grpcCode: number, method: string, summary: string, runtimeMessage: string) {
    super(
      runtimeMessage && runtimeMessage !== summary
        ? `CRI ${method}: ${summary}: ${runtimeMessage}`
        : `CRI ${method}: ${summary}`,
    );
    this.kind = kind;
    this.grpcCode = grpcCode;
    this.method = method;
    this.runtimeMessage = runtimeMessage;
  }
}

export class CriNotFoundError extends CriError {
  override readonly name = 'CriNotFoundError';
}
export class CriUnavailableError extends CriError {
  override readonly name = 'CriUnavailableError';
}
export class CriDeadlineExceededError extends CriError {
  override readonly name = 'CriDeadlineExceededError';
}
export class CriInvalidArgumentError extends CriError {
  override readonly name = 'CriInvalidArgumentError';
}
export class CriUnimplementedError extends CriError {
  override readonly name = 'CriUnimplementedError';
}

/** A pull that failed at the registry: `registry` is the host part of `image`. */
class CriRegistryError extends CriError {
  constructor(
    kind: CriErrorKind,
    grpcCode: number,
    method: string,
    readonly image: string,
    readonly registry: string,
    summary: string,
    runtimeMessage: string,
  ) {
    super(kind, grpcCode, method, summary, runtimeMessage);
  }
}

/** The registry refused the pull: no or wrong credentials (401/403). */
export class CriAuthenticationFailedError extends CriRegistryError {
  override readonly name = 'CriAuthenticationFailedError';
}
/** The registry has no such repository, tag or digest. */
export class CriImageNotFoundError extends CriRegistryError {
  override readonly name = 'CriImageNotFoundError';
}
/** The runtime could not reach the registry (connection refused, DNS, TLS). */
export class CriRegistryUnreachableError extends CriRegistryError {
  override readonly name = 'CriRegistryUnreachableError';
}

const AUTH_FAILURE =
  /\b40[13]\b|unauthori[sz]ed|forbidden|authentication required|authorization failed|access denied|denied: requested access|insufficient_scope/i;
const IMAGE_MISSING = /manifest unknown|name unknown|repository (?:does not exist|not found)|\bnot found\b/i;
const REGISTRY_UNREACHABLE =
  /dial tcp|connection refused|no such host|i\/o timeout|network is unreachable|connection reset|tls: |x509: |server gave HTTP response to HTTPS client/i;
const BAD_REFERENCE = /invalid reference format|failed to parse image reference/i;

interface StatusLike {
  code: number;
  details?: string;
  message?: string;
}

function isStatusLike(err: unknown): err is StatusLike {
  return typeof err === 'object' && err !== null && typeof (err as { code?: unknown }).code === 'number';
}

/** The name of a gRPC status code ("UNAVAILABLE"), for metrics and messages. */
export function grpcCodeName(code: number): string {
  // A numeric enum maps each value back to its name; a code grpc-js does not know has none.
  const name: string | undefined = GrpcStatus[code];
  return typeof name === 'string' ? name : `CODE_${code}`;
}

/** Turn whatever a CRI call failed with into a CriError (a CriError passes through unchanged). */
export function toCriError(err: unknown, ctx: CriErrorContext): CriError {
  if (err instanceof CriError) return err;
  if (!isStatusLike(err)) {
    const text = errorMessage(err);
    return new CriError('Unknown', GrpcStatus.UNKNOWN, ctx.method, 'call failed', text);
  }
  const code: GrpcStatus = err.code;
  const details = (err.details ?? err.message ?? '').trim();
  const method = ctx.method;

  if (method === 'PullImage' && ctx.image !== undefined && !isTransportCode(code)) {
    const image = ctx.image;
    const registry = registryOf(image);
    if (BAD_REFERENCE.test(details)) {
      return new CriInvalidArgumentError('InvalidArgument', code, method, `invalid image reference ${image}`, details);
    }
    if (AUTH_FAILURE.test(details) || code === GrpcStatus.UNAUTHENTICATED) {
      const how = ctx.withCredentials ? 'rejected the given credentials' : 'requires credentials and none were given';
      const summary = `registry ${registry} ${how} for ${image}`;
      return new CriAuthenticationFailedError('AuthenticationFailed', code, method, image, registry, summary, details);
    }
    if (code === GrpcStatus.NOT_FOUND || IMAGE_MISSING.test(details)) {
      const summary = `image ${image} not found in registry ${registry}`;
      return new CriImageNotFoundError('ImageNotFound', code, method, image, registry, summary, details);
    }
    if (REGISTRY_UNREACHABLE.test(details)) {
      const summary = `registry ${registry} unreachable for ${image}`;
      return new CriRegistryUnreachableError('RegistryUnreachable', code, method, image, registry, summary, details);
    }
  }

  switch (code) {
    case GrpcStatus.NOT_FOUND:
      return new CriNotFoundError('NotFound', code, method, 'not found', details);
    case GrpcStatus.UNAVAILABLE:
      return new CriUnavailableError(
        'Unavailable',
        code,
        method,
        ctx.socket ? `runtime at ${ctx.socket} unavailable` : 'runtime unavailable',
        details,
      );
    case GrpcStatus.DEADLINE_EXCEEDED:
      return new CriDeadlineExceededError(
        'DeadlineExceeded',
        code,
        method,
        ctx.deadlineMs !== undefined ? `no answer within the deadline of ${ctx.deadlineMs} ms` : 'deadline exceeded',
        details,
      );
    case GrpcStatus.INVALID_ARGUMENT:
      return new CriInvalidArgumentError('InvalidArgument', code, method, 'invalid argument', details);
    case GrpcStatus.UNIMPLEMENTED:
      return new CriUnimplementedError('Unimplemented', code, method, 'not implemented by the runtime', details);
    case GrpcStatus.CANCELLED:
      return new CriError('Cancelled', code, method, 'cancelled', details);
    case GrpcStatus.ALREADY_EXISTS:
      return new CriError('AlreadyExists', code, method, 'already exists', details);
    case GrpcStatus.FAILED_PRECONDITION:
      return new CriError('FailedPrecondition', code, method, 'failed precondition', details);
    case GrpcStatus.RESOURCE_EXHAUSTED:
      return new CriError('ResourceExhausted', code, method, 'resource exhausted', details);
    case GrpcStatus.PERMISSION_DENIED:
    case GrpcStatus.UNAUTHENTICATED:
      return new CriError('PermissionDenied', code, method, 'permission denied', details);
    case GrpcStatus.INTERNAL:
    case GrpcStatus.DATA_LOSS:
      return new CriError('Internal', code, method, 'runtime internal error', details);
    default:
      return new CriError('Unknown', code, method, `runtime error (${grpcCodeName(code)})`, details);
  }
}

/** Codes that come from the transport (or our deadline), not from the runtime judging the request. */
function isTransportCode(code: GrpcStatus): boolean {
  return code === GrpcStatus.UNAVAILABLE || code === GrpcStatus.DEADLINE_EXCEEDED || code === GrpcStatus.CANCELLED;
}

/** Whether `err` is a CriError of the given kind. */
export function isCriError(err: unknown, kind?: CriErrorKind): err is CriError {
  return err instanceof CriError && (kind === undefined || err.kind === kind);
}
