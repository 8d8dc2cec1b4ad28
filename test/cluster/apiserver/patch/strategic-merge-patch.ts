// Kubernetes strategic merge patch, server side: a JSON merge patch in which lists whose field has
// patchStrategy "merge" are merged element by element (objects by their patchMergeKey, primitives as a set), plus
// the directives kubectl sends:
//   "$patch": "replace" | "delete" | "merge"      on an object, or as an element of a merged list
//   "$retainKeys": [keys]                         clear every member of the object not named
//   "$setElementOrder/<field>": [keys or values]  order of the merged list <field>
//   "$deleteFromPrimitiveList/<field>": [values]  remove these values from the primitive list <field>
// Semantics follow the published design (community/contributors/devel/sig-api-machinery/strategic-merge-patch.md
// and design-proposals cli/preserve-order-in-strategic-merge-patch.md). Order of a merged list: elements named by
// the patch (or by $setElementOrder) in that order, the server's other elements placed by their relative order in
// the live list where that is comparable; elements the live list does not have come before the server-only ones
// that are not comparable (so, as with kube-apiserver, a new element without $setElementOrder lands first).
import { badRequest, unprocessable } from './errors.js';
import {
  cloneJson,
  deleteMember,
  describeMembers,
  describeScalar,
  describeType,
  hasMember,
  isJsonObject,
  isJsonPrimitive,
  jsonEqual,
  memberOf,
  setMember,
  type JsonObject,
  type JsonValue,
} from './json.js';
import {
  rootPatchMeta,
  structOf,
  type FieldPatchMeta,
  type GroupVersionKind,
  type StructPatchMeta,
} from './strategic-schema.js';

const PATCH = '$patch';
const RETAIN_KEYS = '$retainKeys';
const SET_ELEMENT_ORDER = '$setElementOrder/';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList/';

/** Marks "remove this member" as the result of merging a value. */
const REMOVE = Symbol('remove');
type Merged = JsonValue | typeof REMOVE;

/**
 * Applies a strategic merge patch to `original` for the kind `gvk` and returns the new object. Kinds without
 * patch metadata (custom resources) merge maps and replace every list. Inputs are never modified.
 * Throws PatchError: 400 for a malformed directive, 422 for a patch that does not fit the object.
 */
export function strategicMergePatch(original: JsonObject, patch: JsonObject, gvk: GroupVersionKind): JsonObject {
  if (!isJsonObject(patch)) {
    throw badRequest(`a strategic merge patch must be a JSON object, got ${describeType(patch)}`);
  }
  const merged = mergeObject(cloneJson(original), patch, rootPatchMeta(gvk));
  return merged === REMOVE ? {} : merged;
}

function isDirectiveKey(key: string): boolean {
  return (
    key === PATCH ||
    key === RETAIN_KEYS ||
    key.startsWith(SET_ELEMENT_ORDER) ||
    key.startsWith(DELETE_FROM_PRIMITIVE_LIST)
  );
}

