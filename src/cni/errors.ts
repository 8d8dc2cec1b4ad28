// CNI errors: every failure of the plugin leaves as `{cniVersion, code, msg, details}` on stdout with exit status 1.
// Codes 1-99 are the spec's (SPEC.md "Error" section); 100 and up are ours.

export const CniCode = {
  incompatibleVersion: 1,
  unsupportedField: 2,
  unknownContainer: 3,
  invalidConfig: 4,
  ioFailure: 5,
  decodeFailure: 6,
  invalidEnv: 7,
  tryAgainLater: 11,
  /** STATUS: the plugin cannot serve ADD now (spec 1.1). */
  notAvailable: 50,
  /** No free address left in a range set. */
  rangeFull: 100,
  /** The store holds something we cannot read. */
  corruptStore: 101,
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

/** The error as the runtime reads it; anything that is not a CniError is an I/O failure (5) with its message. */
export function errorBody(err: unknown, cniVersion: string): CniErrorBody {
  if (err instanceof CniError) {
    return { cniVersion, code: err.code, msg: err.message, ...(err.details ? { details: err.details } : {}) };
  }
  const message = err instanceof Error ? err.message : String(err);
  return { cniVersion, code: CniCode.ioFailure, msg: message.split('\n')[0] ?? message };
}
