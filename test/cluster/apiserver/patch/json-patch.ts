// JSON Patch, RFC 6902: a list of add/remove/replace/move/copy/test operations applied in order, all or nothing.
// Error messages follow the wording kube-apiserver returns (its json-patch library), e.g.
// `replace operation does not apply: doc is missing key: /spec/x: missing value`.
import { badRequest, unprocessable } from './errors.js';
import { arrayIndexOf, parseJsonPointer } from './json-pointer.js';
import {
  cloneJson,
  deleteMember,
  describeScalar,
  describeType,
  hasMember,
  isJsonObject,
  jsonEqual,
  memberOf,
  setMember,
  type JsonObject,
  type JsonValue,
} from './json.js';

export type JsonPatchOperation =
  | { op: 'add' | 'replace' | 'test'; path: string; value: JsonValue }
  | { op: 'remove'; path: string }
  | { op: 'move' | 'copy'; from: string; path: string };

export type JsonPatchOp = JsonPatchOperation['op'];

const OPS: ReadonlySet<string> = new Set<JsonPatchOp>(['add', 'remove', 'replace', 'move', 'copy', 'test']);

/**
 * Checks that `body` is an RFC 6902 patch document: an array of operation objects. The array and object shape is
 * a 400 (the body is not a JSON patch); a bad or missing member of an operation is a 422, as kube-apiserver has it.
 */
export function parseJsonPatch(body: JsonValue): JsonPatchOperation[] {
  if (!Array.isArray(body)) {
    throw badRequest(`a JSON patch must be an array of operations, got ${describeType(body)}`);
  }
  return body.map((item, index) => {
    if (!isJsonObject(item)) {
      throw badRequest(`JSON patch operation ${index} must be an object, got ${describeType(item)}`);
    }
    return parseOperation(item, index);
  });
}

function parseOperation(item: JsonObject, index: number): JsonPatchOperation {
  const op = memberOf(item, 'op');
  if (typeof op !== 'string' || !OPS.has(op)) {
    const shown = op === undefined ? 'missing' : describeScalar(op);
    throw unprocessable(
      `Unexpected kind: ${shown} (operation ${index}: op must be one of add, remove, replace, move, copy, test)`,
    );
  }
  const kind = op as JsonPatchOp;
  const path = stringMember(item, 'path', kind, index);
  switch (kind) {
    case 'remove':
      return { op: kind, path };
    case 'move':
    case 'copy':
      return { op: kind, from: stringMember(item, 'from', kind, index), path };
    default: {
      const value = memberOf(item, 'value');
      if (value === undefined) throw unprocessable(`${kind} operation ${index} (path ${path}): missing value field`);
      return { op: kind, path, value };
    }
  }
}

function stringMember(item: JsonObject, name: 'path' | 'from', op: JsonPatchOp, index: number): string {
  const value = memberOf(item, name);
  if (value === undefined) throw unprocessable(`${op} operation ${index}: missing ${name} field`);
  if (typeof value !== 'string') {
    throw unprocessable(`${op} operation ${index}: ${name} must be a string, got ${describeType(value)}`);
  }
  return value;
}

/**
 * Applies an RFC 6902 patch to `target` and returns the new document. `ops` is validated first (see
 * parseJsonPatch). The operations run on a copy, so a failing operation leaves nothing half-applied and the input
 * is never modified.
 */
export function applyJsonPatch(target: JsonValue, ops: readonly JsonPatchOperation[] | JsonValue): JsonValue {
  const operations = parseJsonPatch(ops as JsonValue);
  const doc: { root: JsonValue } = { root: cloneJson(target) };
  for (const operation of operations) applyOperation(doc, operation);
  return doc.root;
}

type Document = { root: JsonValue };

/** Where a pointer lands: the container holding it (or the document itself for "") and the key inside it. */
type Location =
  | { kind: 'root' }
  | { kind: 'member'; parent: JsonObject; key: string }
  | { kind: 'element'; parent: JsonValue[]; token: string };

function applyOperation(doc: Document, operation: JsonPatchOperation): void {
  switch (operation.op) {
    case 'add':
      return add(doc, operation.path, cloneJson(operation.value), 'add');
    case 'remove':
      remove(doc, operation.path, 'remove');
      return;
    case 'replace':
      return replace(doc, operation.path, cloneJson(operation.value));
    case 'move':
      return move(doc, operation.from, operation.path);
    case 'copy': {
      const value = read(doc, operation.from, 'copy operation does not apply: doc is missing from path');
      return add(doc, operation.path, cloneJson(value), 'copy');
    }
    case 'test':
      return test(doc, operation.path, operation.value);
  }
}

