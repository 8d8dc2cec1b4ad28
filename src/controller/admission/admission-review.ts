// admission.k8s.io/v1 AdmissionReview as the API server sends it and the answer it expects, a denial made of
// field errors, plus a JSON patch (RFC 6902) from the object as sent to the object as a mutating handler left it.
import { formatFieldErrors, type FieldError } from '../../api/field-errors.js';
import type { KubeObject } from '../../kube/object.js';
import { isRecord } from '../../util/is-record.js';

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

export interface AdmissionRequest {
  uid: string;
  kind: GroupVersionKind;
  resource: GroupVersionResource;
  subResource?: string;
  name?: string;
  namespace?: string;
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  object?: KubeObject | null;
  oldObject?: KubeObject | null;
  dryRun?: boolean;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: { code?: number; message?: string; reason?: string };
  patchType?: 'JSONPatch';
  /** base64 of the JSON patch. */
  patch?: string;
  warnings?: string[];
}

export interface AdmissionReview {
  apiVersion: 'admission.k8s.io/v1';
  kind: 'AdmissionReview';
  request?: AdmissionRequest;
  response?: AdmissionResponse;
}

/** What a handler decides: allow (optionally with a changed object), or deny with a message and code. */
export type AdmissionDecision =
  { allowed: true; object?: KubeObject; warnings?: string[] } | { allowed: false; code: number; message: string };

export type AdmissionHandler = (request: AdmissionRequest) => AdmissionDecision | Promise<AdmissionDecision>;

/**
 * Field errors → a denial: 403 when the change is forbidden (immutable field), else 400; the message names each
 * field with the value given and the rule, as kube prints field errors (`spec.a: Invalid value: -1: must be ...`).
 */
export function denyFor(errors: readonly FieldError[]): AdmissionDecision {
  const forbidden = errors.some((e) => e.type === 'FieldValueForbidden');
  return { allowed: false, code: forbidden ? 403 : 400, message: formatFieldErrors(errors) };
}

export type JsonPatchOperation =
  { op: 'add' | 'replace'; path: string; value: unknown } | { op: 'remove'; path: string };

function pointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** A JSON patch turning `from` into `to`: objects compared key by key, arrays and scalars replaced whole. */
export function jsonPatch(from: unknown, to: unknown, path = ''): JsonPatchOperation[] {
  if (isRecord(from) && isRecord(to)) {
    const ops: JsonPatchOperation[] = [];
    for (const key of Object.keys(from)) {
      // own keys only: a key named like a prototype member ("toString", "constructor") is data too
      if (!Object.hasOwn(to, key) || to[key] === undefined) ops.push({ op: 'remove', path: `${path}/${pointer(key)}` });
    }
    for (const [key, value] of Object.entries(to)) {
      if (value === undefined) continue;
      const here = `${path}/${pointer(key)}`;
      if (!Object.hasOwn(from, key) || from[key] === undefined) ops.push({ op: 'add', path: here, value });
      else ops.push(...jsonPatch(from[key], value, here));
    }
    return ops;
  }
  if (JSON.stringify(from) === JSON.stringify(to)) return [];
  return [{ op: 'replace', path: path || '', value: to }];
}
