// create (POST): decode, settle name and namespace, defaults, schema, validation, admission, store.
import { randomInt } from 'node:crypto';
import type { ApiContext } from '../context.js';
import { ApiError, apiErrors, qualifiedName } from '../errors.js';
import type { ResourceType } from '../resource-types.js';
import { formatTimestamp, type KubeObject } from '../types.js';
import {
  admissionRequest,
  clearSystemMetadata,
  decodeObject,
  enforceSchema,
  mutatingAdmission,
  qualified,
  settleNamespace,
  validateOrThrow,
  type WriteOptions,
  type WriteResult,
} from './object-prep.js';

const NAME_CHARS = 'bcdfghjklmnpqrstvwxz2456789';
const MAX_GENERATED_BASE = 58;

/** generateName + 5 random characters, as kube-apiserver builds them. */
export function generateName(base: string): string {
  let suffix = '';
  for (let i = 0; i < 5; i++) suffix += NAME_CHARS[randomInt(NAME_CHARS.length)];
  return base.slice(0, MAX_GENERATED_BASE) + suffix;
}

/** Namespaced objects need an existing namespace that is not being deleted. */
export function checkNamespace(ctx: ApiContext, rt: ResourceType, obj: KubeObject): void {
  if (!rt.namespaced) return;
  const ns = obj.metadata.namespace ?? '';
  const namespace = ctx.store.get('core/namespaces', '', ns);
  if (!namespace) throw apiErrors.notFound({ group: '', resource: 'namespaces' }, ns);
  if (namespace.metadata.deletionTimestamp) {
    throw new ApiError(
      403,
      'Forbidden',
      `${qualifiedName(qualified(rt))} "${obj.metadata.name ?? obj.metadata.generateName ?? ''}" is forbidden: unable to create new content in namespace ${ns} because it is being terminated`,
      {
        name: obj.metadata.name,
        group: rt.group,
        kind: rt.plural,
        causes: [
          {
            reason: 'NamespaceTerminating',
            message: `namespace ${ns} is being terminated`,
            field: 'metadata.namespace',
          },
        ],
      },
    );
  }
}

export async function createObject(
  ctx: ApiContext,
  rt: ResourceType,
  namespace: string,
  body: unknown,
  options: WriteOptions,
): Promise<WriteResult> {
  if (ctx.terminatingStorage.has(rt.storageKey)) {
    throw new ApiError(
      405,
      'MethodNotAllowed',
      'create not allowed while custom resource definition is terminating',
      {},
    );
  }
  const decoded = decodeObject(rt, body);
  settleNamespace(rt, decoded, namespace);
  let obj = rt.toStorage(decoded);
  checkNamespace(ctx, rt, obj);

  // As in kube-apiserver, mutating webhooks see the object before generateName is resolved (the registry's
  // BeforeCreate runs after mutating admission), so a webhook that needs the name must make it itself.
  obj = await mutatingAdmission(ctx, admissionRequest(rt, 'CREATE', '', obj, undefined, options), rt, obj);
  settleNamespace(rt, obj, namespace);
  if (!obj.metadata.name && obj.metadata.generateName) obj.metadata.name = generateName(obj.metadata.generateName);
  clearSystemMetadata(obj);
  obj.metadata.uid = ctx.newUid();
  obj.metadata.creationTimestamp = formatTimestamp(ctx.clock.now());
  if (rt.behaviour.tracksGeneration) obj.metadata.generation = 1;
  if (rt.schema !== undefined && rt.subresources.includes('status')) delete obj.status;
  rt.behaviour.prepareForCreate?.(obj);

  const schema = enforceSchema(rt, obj, undefined, options.fieldValidation);
  obj = schema.object;
  validateOrThrow(rt, obj, undefined, schema.errors);
  if (!ctx.admission.empty) await ctx.admission.validate(admissionRequest(rt, 'CREATE', '', obj, undefined, options));

  const ns = obj.metadata.namespace ?? '';
  for (let attempt = 0; ctx.store.get(rt.storageKey, ns, obj.metadata.name!); attempt++) {
    if (!obj.metadata.generateName || attempt >= 5) throw apiErrors.alreadyExists(qualified(rt), obj.metadata.name!);
    obj.metadata.name = generateName(obj.metadata.generateName);
  }
  if (options.dryRun) return { object: rt.fromStorage(obj), code: 201, warnings: schema.warnings };
  const stored = ctx.store.create(rt.storageKey, obj);
  return { object: rt.fromStorage(stored), code: 201, warnings: schema.warnings };
}
