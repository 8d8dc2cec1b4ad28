// Shapes of the Kubernetes objects the API emulator handles. Objects are plain JSON; only metadata is typed.

import type { ObjectMeta as WireObjectMeta, OwnerReference } from '../../../src/kube/object.js';

export type { OwnerReference };

export type JsonObject = Record<string, unknown>;

// Metadata as the project's Kubernetes layer types it, open to the fields the emulator keeps but does not model.
export interface ObjectMeta extends WireObjectMeta {
  managedFields?: unknown[];
  [key: string]: unknown;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

export function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A deep copy of JSON data (objects here never hold anything else). */
export function cloneJson<T>(value: T): T {
  return structuredClone(value);
}

/** Structural equality of JSON values; key order does not matter. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const ak = Object.keys(a).filter((k) => a[k] !== undefined);
    const bk = Object.keys(b).filter((k) => b[k] !== undefined);
    if (ak.length !== bk.length) return false;
    for (const k of ak) if (!jsonEqual(a[k], b[k])) return false;
    return true;
  }
  return false;
}

/** Kubernetes timestamps are RFC 3339 with whole seconds. */
export function formatTimestamp(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** `apiVersion` for a group and version (`v1` for the core group). */
export function apiVersionOf(group: string, version: string): string {
  return group === '' ? version : `${group}/${version}`;
}

export function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}