/** Resolves all but the last token; undefined when a parent is missing or is not a container. */
function locate(doc: Document, pointer: string): Location | undefined {
  const tokens = parseJsonPointer(pointer);
  if (tokens.length === 0) return { kind: 'root' };
  let node: JsonValue = doc.root;
  for (const token of tokens.slice(0, -1)) {
    const next = childOf(node, token);
    if (next === undefined) return undefined;
    node = next;
  }
  const last = tokens[tokens.length - 1]!;
  if (Array.isArray(node)) return { kind: 'element', parent: node, token: last };
  if (isJsonObject(node)) return { kind: 'member', parent: node, key: last };
  return undefined;
}

function childOf(node: JsonValue, token: string): JsonValue | undefined {
  if (Array.isArray(node)) {
    const index = arrayIndexOf(token);
    return index === undefined ? undefined : node[index];
  }
  return isJsonObject(node) ? memberOf(node, token) : undefined;
}

function invalidIndex(op: string, path: string, token: string): Error {
  return unprocessable(
    `error in ${op} for path: '${path}': Unable to access invalid index: ${token}: invalid index referenced`,
  );
}

function add(doc: Document, path: string, value: JsonValue, op: 'add' | 'copy' | 'move'): void {
  const at = locate(doc, path);
  const missing =
    op === 'add'
      ? `add operation does not apply: doc is missing path: "${path}"`
      : `${op} operation does not apply: doc is missing destination path: ${path}`;
  if (at === undefined) throw unprocessable(`${missing}: missing value`);
  if (at.kind === 'root') {
    doc.root = value;
  } else if (at.kind === 'member') {
    setMember(at.parent, at.key, value);
  } else {
    const index = at.token === '-' ? at.parent.length : arrayIndexOf(at.token);
    if (index === undefined || index > at.parent.length) throw invalidIndex(op, path, at.token);
    at.parent.splice(index, 0, value);
  }
}

/** Removes and returns the value at `path`. */
function remove(doc: Document, path: string, op: 'remove' | 'move'): JsonValue {
  const at = locate(doc, path);
  if (at === undefined) {
    const what = op === 'remove' ? `doc is missing path: "${path}"` : `doc is missing from path: ${path}`;
    throw unprocessable(`${op} operation does not apply: ${what}: missing value`);
  }
  if (at.kind === 'root') throw unprocessable(`${op} operation does not apply: cannot remove the whole document`);
  if (at.kind === 'member') {
    const value = memberOf(at.parent, at.key);
    if (value === undefined) {
      throw unprocessable(
        `error in ${op} for path: '${path}': Unable to remove nonexistent key: ${at.key}: missing value`,
      );
    }
    deleteMember(at.parent, at.key);
    return value;
  }
  const index = arrayIndexOf(at.token);
  if (index === undefined || index >= at.parent.length) throw invalidIndex(op, path, at.token);
  return at.parent.splice(index, 1)[0]!;
}

function replace(doc: Document, path: string, value: JsonValue): void {
  const at = locate(doc, path);
  if (at === undefined)
    throw unprocessable(`replace operation does not apply: doc is missing path: ${path}: missing value`);
  if (at.kind === 'root') {
    doc.root = value;
  } else if (at.kind === 'member') {
    if (!hasMember(at.parent, at.key)) {
      throw unprocessable(`replace operation does not apply: doc is missing key: ${path}: missing value`);
    }
    setMember(at.parent, at.key, value);
  } else {
    const index = arrayIndexOf(at.token);
    if (index === undefined || index >= at.parent.length) throw invalidIndex('replace', path, at.token);
    at.parent[index] = value;
  }
}

function move(doc: Document, from: string, path: string): void {
  if (from === path) {
    read(doc, from, 'move operation does not apply: doc is missing from path');
    return;
  }
  if (path.startsWith(`${from}/`)) {
    throw unprocessable(`move operation does not apply: from ${from} is a proper prefix of path ${path}`);
  }
  read(doc, from, 'move operation does not apply: doc is missing from path');
  const value = remove(doc, from, 'move');
  add(doc, path, value, 'move');
}

/** The value at `pointer`; throws `<missing>: <pointer>: missing value` when there is none. */
function read(doc: Document, pointer: string, missing: string): JsonValue {
  const at = locate(doc, pointer);
  let value: JsonValue | undefined;
  if (at?.kind === 'root') value = doc.root;
  else if (at?.kind === 'member') value = memberOf(at.parent, at.key);
  else if (at?.kind === 'element') {
    const index = arrayIndexOf(at.token);
    value = index === undefined ? undefined : at.parent[index];
  }
  if (value === undefined) throw unprocessable(`${missing}: ${pointer}: missing value`);
  return value;
}

function test(doc: Document, path: string, expected: JsonValue): void {
  const actual = read(doc, path, 'test operation does not apply: is missing path');
  if (!jsonEqual(actual, expected)) {
    // The values stay out of the message: a test may compare secret data.
    throw unprocessable(`testing value ${path} failed: test failed`);
  }
}
