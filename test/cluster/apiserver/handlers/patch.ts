// patch (PATCH): the body is applied to the current object by the patch module (merge, JSON patch, strategic
// merge for built-in kinds, apply-patch+yaml), then the result goes through update's steps. An apply patch of an
// object that does not exist creates it (server-side apply without field ownership).
import type { ApiContext } from '../context.js';
import { ApiError, apiErrors } from '../errors.js';
import { APPLY_PATCH, PatchError, applyPatch, mediaTypeOf } from '../patch/index.js';
import type { ResourceType } from '../resource-types.js';
import type { KubeObject } from '../types.js';
import { createObject } from './create.js';
import type { WriteOptions, WriteResult } from './object-prep.js';
import { updateObject, type UpdateTarget } from './update.js';

function asApiError(err: unknown): unknown {
  return err instanceof PatchError ? new ApiError(err.code, err.reason, err.message) : err;
}

export async function patchObject(
  ctx: ApiContext,
  target: UpdateTarget,
  body: Buffer,
  contentType: string,
  write: WriteOptions,
): Promise<WriteResult> {
  const { rt, name, subresource } = target;
  const gvk = { group: rt.group, version: rt.version, kind: rt.kind };
  const opts = { isCustomResource: !rt.behaviour.strategicMerge };
  const patched = (current: Record<string, unknown>): KubeObject => {
    try {
      return applyPatch(current, body, contentType, gvk, opts) as KubeObject;
    } catch (err) {
      throw asApiError(err);
    }
  };
  const ns = rt.namespaced ? target.namespace : '';
  if (mediaTypeOf(contentType) === APPLY_PATCH && !subresource && !ctx.store.get(rt.storageKey, ns, name)) {
    const created = await applyCreate(ctx, rt, ns, name, patched({}), write);
    if (created) return created;
  }
  return updateObject(ctx, target, patched, write);
}

/** Create from an apply patch; undefined when someone else created the object meanwhile (then it is patched). */
async function applyCreate(
  ctx: ApiContext,
  rt: ResourceType,
  ns: string,
  name: string,
  obj: KubeObject,
  write: WriteOptions,
): Promise<WriteResult | undefined> {
  const meta = (obj.metadata ??= {});
  if (meta.name && meta.name !== name) {
    throw apiErrors.badRequest(
      `the name of the object (${String(meta.name)}) does not match the name on the URL (${name})`,
    );
  }
  meta.name = name;
  try {
    return await createObject(ctx, rt, ns, obj, write);
  } catch (err) {
    if (err instanceof ApiError && err.reason === 'AlreadyExists') return undefined;
    throw err;
  }
}
