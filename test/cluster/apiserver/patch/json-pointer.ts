// JSON Pointer, RFC 6901: "" is the whole document, otherwise "/"-separated tokens with ~1 for "/" and ~0 for "~".
import { unprocessable } from './errors.js';

/** Splits a pointer into its decoded reference tokens; throws a 422 PatchError for a malformed pointer. */
export function parseJsonPointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) {
    throw unprocessable(`invalid JSON pointer "${pointer}": it must be empty or start with "/"`);
  }
  return pointer
    .slice(1)
    .split('/')
    .map((token) => {
      if (/~(?![01])/.test(token)) {
        throw unprocessable(`invalid JSON pointer "${pointer}": "~" must be followed by "0" or "1"`);
      }
      return token.replaceAll('~1', '/').replaceAll('~0', '~');
    });
}

/** The array index a token names (RFC 6901 §4: digits without leading zeros), or undefined if it names none. */
export function arrayIndexOf(token: string): number | undefined {
  if (!/^(0|[1-9][0-9]*)$/.test(token)) return undefined;
  const index = Number(token);
  return Number.isSafeInteger(index) ? index : undefined;
}
