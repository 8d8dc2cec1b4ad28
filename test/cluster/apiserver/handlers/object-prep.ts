// Steps the write verbs share: decoding the body against the URL, system metadata, schema, validation, admission.
import type { AdmissionOperation, AdmissionRequest } from '../admission.js';
import { validateObjectMeta } from '../builtin/meta.js';
import type { ApiContext } from '../context.js';
import { applySchema } from '../crd/schema-adapter.js';
import { apiErrors, type QualifiedResource } from '../errors.js';
import { fieldError, type FieldError } from '../field-errors.js';
import { hasStatus, type ResourceType } from '../resource-types.js';
import { apiVersionOf, cloneJson, isPlainObject, jsonEqual, type KubeObject } from '../types.js';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

export interface WriteOptions {
  dryRun: boolean;
  fieldValidation: FieldValidation;
  userAgent: string;
}

export interface WriteResult {
  /** The object in the requested version's form. */
  object: KubeObject;
  /** 200 OK, 201 Created, 202 Accepted (deletion pending). */
  code: number;
  warnings: string[];
}

export function qualified(rt: ResourceType): QualifiedResource {
  return { group: rt.group, resource: rt.plural };
}

/** Check a request body is an object of this resource's apiVersion/kind, and fill those in when absent. */
export function decodeObject(rt: ResourceType, body: unknown): KubeObject {
  if (!isPlainObject(body)) throw apiErrors.badRequest(`the request body must be a JSON object (a ${rt.kind})`);
  const expected = apiVersionOf(rt.group, rt.version);
  const obj = { apiVersion: expected, kind: rt.kind, ...cloneJson(body) } as KubeObject;
  if (obj.apiVersion !== undefined && obj.apiVersion !== expected) {
    throw apiErrors.badRequest(
      `the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${expected})`,
    );
  }
  if (obj.kind !== undefined && obj.kind !== rt.kind) {
    throw apiErrors.badRequest(
      `the kind in the data (${String(obj.kind)}) does not match the expected kind (${rt.kind})`,
    );
  }
  obj.apiVersion = expected;
  obj.kind = rt.kind;
  if (rt.schema === undefined) {
    // Built-in kinds: what Go's JSON decoding would refuse before validation even starts.
    for (const key of ['spec', 'status']) {
      const v = obj[key];
      if (v !== undefined && v !== null && !isPlainObject(v)) {
        throw apiErrors.badRequest(
          `${rt.kind} in version "${rt.version}" cannot be handled as a ${rt.kind}: ${key} must be an object, got ${Array.isArray(v) ? 'an array' : typeof v}`,
        );
      }
    }
  }
  if (obj.metadata === undefined || obj.metadata === null) obj.metadata = {};
  if (!isPlainObject(obj.metadata)) throw apiErrors.badRequest('metadata must be an object');
  for (const key of ['name', 'generateName', 'namespace', 'resourceVersion', 'uid'] as const) {
    const v = obj.metadata[key];
    if (v !== undefined && v !== null && typeof v !== 'string') {
      throw apiErrors.badRequest(`metadata.${key} must be a string, got ${JSON.stringify(v)}`);
    }
    if (v === null) delete obj.metadata[key];
  }
  return obj;
}

