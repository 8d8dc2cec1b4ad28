// delete and deletecollection. An object leaves storage at once unless it has finalizers or a grace period
// (bound pods); then it gets metadata.deletionTimestamp and stays until the last finalizer is removed or a
// DELETE with gracePeriodSeconds=0 arrives. Dependents are handled by the garbage collector (gc.ts) according
// to propagationPolicy: Background (after), Foreground (before: finalizer foregroundDeletion), Orphan
// (ownerReferences removed: finalizer orphan).
import type { ApiContext } from '../context.js';
import { ApiError, apiErrors } from '../errors.js';
import type { ResourceType } from '../resource-types.js';
import { cloneJson, formatTimestamp, type KubeObject } from '../types.js';
import { admissionRequest, qualified, readyForRemoval, type WriteOptions } from './object-prep.js';

export type PropagationPolicy = 'Orphan' | 'Background' | 'Foreground';

export const FOREGROUND_FINALIZER = 'foregroundDeletion';
export const ORPHAN_FINALIZER = 'orphan';

export interface DeleteOptions {
  gracePeriodSeconds?: number;
  propagationPolicy?: PropagationPolicy;
  preconditions?: { uid?: string | undefined; resourceVersion?: string | undefined };
}

export interface DeleteResult {
  /** Requested-version form: the last state when removed, the terminating object otherwise. */
  object: KubeObject;
  removed: boolean;
}

function checkPreconditions(rt: ResourceType, current: KubeObject, pre: DeleteOptions['preconditions']): void {
  const name = current.metadata.name ?? '';
  if (pre?.uid && pre.uid !== current.metadata.uid) {
    throw apiErrors.conflict(
      qualified(rt),
      name,
      `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${current.metadata.uid ?? ''}`,
    );
  }
  if (pre?.resourceVersion && pre.resourceVersion !== current.metadata.resourceVersion) {
    throw apiErrors.conflict(
      qualified(rt),
      name,
      `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in meta: ${current.metadata.resourceVersion ?? ''}`,
    );
  }
}

const PROTECTED_NAMESPACES = new Set(['default', 'kube-system', 'kube-public']);

export async function deleteObject(
  ctx: ApiContext,
  rt: ResourceType,
  namespace: string,
  name: string,
  options: DeleteOptions,
  write: WriteOptions,
): Promise<DeleteResult> {
  const ns = rt.namespaced ? namespace : '';
  if (rt.storageKey === 'core/namespaces' && PROTECTED_NAMESPACES.has(name)) {
    throw apiErrors.forbidden(qualified(rt), name, 'this namespace may not be deleted');
  }
  for (let attempt = 0; attempt < 10; attempt++) {
    const current = ctx.store.get(rt.storageKey, ns, name);
    if (!current) throw apiErrors.notFound(qualified(rt), name);
    checkPreconditions(rt, current, options.preconditions);
    if (!ctx.admission.empty) {
      await ctx.admission.validate(admissionRequest(rt, 'DELETE', '', undefined, current, write));
      if (ctx.store.get(rt.storageKey, ns, name) !== current) continue;
    }
    return commitDelete(ctx, rt, current, options, write.dryRun);
  }
  throw apiErrors.conflict(qualified(rt), name, 'too many concurrent writes, please retry');
}

