// JSON merge patches (RFC 7386): the smallest patch that turns one document into another. Objects are diffed key by
// key, a removed key becomes null, anything else (arrays, scalars) is replaced whole.
import { isRecord } from '../util/is-record.js';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Deep equality of JSON values (key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  }
  if (isRecord(a) && isRecord(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

/**
 * The merge patch from `original` to `modified`, or undefined when they are equal. Both should be JSON objects;
 * undefined values count as absent.
 */
export function createMergePatch(original: unknown, modified: unknown): Json | undefined {
  if (!isRecord(original) || !isRecord(modified)) {
    return jsonEqual(original, modified) ? undefined : toJson(modified);
  }
  const patch: { [key: string]: Json } = {};
  let changed = false;
  for (const key of Object.keys(original)) {
    if (original[key] !== undefined && (!Object.hasOwn(modified, key) || modified[key] === undefined)) {
      patch[key] = null;
      changed = true;
    }
  }
  for (const key of Object.keys(modified)) {
    const next = modified[key];
    if (next === undefined) continue;
    const prev = original[key];
    if (prev === undefined) {
      patch[key] = toJson(next);
      changed = true;
    } else if (isRecord(prev) && isRecord(next)) {
      const sub = createMergePatch(prev, next);
      if (sub !== undefined) {
        patch[key] = sub;
        changed = true;
      }
    } else if (!jsonEqual(prev, next)) {
      patch[key] = toJson(next);
      changed = true;
    }
  }
  return changed ? patch : undefined;
}

/** Apply a merge patch (RFC 7386) to a document; returns a new value. */
export function applyMergePatch(target: unknown, patch: unknown): Json {
  if (!isRecord(patch)) return toJson(patch);
  const result: { [key: string]: Json } = isRecord(target) ? { ...(toJson(target) as { [key: string]: Json }) } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else if (value !== undefined) result[key] = applyMergePatch(result[key], value);
  }
  return result;
}

/** A JSON copy (drops undefined, functions; Dates become strings), so patches hold only JSON. */
export function toJson(value: unknown): Json {
  return value === undefined ? null : (JSON.parse(JSON.stringify(value)) as Json);
}