/** Merges `patch` into `target`, which the caller owns and which is modified; `patch` is only read. */
function mergeObject(
  target: JsonObject,
  patch: JsonObject,
  meta: StructPatchMeta | undefined,
): JsonObject | typeof REMOVE {
  const directive = memberOf(patch, PATCH);
  if (directive !== undefined) {
    if (directive === 'delete') return REMOVE;
    if (directive === 'replace') return cleanObject(patch);
    if (directive !== 'merge') throw unknownPatchType(directive, patch);
  }
  applyRetainKeys(target, patch);

  // $setElementOrder places server-only elements by the live list as it was before this patch.
  const liveLists = new Map<string, JsonValue[]>();
  for (const key of Object.keys(patch)) {
    if (!key.startsWith(SET_ELEMENT_ORDER)) continue;
    const live = memberOf(target, key.slice(SET_ELEMENT_ORDER.length));
    if (Array.isArray(live)) liveLists.set(key, [...live]);
  }

  for (const [key, value] of Object.entries(patch)) {
    if (isDirectiveKey(key)) continue;
    const field = meta?.[key];
    const before = memberOf(target, key);
    const after = value === null ? REMOVE : mergeValue(before, value, field);
    if (after === REMOVE) deleteMember(target, key);
    else setMember(target, key, after);
    if (
      isMergeList(field) &&
      Array.isArray(before) &&
      before.length > 0 &&
      Array.isArray(after) &&
      after.length === 0
    ) {
      deleteMember(target, key); // a merged list that lost all its elements is gone, as omitempty has it
    }
  }

  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith(SET_ELEMENT_ORDER)) {
      const name = key.slice(SET_ELEMENT_ORDER.length);
      applySetElementOrder(target, name, value, meta?.[name], liveLists.get(key) ?? []);
    }
  }
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith(DELETE_FROM_PRIMITIVE_LIST)) {
      applyDeleteFromPrimitiveList(target, key.slice(DELETE_FROM_PRIMITIVE_LIST.length), value);
    }
  }
  return target;
}

function unknownPatchType(directive: JsonValue, where: JsonObject): Error {
  return unprocessable(`unknown patch type: ${describeScalar(directive)} in map: ${describeMembers(where)}`);
}

/** `$retainKeys`: members of `target` not in the list are cleared; the patch may set only listed members. */
function applyRetainKeys(target: JsonObject, patch: JsonObject): void {
  const retain = memberOf(patch, RETAIN_KEYS);
  if (retain === undefined) return;
  if (!Array.isArray(retain) || !retain.every((key) => typeof key === 'string')) {
    throw badRequest(
      `invalid patch format of retainKeys: it must be a list of field names, got ${describeType(retain)}`,
    );
  }
  const keep = new Set<string>(retain);
  for (const [key, value] of Object.entries(patch)) {
    if (value === null || isDirectiveKey(key)) continue;
    if (!keep.has(key)) {
      throw unprocessable(`patch content doesn't match retainKeys list: "${key}" is set but not in the list`);
    }
  }
  for (const key of Object.keys(target)) if (!keep.has(key)) deleteMember(target, key);
}

function isMergeList(field: FieldPatchMeta | undefined): boolean {
  return field?.patchStrategy === 'merge' || field?.patchStrategy === 'merge,retainKeys';
}

/** The merge of one member: `before` (owned, may be modified) with the non-null patch value `value`. */
function mergeValue(before: JsonValue | undefined, value: JsonValue, field: FieldPatchMeta | undefined): Merged {
  if (isJsonObject(value)) {
    if (field?.patchStrategy === 'replace') return cleanObject(value);
    return mergeObject(isJsonObject(before) ? before : {}, value, structOf(field));
  }
  if (Array.isArray(value)) {
    if (!isMergeList(field)) return cleanList(value);
    return mergeList(Array.isArray(before) ? before : [], value, field!);
  }
  return value;
}

/** Merges a patch list into a list whose field has patchStrategy merge. */
function mergeList(before: JsonValue[], patch: JsonValue[], field: FieldPatchMeta): JsonValue[] {
  if (patch.length === 0) return before;
  if ([...before, ...patch].some((item) => Array.isArray(item))) {
    throw unprocessable('lists of lists are not supported');
  }
  const objects = patch.filter((item) => isJsonObject(item)).length;
  if (objects === 0) {
    if (before.some((item) => !isJsonPrimitive(item))) throw mixedList(before, patch);
    return mergePrimitives(before, patch);
  }
  if (objects !== patch.length || before.some((item) => !isJsonObject(item))) throw mixedList(before, patch);
  if (field.patchMergeKey === undefined) {
    throw unprocessable('cannot merge lists of objects without a merge key');
  }
  return mergeObjects(before as JsonObject[], patch as JsonObject[], field.patchMergeKey, structOf(field));
}

