// update (PUT), patch (PATCH) and their /status forms. Both produce a new object from the current one and go
// through the same steps; a write that raced with another one during (async) admission is retried from a fresh
// read unless the client pinned a resourceVersion, which then gets 409 Conflict.
import type { ApiContext } from '../context.js';
import { apiErrors } from '../errors.js';
import { fieldError } from '../field-errors.js';
import type { ResourceType } from '../resource-types.js';
import type { KubeObject } from '../types.js';
import {
  admissionRequest,
  applySubresourceRules,
  decodeObject,
  enforceSchema,
  mutatingAdmission,
  qualified,
  readyForRemoval,
  restoreSystemMetadata,
  settleNamespace,
  specChanged,
  unchanged,
  validateOrThrow,
  type WriteOptions,
  type WriteResult,
} from './object-prep.js';

const MAX_ATTEMPTS = 10;

/** Produces the new object (requested-version form) from the current one (same form). */
export type Produce = (current: KubeObject) => unknown;

export interface UpdateTarget {
  rt: ResourceType;
  namespace: string;
  name: string;
  /** '' or 'status'. */
  subresource: string;
}

export async function updateObject(
  ctx: ApiContext,
  target: UpdateTarget,
  produce: Produce,
  options: WriteOptions,
): Promise<WriteResult> {
  const { rt, name, subresource } = target;
  const ns = rt.namespaced ? target.namespace : '';
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const current = ctx.store.get(rt.storageKey, ns, name);
    if (!current) throw apiErrors.notFound(qualified(rt), name);
    const incoming = decodeObject(rt, await produce(rt.fromStorage(current)));
    if (incoming.metadata.name && incoming.metadata.name !== name) {
      throw apiErrors.badRequest(
        `the name of the object (${incoming.metadata.name}) does not match the name on the URL (${name})`,
      );
    }
    incoming.metadata.name = name;
    settleNamespace(rt, incoming, ns);
    const rv = incoming.metadata.resourceVersion;
    if (rv === undefined || rv === '') {
      if (!rt.behaviour.allowUnconditionalUpdate) {
        throw apiErrors.invalid(rt.group, rt.kind, name, [
          fieldError.invalid('metadata.resourceVersion', '0x0', 'must be specified for an update'),
        ]);
      }
    } else if (rv !== current.metadata.resourceVersion) {
      throw apiErrors.staleObject(qualified(rt), name);
    }

    let obj = rt.toStorage(incoming);
    obj = await mutatingAdmission(ctx, admissionRequest(rt, 'UPDATE', subresource, obj, current, options), rt, obj);
    obj = applySubresourceRules(rt, obj, current, subresource);
    restoreSystemMetadata(obj, current);
    obj.metadata.name = name;
    if (rt.namespaced) obj.metadata.namespace = ns;
    if (subresource !== 'status') rt.behaviour.prepareForUpdate?.(obj, current);

    const schema = enforceSchema(rt, obj, current, options.fieldValidation);
    obj = schema.object;
    validateOrThrow(rt, obj, current, schema.errors);
    if (!ctx.admission.empty) {
      await ctx.admission.validate(admissionRequest(rt, 'UPDATE', subresource, obj, current, options));
    }
    if (ctx.store.get(rt.storageKey, ns, name) !== current) {
      if (rv) throw apiErrors.staleObject(qualified(rt), name);
      continue;
    }
    if (unchanged(obj, current)) return { object: rt.fromStorage(current), code: 200, warnings: schema.warnings };
    if (rt.behaviour.tracksGeneration && subresource !== 'status' && specChanged(rt, obj, current)) {
      obj.metadata.generation = (current.metadata.generation ?? 0) + 1;
    }
    if (options.dryRun) return { object: rt.fromStorage(obj), code: 200, warnings: schema.warnings };
    if (readyForRemoval(rt, obj)) {
      const gone = ctx.store.remove(rt.storageKey, current, obj);
      return { object: rt.fromStorage(gone), code: 200, warnings: schema.warnings };
    }
    const stored = ctx.store.update(rt.storageKey, obj, current);
    return { object: rt.fromStorage(stored), code: 200, warnings: schema.warnings };
  }
  throw apiErrors.conflict(qualified(rt), name, 'too many concurrent writes, please retry');
}
