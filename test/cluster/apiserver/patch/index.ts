// The API emulator's PATCH support: pure functions over JSON data, no I/O.
export { PatchError, type PatchErrorCode } from './errors.js';
export type { JsonObject, JsonPrimitive, JsonValue } from './json.js';
export { jsonMergePatch, createMergePatch } from './merge-patch.js';
export { applyJsonPatch, parseJsonPatch, type JsonPatchOperation } from './json-patch.js';
export { strategicMergePatch } from './strategic-merge-patch.js';
export { supportsStrategicMerge, type GroupVersionKind } from './strategic-schema.js';
export { applyConfiguration } from './apply-configuration.js';
export {
  APPLY_PATCH,
  JSON_PATCH,
  MERGE_PATCH,
  STRATEGIC_MERGE_PATCH,
  acceptedPatchTypes,
  acceptsStrategicMerge,
  mediaTypeOf,
  type PatchContentType,
  type PatchTarget,
} from './content-types.js';
export { applyPatch } from './apply-patch.js';
