// emulator: the subject under test (unit tests of the emulator's PATCH semantics, test/cluster/apiserver/patch)
// Helpers for the patch tests: frozen inputs (a mutation throws in strict mode) and JSON generators for fast-check.
import fc from 'fast-check';
import type { JsonObject, JsonValue } from '../../cluster/apiserver/patch/index.js';

export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}

/** An object built with own members only (so `__proto__` becomes a member, not the prototype). */
export function objectOf(entries: readonly (readonly [string, JsonValue])[]): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of entries) {
    Object.defineProperty(out, key, { value, writable: true, enumerable: true, configurable: true });
  }
  return out;
}

/** A few keys, so that generated objects overlap; `__proto__` and escapes for pointers included on purpose. */
export const keyArb = fc.constantFrom('a', 'b', 'c', 'd', 'e/f', 'g~h', '__proto__');

export const primitiveArb: fc.Arbitrary<JsonValue> = fc.oneof(
  fc.string({ maxLength: 4 }),
  fc.integer({ min: -1000, max: 1000 }),
  fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }).map((n) => (Object.is(n, -0) ? 0 : n)),
  fc.boolean(),
);

interface JsonArbOptions {
  /** null allowed as an object member (RFC 7386 reads it as "delete") */
  nullMembers: boolean;
  /** arrays allowed */
  arrays: boolean;
}

/** JSON values; objects use keyArb keys and are built with own members. */
export function jsonArb(options: JsonArbOptions): fc.Arbitrary<JsonValue> {
  const { tree } = fc.letrec<{ tree: JsonValue; object: JsonValue; array: JsonValue; member: JsonValue }>((tie) => ({
    tree: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      primitiveArb,
      tie('object'),
      ...(options.arrays ? [tie('array')] : []),
    ),
    member: options.nullMembers ? fc.oneof(fc.constant(null), tie('tree')) : tie('tree'),
    object: fc.array(fc.tuple(keyArb, tie('member')), { maxLength: 4 }).map((entries) => objectOf(entries)),
    array: fc.array(fc.oneof(tie('tree'), fc.constant(null)), { maxLength: 3 }),
  }));
  return tree;
}

export function objectArb(options: JsonArbOptions): fc.Arbitrary<JsonObject> {
  return fc
    .array(fc.tuple(keyArb, options.nullMembers ? fc.oneof(fc.constant(null), jsonArb(options)) : jsonArb(options)), {
      maxLength: 5,
    })
    .map((entries) => objectOf(entries));
}
