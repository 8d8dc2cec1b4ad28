// JSON Merge Patch, RFC 7386: objects merge member by member, null removes a member, anything else replaces.
import {
  cloneJson,
  deleteMember,
  hasMember,
  isJsonObject,
  jsonEqual,
  memberOf,
  setMember,
  type JsonObject,
  type JsonValue,
} from './json.js';

/**
 * Applies `patch` to `target` as RFC 7386 MergePatch(target, patch) and returns the result.
 * A non-object patch replaces the target (a copy of the patch is returned). Inputs are never modified and the
 * result shares no structure with them.
 */
export function jsonMergePatch(target: JsonValue | undefined, patch: JsonValue): JsonValue {
  if (!isJsonObject(patch)) return cloneJson(patch);
  const result: JsonObject = isJsonObject(target) ? cloneJson(target) : {};
  mergeInto(result, patch);
  return result;
}

/** Merges `patch` into `result` in place; `result` is owned by the caller, `patch` is only read. */
function mergeInto(result: JsonObject, patch: JsonObject): void {
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) {
      deleteMember(result, key);
      continue;
    }
    if (!isJsonObject(value)) {
      setMember(result, key, cloneJson(value));
      continue;
    }
    const current = memberOf(result, key);
    const merged: JsonObject = isJsonObject(current) ? current : {};
    mergeInto(merged, value);
    setMember(result, key, merged);
  }
}

/**
 * The merge patch that turns `original` into `modified`: jsonMergePatch(original, createMergePatch(original,
 * modified)) equals `modified` whenever `modified` has no null object members (RFC 7386 cannot express those).
 */
export function createMergePatch(original: JsonValue, modified: JsonValue): JsonValue {
  if (!isJsonObject(original) || !isJsonObject(modified)) return cloneJson(modified);
  return diffObjects(original, modified);
}

function diffObjects(original: JsonObject, modified: JsonObject): JsonObject {
  const patch: JsonObject = {};
  for (const key of Object.keys(original)) {
    if (!hasMember(modified, key)) setMember(patch, key, null);
  }
  for (const [key, value] of Object.entries(modified)) {
    const before = memberOf(original, key);
    if (before === undefined) {
      setMember(patch, key, cloneJson(value));
    } else if (isJsonObject(before) && isJsonObject(value)) {
      const inner = diffObjects(before, value);
      if (Object.keys(inner).length > 0) setMember(patch, key, inner);
    } else if (!jsonEqual(before, value)) {
      setMember(patch, key, cloneJson(value));
    }
  }
  return patch;
}
