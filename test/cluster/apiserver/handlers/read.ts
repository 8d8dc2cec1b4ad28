// get and list. Lists are served from memory (every resourceVersion is "now"), sorted by namespace/name,
// with limit/continue paging and metadata.resourceVersion set to the current global resourceVersion.
import type { ApiContext } from '../context.js';
import { apiErrors } from '../errors.js';
import type { ObjectFilter } from '../object-filter.js';
import type { ResourceType } from '../resource-types.js';
import type { KubeObject } from '../types.js';
import { qualified } from './object-prep.js';

export function getObject(ctx: ApiContext, rt: ResourceType, namespace: string, name: string): KubeObject {
  const obj = ctx.store.get(rt.storageKey, rt.namespaced ? namespace : '', name);
  if (!obj) throw apiErrors.notFound(qualified(rt), name);
  return rt.fromStorage(obj);
}

export interface ListResult {
  /** Stored-form objects (convert with rt.fromStorage). */
  items: KubeObject[];
  resourceVersion: string;
  continueToken?: string;
  remainingItemCount?: number;
}

function sortKey(obj: KubeObject): string {
  return `${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''}`;
}

interface ContinueToken {
  rv: number;
  start: string;
}

function decodeContinue(token: string): ContinueToken {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as unknown;
    if (
      typeof parsed === 'object' &&
      parsed !== null &&
      typeof (parsed as ContinueToken).rv === 'number' &&
      typeof (parsed as ContinueToken).start === 'string'
    ) {
      return parsed as ContinueToken;
    }
  } catch {
    // fall through
  }
  throw apiErrors.badRequest(
    'continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)',
  );
}

export function parseLimit(value: string | null): number | undefined {
  if (value === null || value === '') return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw apiErrors.badRequest(`limit must be a non-negative integer, got ${value}`);
  return n === 0 ? undefined : n;
}

export function listObjects(
  ctx: ApiContext,
  rt: ResourceType,
  filter: ObjectFilter,
  limit: number | undefined,
  continueToken: string | null,
): ListResult {
  const rv = ctx.store.currentRv();
  const start = continueToken ? decodeContinue(continueToken).start : undefined;
  const source = ctx.store.list(rt.storageKey, filter.namespace === '' ? undefined : filter.namespace);
  const keyed: [string, KubeObject][] = [];
  for (const obj of source) {
    if (!filter.matches(obj)) continue;
    const key = sortKey(obj);
    if (start !== undefined && key <= start) continue;
    keyed.push([key, obj]);
  }
  keyed.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const result: ListResult = { items: [], resourceVersion: String(rv) };
  const page = limit !== undefined && keyed.length > limit ? keyed.slice(0, limit) : keyed;
  result.items = page.map(([, o]) => o);
  if (page.length < keyed.length) {
    const last = page[page.length - 1]![0];
    result.continueToken = Buffer.from(JSON.stringify({ rv, start: last })).toString('base64url');
    result.remainingItemCount = keyed.length - page.length;
  }
  return result;
}
