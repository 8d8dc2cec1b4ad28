// How the emulator's own controllers write: through the same delete/update paths as clients (admission,
// finalizers and grace periods apply), identified as kube-controller-manager.
import type { ApiContext } from '../context.js';
import { deleteObject, type DeleteOptions, type DeleteResult } from '../handlers/delete.js';
import type { WriteOptions } from '../handlers/object-prep.js';
import { updateObject } from '../handlers/update.js';
import type { ResourceType } from '../resource-types.js';
import type { ObjectRef } from '../store.js';
import { cloneJson, type KubeObject } from '../types.js';

export const CONTROLLER_WRITE: WriteOptions = {
  dryRun: false,
  fieldValidation: 'Ignore',
  userAgent: 'kube-controller-manager/v1.32.0 (emulated)',
};

export function typeOf(ctx: ApiContext, storageKey: string): ResourceType | undefined {
  return ctx.registry.storageTypeOf(storageKey);
}

/** Delete an object unless it is already gone. */
export async function deleteRef(
  ctx: ApiContext,
  ref: ObjectRef,
  options: DeleteOptions,
): Promise<DeleteResult | undefined> {
  const rt = typeOf(ctx, ref.storageKey);
  if (!rt || !ctx.store.get(ref.storageKey, ref.namespace, ref.name)) return undefined;
  return deleteObject(ctx, rt, ref.namespace, ref.name, options, CONTROLLER_WRITE);
}

/**
 * Change an object (finalizers, ownerReferences, spec.finalizers) the way a controller would with an update: the
 * change is applied to the current stored object, which is then written back (or removed when that was the
 * last finalizer of an object being deleted).
 */
export async function modifyObject(ctx: ApiContext, ref: ObjectRef, change: (obj: KubeObject) => void): Promise<void> {
  const rt = typeOf(ctx, ref.storageKey);
  if (!rt || !ctx.store.get(ref.storageKey, ref.namespace, ref.name)) return;
  await updateObject(
    ctx,
    { rt, namespace: ref.namespace, name: ref.name, subresource: '' },
    (current) => {
      const next = cloneJson(current);
      change(next);
      return next;
    },
    CONTROLLER_WRITE,
  );
}

export function refOf(storageKey: string, obj: KubeObject): ObjectRef {
  return { storageKey, namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '' };
}
