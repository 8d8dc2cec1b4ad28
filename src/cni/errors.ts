// CNI errors: every failure of the plugin leaves as `{cniVersion, code, msg, details}` on stdout with exit status 1.
// Codes 1-99 are the spec's (SPEC.md "Error": 4 is an invalid environment variable, 7 an invalid network
// configuration); 100 and up are ours.
import { getSystemErrorMap } from 'node:util';

export const CniCode = {
  incompatibleVersion: 1,
  unsupportedField: 2,
  unknownContainer: 3,
  /** CNI_COMMAND, CNI_CONTAINERID, CNI_IFNAME, CNI_NETNS, CNI_ARGS. */
  invalidEnv: 4,
  ioFailure: 5,
  decodeFailure: 6,
  /** The network configuration on stdin. */
  invalidConfig: 7,
  tryAgainLater: 11,
  /** STATUS: the plugin cannot serve ADD now (spec 1.1). */
  notAvailable: 50,
  /** No free address left in a range set. */
  rangeFull: 100,
  /** The store holds something we cannot read. */
  corruptStore: 101,
  /** Anything else: a bug (libcni's skel reports a plain Go error as 999 too). */
  internal: 999,
} as const;

export class CniError extends Error {
  override readonly name = 'CniError';
  constructor(
    readonly code: number,
    message: string,
    readonly details = '',
  ) {
    super(message);
  }
}

export interface CniErrorBody {
  cniVersion: string;
  code: number;
  msg: string;
  details?: string;
}

const SHOWN_CHARS = 64;

/** A value for a message: JSON-quoted, and cut when long (a 5,000-character name must not become the message). */
export function quote(value: unknown): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  if (text.length <= SHOWN_CHARS) return typeof value === 'string' ? JSON.stringify(value) : text;
  return `${JSON.stringify(text.slice(0, SHOWN_CHARS))}... (${text.length} characters)`;
}

/** A failed file-system call as Node reports it (`dest`: the second path of rename and link). */
export type ErrnoError = NodeJS.ErrnoException & { code: string; errno: number; dest?: string };

export function isErrno(err: unknown): err is ErrnoError {
  const e = err as NodeJS.ErrnoException;
  return err instanceof Error && typeof e.code === 'string' && typeof e.errno === 'number';
}

/** Run a file-system step; an error that carries no path (read, write, fsync on a descriptor) gets `path`. */
export function onPath<T>(path: string, step: () => T): T {
  try {
    return step();
  } catch (err) {
    if (isErrno(err) && err.path === undefined) err.path = path;
    throw err;
  }
}

/** `mkdir /a/b: not a directory (ENOTDIR)`: the call, the path and the reason, on one line. */
export function describeErrno(err: ErrnoError): string {
  const where = [err.syscall, err.path, err.dest === undefined ? undefined : `-> ${err.dest}`].filter(Boolean);
  // getSystemErrorMap, not getSystemErrorMessage (Node 22.12+): tools run this on the host's older Node too
  const reason = getSystemErrorMap().get(err.errno)?.[1] ?? 'failed';
  return `${where.join(' ')}: ${reason} (${err.code})`;
}

/** A file-system failure under the store, as code 5 naming the configuration field the store comes from. */
export function storeFailure(err: unknown, field: string, dir: string): unknown {
  return isErrno(err) ? new CniError(CniCode.ioFailure, `${field} ${quote(dir)}: ${describeErrno(err)}`) : err;
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? text;
}

/** The error as the runtime reads it; a file-system error is 5 and anything else unexpected 999, on one line. */
export function errorBody(err: unknown, cniVersion: string): CniErrorBody {
  if (err instanceof CniError) {
    return { cniVersion, code: err.code, msg: err.message, ...(err.details ? { details: err.details } : {}) };
  }
  if (isErrno(err)) return { cniVersion, code: CniCode.ioFailure, msg: describeErrno(err) };
  const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return { cniVersion, code: CniCode.internal, msg: firstLine(message) };
}
