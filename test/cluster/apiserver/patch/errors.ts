// The one error type of the patch module. `code` and `reason` are what the API emulator puts in the Status it answers.

export type PatchErrorCode = 400 | 415 | 422;

const REASONS: Record<PatchErrorCode, string> = {
  400: 'BadRequest',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
};

/**
 * A patch that cannot be applied.
 * - 400: the body cannot be read as the declared patch type (bad JSON/YAML, wrong shape, malformed directive);
 * - 415: the content type is not a patch type the resource accepts;
 * - 422: the patch is well formed but does not apply to this object (missing path, failed test, missing merge key).
 * Messages follow kube-apiserver's wording where it has one. Send them without `details`: kubectl then prints
 * `The request is invalid: <message>` for a 422.
 */
export class PatchError extends Error {
  readonly code: PatchErrorCode;

  constructor(code: PatchErrorCode, message: string) {
    super(message);
    this.name = 'PatchError';
    this.code = code;
  }

  /** The Status `reason` kube-apiserver uses for this code. */
  get reason(): string {
    return REASONS[this.code];
  }
}

export const badRequest = (message: string): PatchError => new PatchError(400, message);
export const unprocessable = (message: string): PatchError => new PatchError(422, message);