function mixedList(before: JsonValue[], patch: JsonValue[]): Error {
  const kinds = [...new Set([...before, ...patch].map((item) => describeType(item)))].join(', ');
  return unprocessable(`cannot merge a list of mixed element types (${kinds})`);
}

/** A set union: the live values, then the patch's new ones; ordered like the patch where it names them. */
function mergePrimitives(before: JsonValue[], patch: JsonValue[]): JsonValue[] {
  const merged = dedupe([...before, ...patch]);
  const inPatch = (item: JsonValue): boolean => patch.some((p) => jsonEqual(p, item));
  return orderList(
    merged.filter(inPatch),
    merged.filter((item) => !inPatch(item)),
    patch,
    before,
    (item) => item,
  );
}

function dedupe(items: JsonValue[]): JsonValue[] {
  const out: JsonValue[] = [];
  for (const item of items) if (!out.some((seen) => jsonEqual(seen, item))) out.push(item);
  return out;
}

/** Merges a list of objects by `key`, honouring `$patch` elements (delete, replace, merge). */
function mergeObjects(
  before: JsonObject[],
  patch: JsonObject[],
  key: string,
  element: StructPatchMeta | undefined,
): JsonValue[] {
  const keyOf = (item: JsonObject): JsonValue | undefined => {
    const value = memberOf(item, key);
    return value === null ? undefined : value;
  };
  const requireKey = (item: JsonObject): JsonValue => {
    const value = keyOf(item);
    if (value === undefined)
      throw unprocessable(`map: ${describeMembers(item)} does not contain declared merge key: ${key}`);
    return value;
  };

  let live = before;
  const plain: JsonObject[] = [];
  let replaceAll = false;
  for (const item of patch) {
    const directive = memberOf(item, PATCH);
    if (directive === undefined || directive === 'merge') {
      if (directive === undefined || keyOf(item) !== undefined) plain.push(item);
    } else if (directive === 'delete') {
      const doomed = requireKey(item);
      live = live.filter((existing) => {
        const existingKey = keyOf(existing);
        return existingKey === undefined || !jsonEqual(existingKey, doomed);
      });
    } else if (directive === 'replace') {
      replaceAll = true;
    } else {
      throw unknownPatchType(directive, item);
    }
  }
  if (replaceAll) return plain.map((item) => cleanObject(item));

  const merged = [...live];
  for (const item of plain) {
    const wanted = requireKey(item);
    const at = merged.findIndex((existing) => {
      const existingKey = keyOf(existing);
      return existingKey !== undefined && jsonEqual(existingKey, wanted);
    });
    const result = mergeObject(at >= 0 ? (merged[at] as JsonObject) : {}, item, element);
    if (result === REMOVE) continue; // unreachable: "$patch: delete" elements were handled above
    if (at >= 0) merged[at] = result;
    else merged.push(result);
  }
  const patchKeys = plain.map((item) => requireKey(item));
  const named = (item: JsonValue): boolean => patchKeys.some((k) => jsonEqual(k, keyOf(item as JsonObject) ?? null));
  return orderList(
    merged.filter(named),
    merged.filter((item) => !named(item)),
    patchKeys,
    live.map((item) => keyOf(item) ?? null),
    (item) => keyOf(item as JsonObject) ?? null,
  );
}

/**
 * Orders a merged list: `named` (elements the patch or $setElementOrder names) sorted by `order`; `serverOnly`
 * sorted by their place in `live`; then the two interleaved, a server-only element going before a named one when
 * the live list has both and has it first.
 */