function commitDelete(
  ctx: ApiContext,
  rt: ResourceType,
  current: KubeObject,
  options: DeleteOptions,
  dryRun: boolean,
): DeleteResult {
  const requested = options.gracePeriodSeconds;
  if (requested !== undefined && (!Number.isInteger(requested) || requested < 0)) {
    throw apiErrors.badRequest(`gracePeriodSeconds must be a non-negative integer, got ${requested}`);
  }
  const cluster = { nodeExists: (name: string) => ctx.store.get('core/nodes', '', name) !== undefined };
  const grace = rt.behaviour.deleteGracePeriod?.(current, requested, cluster) ?? 0;
  const now = ctx.clock.now();
  const next = cloneJson(current);
  const meta = next.metadata;

  if (meta.deletionTimestamp) {
    // Already terminating: a DELETE may only shorten the grace period.
    const currentGrace = meta.deletionGracePeriodSeconds ?? 0;
    if (grace < currentGrace) {
      meta.deletionGracePeriodSeconds = grace;
      meta.deletionTimestamp = formatTimestamp(now + grace * 1000);
    }
  } else {
    const finalizers = new Set(meta.finalizers ?? []);
    const hasDependents = ctx.store.dependentsOf(meta.uid ?? '').length > 0;
    if (hasDependents && options.propagationPolicy === 'Foreground') finalizers.add(FOREGROUND_FINALIZER);
    if (hasDependents && options.propagationPolicy === 'Orphan') finalizers.add(ORPHAN_FINALIZER);
    if (finalizers.size > 0) meta.finalizers = [...finalizers];
    meta.deletionTimestamp = formatTimestamp(now + grace * 1000);
    meta.deletionGracePeriodSeconds = grace;
    if (rt.behaviour.tracksGeneration) meta.generation = (meta.generation ?? 0) + 1;
    rt.behaviour.prepareForDelete?.(next);
  }

  if (readyForRemoval(rt, next)) {
    if (dryRun) return { object: rt.fromStorage(current), removed: true };
    const gone = ctx.store.remove(rt.storageKey, current);
    return { object: rt.fromStorage(gone), removed: true };
  }
  if (dryRun) return { object: rt.fromStorage(next), removed: false };
  if (JSON.stringify(next) === JSON.stringify(current)) return { object: rt.fromStorage(current), removed: false };
  const stored = ctx.store.update(rt.storageKey, next, current);
  return { object: rt.fromStorage(stored), removed: false };
}

/** Parse DeleteOptions from a request body (may be empty) and query parameters (which win). */
export function parseDeleteOptions(body: unknown, query: URLSearchParams): DeleteOptions {
  const opts: DeleteOptions = {};
  const src =
    typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  if (src.kind !== undefined && src.kind !== 'DeleteOptions') {
    throw apiErrors.badRequest(`the body of a DELETE must be DeleteOptions, got kind ${JSON.stringify(src.kind)}`);
  }
  const grace = query.get('gracePeriodSeconds') ?? src.gracePeriodSeconds;
  if (grace !== undefined && grace !== null) {
    const n = Number(grace);
    if (!Number.isInteger(n))
      throw apiErrors.badRequest(`gracePeriodSeconds must be an integer, got ${JSON.stringify(grace)}`);
    opts.gracePeriodSeconds = n;
  }
  const policy = query.get('propagationPolicy') ?? src.propagationPolicy;
  const orphan = query.get('orphanDependents') ?? src.orphanDependents;
  if (policy !== undefined && policy !== null) {
    if (policy !== 'Orphan' && policy !== 'Background' && policy !== 'Foreground') {
      throw new ApiError(
        422,
        'Invalid',
        `DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: ${JSON.stringify(policy)}: supported values: "Foreground", "Background", "Orphan"`,
        {
          kind: 'DeleteOptions',
          group: 'meta.k8s.io',
          causes: [{ reason: 'FieldValueNotSupported', field: 'propagationPolicy' }],
        },
      );
    }
    opts.propagationPolicy = policy;
  } else if (orphan !== undefined && orphan !== null) {
    opts.propagationPolicy = orphan === true || orphan === 'true' ? 'Orphan' : 'Background';
  }
  const pre = src.preconditions;
  if (typeof pre === 'object' && pre !== null) {
    const p = pre as Record<string, unknown>;
    opts.preconditions = {
      uid: typeof p.uid === 'string' ? p.uid : undefined,
      resourceVersion: typeof p.resourceVersion === 'string' ? p.resourceVersion : undefined,
    };
  }
  return opts;
}

/** The Status a DELETE answers with for kinds that do not return the deleted object. */
export function deletedStatusDetails(rt: ResourceType, obj: KubeObject): Record<string, string> {
  return {
    name: obj.metadata.name ?? '',
    group: rt.group,
    kind: rt.plural,
    uid: obj.metadata.uid ?? '',
  };
}
