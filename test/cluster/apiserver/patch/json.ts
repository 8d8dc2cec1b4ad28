// JSON values as the patch functions see them, and the few operations on them that every patch type needs.
// Objects may carry any own key, `__proto__` included, so members are always written with defineProperty.

export type JsonPrimitive = null | boolean | number | string;
export type JsonValue = JsonPrimitive | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

export function isJsonObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True for primitives (strings, numbers, booleans, null). */
export function isJsonPrimitive(value: JsonValue): value is JsonPrimitive {
  return value === null || typeof value !== 'object';
}

export function hasMember(object: JsonObject, key: string): boolean {
  return Object.hasOwn(object, key);
}

/** The member's value, or undefined when the object has no such own member. */
export function memberOf(object: JsonObject, key: string): JsonValue | undefined {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

/** Writes an own, enumerable member (also for keys such as `__proto__`, which plain assignment would not create). */
export function setMember(object: JsonObject, key: string, value: JsonValue): void {
  Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
}

export function deleteMember(object: JsonObject, key: string): void {
  delete object[key];
}

export function cloneJson<T extends JsonValue>(value: T): T;
export function cloneJson(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map((item) => cloneJson(item));
  if (isJsonObject(value)) {
    const copy: JsonObject = {};
    for (const [key, member] of Object.entries(value)) setMember(copy, key, cloneJson(member));
    return copy;
  }
  return value;
}

/** Structural equality: object member order does not matter, array order does. */
export function jsonEqual(a: JsonValue, b: JsonValue): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => jsonEqual(item, b[i]!));
  }
  if (isJsonObject(a) && isJsonObject(b)) {
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    return keys.every((key) => hasMember(b, key) && jsonEqual(a[key]!, b[key]!));
  }
  return false;
}

/**
 * True when `value` is JSON data: null, booleans, finite numbers, strings, arrays and plain objects of those,
 * without cycles. Everything that comes from JSON.parse or a YAML core-schema load passes.
 */
export function isJsonValue(value: unknown): value is JsonValue {
  return checkJson(value, new Set());
}

function checkJson(value: unknown, path: Set<object>): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object': {
      if (value === null) return true;
      if (path.has(value)) return false;
      const proto: unknown = Object.getPrototypeOf(value);
      const isArray = Array.isArray(value);
      if (!isArray && proto !== Object.prototype && proto !== null) return false;
      path.add(value);
      const members: unknown[] = isArray ? value : Object.values(value);
      const ok = members.every((member) => checkJson(member, path));
      path.delete(value);
      return ok;
    }
    default:
      return false;
  }
}

// Error messages name shapes and member names, never values: a patch may carry secret data.

/** "an object", "a string", ... for error messages. */
export function describeType(value: JsonValue): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return typeof value === 'number' ? 'a number' : typeof value === 'string' ? 'a string' : 'a boolean';
}

/** An object's member names, as `{image, ports}`, for error messages. */
export function describeMembers(object: JsonObject): string {
  const keys = Object.keys(object);
  const shown = keys.slice(0, 10).join(', ');
  return `{${keys.length > 10 ? `${shown}, ...` : shown}}`;
}

/** A short JSON rendering of a scalar that is no data (a directive name, an op), for error messages. */
export function describeScalar(value: JsonValue): string {
  if (typeof value === 'object' && value !== null) return describeType(value);
  const text = JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}