function orderList(
  named: JsonValue[],
  serverOnly: JsonValue[],
  order: JsonValue[],
  live: JsonValue[],
  identity: (item: JsonValue) => JsonValue,
): JsonValue[] {
  const indexIn = (list: JsonValue[], item: JsonValue): number => {
    const id = identity(item);
    return list.findIndex((candidate) => jsonEqual(candidate, id));
  };
  const rank = (list: JsonValue[]) => (item: JsonValue) => {
    const index = indexIn(list, item);
    return index < 0 ? Number.MAX_SAFE_INTEGER : index;
  };
  const byOrder = rank(order);
  const byLive = rank(live);
  const left = [...serverOnly].sort((a, b) => byLive(a) - byLive(b));
  const right = [...named].sort((a, b) => byOrder(a) - byOrder(b));

  const out: JsonValue[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (j >= right.length) out.push(left[i++]!);
    else if (i >= left.length) out.push(right[j++]!);
    else {
      const l = indexIn(live, left[i]!);
      const r = indexIn(live, right[j]!);
      if (l >= 0 && r >= 0 && l < r) out.push(left[i++]!);
      else out.push(right[j++]!);
    }
  }
  return out;
}

/** `$setElementOrder/<name>`: reorders the (already merged) list `name` of `target`. */
function applySetElementOrder(
  target: JsonObject,
  name: string,
  order: JsonValue,
  field: FieldPatchMeta | undefined,
  liveBefore: JsonValue[],
): void {
  if (!Array.isArray(order)) {
    throw badRequest(`invalid patch format of setElementOrder list: ${SET_ELEMENT_ORDER}${name} must be a list`);
  }
  const list = memberOf(target, name);
  if (!Array.isArray(list) || list.length === 0 || !isMergeList(field)) return;
  const key = field!.patchMergeKey;
  const objects = isJsonObject(list[0]);
  let orderIds: JsonValue[];
  let identity: (item: JsonValue) => JsonValue;
  if (objects) {
    if (key === undefined) return;
    orderIds = order.map((entry) => {
      const id = isJsonObject(entry) ? memberOf(entry, key) : undefined;
      if (id === undefined || id === null) {
        throw badRequest(`invalid patch format of setElementOrder list: an entry has no "${key}"`);
      }
      return id;
    });
    identity = (item) => (isJsonObject(item) ? (memberOf(item, key) ?? null) : item);
  } else {
    if (!order.every((entry) => isJsonPrimitive(entry))) {
      throw badRequest(`invalid patch format of setElementOrder list: ${SET_ELEMENT_ORDER}${name} must list values`);
    }
    orderIds = order;
    identity = (item) => item;
  }
  const named = (item: JsonValue): boolean => orderIds.some((id) => jsonEqual(id, identity(item)));
  const liveIds = liveBefore.map(identity);
  const ordered = orderList(
    list.filter(named),
    list.filter((item) => !named(item)),
    orderIds,
    liveIds,
    identity,
  );
  setMember(target, name, ordered);
}

/** `$deleteFromPrimitiveList/<name>`: removes every occurrence of the listed values from the list `name`. */
function applyDeleteFromPrimitiveList(target: JsonObject, name: string, values: JsonValue): void {
  if (!Array.isArray(values) || !values.every((value) => isJsonPrimitive(value))) {
    throw badRequest(`invalid patch format of primitive list: ${DELETE_FROM_PRIMITIVE_LIST}${name} must list values`);
  }
  const list = memberOf(target, name);
  if (!Array.isArray(list)) return;
  const kept = list.filter((item) => !values.some((value) => jsonEqual(value, item)));
  if (kept.length === 0 && list.length > 0) deleteMember(target, name);
  else setMember(target, name, kept);
}

/** A copy of a value taken whole from the patch: null members and directives dropped at every level. */
function cleanObject(object: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(object)) {
    if (value === null || isDirectiveKey(key)) continue;
    setMember(out, key, cleanValue(value));
  }
  return out;
}

function cleanList(list: JsonValue[]): JsonValue[] {
  return list
    .filter(
      (item) =>
        !(isJsonObject(item) && hasMember(item, PATCH) && (Object.keys(item).length === 1 || item[PATCH] === 'delete')),
    )
    .map((item) => cleanValue(item));
}

function cleanValue(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return cleanList(value);
  if (isJsonObject(value)) return cleanObject(value);
  return value;
}
