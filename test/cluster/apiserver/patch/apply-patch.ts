// PATCH request bodies: decode by content type, apply to the live object, return the new object.
import { load as loadYaml } from 'js-yaml';
import { applyConfiguration } from './apply-configuration.js';
import {
  APPLY_PATCH,
  JSON_PATCH,
  MERGE_PATCH,
  STRATEGIC_MERGE_PATCH,
  acceptedPatchTypes,
  mediaTypeOf,
  unsupportedPatchTypeMessage,
  type PatchTarget,
} from './content-types.js';
import { PatchError, badRequest, unprocessable } from './errors.js';
import { applyJsonPatch } from './json-patch.js';
import { describeType, isJsonObject, isJsonValue, type JsonObject, type JsonValue } from './json.js';
import { jsonMergePatch } from './merge-patch.js';
import { strategicMergePatch } from './strategic-merge-patch.js';
import type { GroupVersionKind } from './strategic-schema.js';

/**
 * Applies a PATCH body to `target` (the live object, JSON data) and returns the patched object.
 * `contentType` is the request's Content-Type header (parameters allowed). Throws PatchError:
 * 415 for a content type the resource does not take (strategic merge patch on a custom resource, anything
 * unknown), 400 for a body that cannot be decoded as that type, 422 for a patch that does not apply.
 * Neither `target` nor `body` is modified; the result shares nothing with them.
 */
export function applyPatch(
  target: Readonly<Record<string, unknown>>,
  body: Buffer | string,
  contentType: string,
  gvk: GroupVersionKind,
  opts: PatchTarget = {},
): JsonObject {
  const mediaType = mediaTypeOf(contentType);
  const accepted = acceptedPatchTypes(gvk, opts);
  if (!(accepted as string[]).includes(mediaType)) throw new PatchError(415, unsupportedPatchTypeMessage(accepted));
  if (!isJsonValue(target) || !isJsonObject(target)) {
    throw new TypeError(
      'applyPatch: the target must be a JSON object (plain objects, arrays, strings, finite numbers)',
    );
  }
  const text = bodyText(body);
  switch (mediaType) {
    case MERGE_PATCH: {
      const patch = parseJson(text);
      if (!isJsonObject(patch)) throw badRequest(`a merge patch must be a JSON object, got ${describeType(patch)}`);
      return jsonMergePatch(target, patch) as JsonObject;
    }
    case JSON_PATCH: {
      const patched = applyJsonPatch(target, parseJson(text));
      if (!isJsonObject(patched)) {
        throw unprocessable(`the patched object must be a JSON object, got ${describeType(patched)}`);
      }
      return patched;
    }
    case STRATEGIC_MERGE_PATCH: {
      const patch = parseJson(text);
      if (!isJsonObject(patch)) {
        throw badRequest(`a strategic merge patch must be a JSON object, got ${describeType(patch)}`);
      }
      return strategicMergePatch(target, patch, gvk);
    }
    case APPLY_PATCH:
      return applyConfiguration(target, parseYaml(text), gvk, accepted.includes(STRATEGIC_MERGE_PATCH));
    default:
      throw new PatchError(415, unsupportedPatchTypeMessage(accepted));
  }
}

function bodyText(body: Buffer | string): string {
  const text = typeof body === 'string' ? body : body.toString('utf8');
  const withoutBom = text.startsWith('\uFEFF') ? text.slice(1) : text;
  if (withoutBom.trim() === '') throw badRequest('the patch body is empty');
  return withoutBom;
}

function parseJson(text: string): JsonValue {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw badRequest(`the patch body is not valid JSON: ${(err as Error).message}`);
  }
  if (!isJsonValue(value)) throw badRequest('the patch body holds a number too large for JSON');
  return value;
}

/** apply-patch+yaml bodies: YAML 1.2 core schema (so JSON, which kubectl sends, parses too); one document. */
function parseYaml(text: string): JsonValue {
  let value: unknown;
  try {
    value = loadYaml(text);
  } catch (err) {
    const reason = (err as Error).message.split('\n')[0];
    throw badRequest(`error decoding YAML: ${reason}`);
  }
  if (!isJsonValue(value)) {
    throw badRequest(
      'error decoding YAML: the document holds values JSON cannot (non-finite numbers, keys like __proto__)',
    );
  }
  return value;
}