/** The namespace of the object must agree with the URL; cluster-scoped objects carry none. */
export function settleNamespace(rt: ResourceType, obj: KubeObject, namespace: string): void {
  if (!rt.namespaced) {
    delete obj.metadata.namespace;
    return;
  }
  const own = obj.metadata.namespace;
  if (own && namespace && own !== namespace) {
    throw apiErrors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  const ns = namespace || own;
  if (!ns) throw apiErrors.badRequest('the namespace of the object is required (none in the URL nor in the object)');
  obj.metadata.namespace = ns;
}

/** Metadata a client may not set: removed on create, restored from the stored object on update. */
const SYSTEM_FIELDS = [
  'uid',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'generation',
  'resourceVersion',
  'selfLink',
  'managedFields',
] as const;

export function clearSystemMetadata(obj: KubeObject): void {
  for (const f of SYSTEM_FIELDS) delete obj.metadata[f];
}

export function restoreSystemMetadata(obj: KubeObject, old: KubeObject): void {
  for (const f of SYSTEM_FIELDS) {
    if (f === 'resourceVersion') continue;
    const meta: Record<string, unknown> = obj.metadata;
    if (old.metadata[f] === undefined) delete meta[f];
    else meta[f] = old.metadata[f];
  }
  delete obj.metadata.managedFields;
  delete obj.metadata.selfLink;
}

/** Everything but metadata (and status, when it is a subresource) differs: metadata.generation grows. */
export function specChanged(rt: ResourceType, a: KubeObject, b: KubeObject): boolean {
  const withStatus = !hasStatus(rt);
  const strip = (o: KubeObject): Record<string, unknown> => {
    const rest: Record<string, unknown> = { ...o };
    delete rest.metadata;
    if (!withStatus) delete rest.status;
    delete rest.apiVersion;
    delete rest.kind;
    return rest;
  };
  return !jsonEqual(strip(a), strip(b));
}

/** Same content apart from resourceVersion: the write is a no-op (no new resourceVersion, no event). */
export function unchanged(a: KubeObject, b: KubeObject): boolean {
  return jsonEqual(
    { ...a, metadata: { ...a.metadata, resourceVersion: undefined } },
    {
      ...b,
      metadata: { ...b.metadata, resourceVersion: undefined },
    },
  );
}

export interface SchemaOutcome {
  object: KubeObject;
  errors: FieldError[];
  warnings: string[];
}

/**
 * Custom resources: prune, default and validate the (stored-form) object with its version's schema.
 * Pruned fields fail the request under fieldValidation=Strict and become warnings under Warn.
 */
export function enforceSchema(
  rt: ResourceType,
  stored: KubeObject,
  old: KubeObject | undefined,
  fieldValidation: FieldValidation,
): SchemaOutcome {
  if (rt.schema === undefined) return { object: stored, errors: [], warnings: [] };
  const result = applySchema(rt.schema, rt.fromStorage(stored), old ? rt.fromStorage(old) : undefined);
  const object = rt.toStorage(result.object);
  const warnings: string[] = [];
  if (result.unknownFields.length > 0) {
    const list = result.unknownFields.map((f) => `unknown field "${f}"`);
    if (fieldValidation === 'Strict') {
      throw apiErrors.badRequest(
        `${rt.kind} in version "${rt.version}" cannot be handled as a ${rt.kind}: strict decoding error: ${list.join(', ')}`,
      );
    }
    if (fieldValidation === 'Warn') warnings.push(...list);
  }
  return { object, errors: result.errors, warnings };
}

/** Kind validation plus metadata checks plus schema errors → 422 Invalid when anything is wrong. */
export function validateOrThrow(
  rt: ResourceType,
  obj: KubeObject,
  old: KubeObject | undefined,
  schemaErrors: FieldError[],
): void {
  const errs: FieldError[] = [...validateObjectMeta(obj, rt.behaviour.nameErrors)];
  if (old) errs.push(...finalizerRules(obj, old));
  errs.push(...(rt.behaviour.validate?.(obj, old) ?? []));
  errs.push(...schemaErrors);
  if (errs.length > 0) throw apiErrors.invalid(rt.group, rt.kind, obj.metadata.name ?? '', errs);
}

function finalizerRules(obj: KubeObject, old: KubeObject): FieldError[] {
  if (!old.metadata.deletionTimestamp) return [];
  const before = new Set(old.metadata.finalizers ?? []);
  const added = (obj.metadata.finalizers ?? []).filter((f) => !before.has(f));
  if (added.length === 0) return [];
  return [
    fieldError.forbidden(
      'metadata.finalizers',
      `no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`,
    ),
  ];
}

/** An object being deleted whose finalizers are all gone (and whose grace period is over) leaves storage. */
export function readyForRemoval(rt: ResourceType, obj: KubeObject): boolean {
  if (!obj.metadata.deletionTimestamp) return false;
  if ((obj.metadata.finalizers ?? []).length > 0) return false;
  if ((obj.metadata.deletionGracePeriodSeconds ?? 0) > 0) return false;
  return rt.behaviour.readyToRemove?.(obj) ?? true;
}

/** Status-subresource rules: main writes keep the stored status; status writes change only status. */
export function applySubresourceRules(
  rt: ResourceType,
  incoming: KubeObject,
  old: KubeObject,
  subresource: string,
): KubeObject {
  if (subresource === 'status') {
    const next = cloneJson(old);
    if (incoming.status === undefined) delete next.status;
    else next.status = incoming.status;
    return next;
  }
  if (hasStatus(rt)) {
    if (old.status === undefined) delete incoming.status;
    else incoming.status = cloneJson(old.status);
  }
  return incoming;
}

export function admissionRequest(
  rt: ResourceType,
  operation: AdmissionOperation,
  subresource: string,
  object: KubeObject | undefined,
  oldObject: KubeObject | undefined,
  options: WriteOptions,
): AdmissionRequest {
  const meta = (object ?? oldObject)?.metadata;
  return {
    operation,
    kind: { group: rt.group, version: rt.version, kind: rt.kind },
    resource: { group: rt.group, version: rt.version, resource: rt.plural },
    subResource: subresource,
    namespace: meta?.namespace ?? '',
    name: meta?.name ?? '',
    object: object ? rt.fromStorage(object) : undefined,
    oldObject: oldObject ? rt.fromStorage(oldObject) : undefined,
    dryRun: options.dryRun,
    userAgent: options.userAgent,
  };
}

/** Run mutating admission on a stored-form object; returns the (possibly replaced) stored-form object. */
export async function mutatingAdmission(
  ctx: ApiContext,
  request: AdmissionRequest,
  rt: ResourceType,
  current: KubeObject,
): Promise<KubeObject> {
  if (ctx.admission.empty) return current;
  const result = await ctx.admission.mutate(request);
  if (!result || result === request.object) return current;
  const decoded = decodeObject(rt, result);
  return rt.toStorage(decoded);
}
