// Server-side apply (application/apply-patch+yaml), reduced to what a test cluster needs.
//
// Simplification, on purpose: there is no field ownership. kube-apiserver records in metadata.managedFields
// which manager set which field, removes fields a manager stops applying and reports conflicts between managers
// (409 unless force=true). Here the applied configuration is laid over the live object instead:
//   - built-in kinds: like a strategic merge patch without directives (maps merge, lists with a merge key merge
//     by it, other lists are replaced);
//   - custom resources: like a JSON merge patch (maps merge, lists are replaced);
//   - null members of the applied configuration are ignored (they never delete), and fields the configuration
//     leaves out stay as they are, also when an earlier apply by the same manager had set them;
//   - managedFields are neither read nor written, `force` has no effect, no conflict is ever reported.
// Creating the object when it does not exist is the caller's job: pass `{}` as the live object.
import { badRequest } from './errors.js';
import { jsonMergePatch } from './merge-patch.js';
import { describeType, isJsonObject, memberOf, setMember, type JsonObject, type JsonValue } from './json.js';
import { strategicMergePatch } from './strategic-merge-patch.js';
import type { GroupVersionKind } from './strategic-schema.js';

const DIRECTIVE_KEY = /^\$(patch|retainKeys|setElementOrder\/|deleteFromPrimitiveList\/)/;

/** Lays the applied configuration over `live` (see the module comment) and returns the new object. */
export function applyConfiguration(
  live: JsonObject,
  applied: JsonValue,
  gvk: GroupVersionKind,
  strategic: boolean,
): JsonObject {
  if (!isJsonObject(applied)) {
    throw badRequest(`an apply patch must be an object (a Kubernetes manifest), got ${describeType(applied)}`);
  }
  checkTypeMeta(applied, gvk);
  const overlay = withoutNulls(applied, strategic);
  if (!strategic) return jsonMergePatch(live, overlay) as JsonObject;
  return strategicMergePatch(live, overlay, gvk);
}

function checkTypeMeta(applied: JsonObject, gvk: GroupVersionKind): void {
  const expectedVersion = gvk.group === '' ? gvk.version : `${gvk.group}/${gvk.version}`;
  const apiVersion = memberOf(applied, 'apiVersion');
  const kind = memberOf(applied, 'kind');
  if (typeof apiVersion !== 'string' || apiVersion === '') {
    throw badRequest(`Object 'apiVersion' is missing in the apply patch: it must be "${expectedVersion}"`);
  }
  if (typeof kind !== 'string' || kind === '') {
    throw badRequest(`Object 'Kind' is missing in the apply patch: it must be "${gvk.kind}"`);
  }
  if (apiVersion !== expectedVersion) {
    throw badRequest(
      `Incorrect version specified in apply patch. Specified patch version: ${apiVersion}, expected: ${expectedVersion}`,
    );
  }
  if (kind !== gvk.kind) {
    throw badRequest(`Incorrect kind specified in apply patch. Specified patch kind: ${kind}, expected: ${gvk.kind}`);
  }
}

/** A copy without null object members; for built-in kinds, directive-like keys are refused (they are no fields). */
function withoutNulls(value: JsonObject, refuseDirectives: boolean): JsonObject {
  const out: JsonObject = {};
  for (const [key, member] of Object.entries(value)) {
    if (refuseDirectives && DIRECTIVE_KEY.test(key)) {
      throw badRequest(`an apply patch cannot contain the strategic merge patch directive "${key}"`);
    }
    if (member === null) continue;
    setMember(out, key, withoutNullsIn(member, refuseDirectives));
  }
  return out;
}

function withoutNullsIn(value: JsonValue, refuseDirectives: boolean): JsonValue {
  if (Array.isArray(value)) return value.map((item) => withoutNullsIn(item, refuseDirectives));
  if (isJsonObject(value)) return withoutNulls(value, refuseDirectives);
  return value;
}
