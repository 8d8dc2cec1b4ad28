// Which objects a list or watch selects: namespace, labelSelector and fieldSelector together.
import { apiErrors } from './errors.js';
import type { ResourceType } from './resource-types.js';
import { parseFieldSelector, parseLabelSelector } from './selectors.js';
import type { KubeObject } from './types.js';

export interface ObjectFilter {
  /** '' = all namespaces (or a cluster-scoped resource). */
  namespace: string;
  /** True when the filter selects by more than the namespace (watch then needs enter/leave handling). */
  selective: boolean;
  matches(obj: KubeObject): boolean;
}

/** Field value of a stored object for field selectors; metadata.name/namespace work for every kind. */
export function fieldValue(rt: ResourceType, obj: KubeObject, field: string): string | undefined {
  if (field === 'metadata.name') return obj.metadata.name;
  if (field === 'metadata.namespace') return obj.metadata.namespace ?? '';
  return rt.behaviour.fieldSelectors[field]?.(obj);
}

export function buildFilter(
  rt: ResourceType,
  namespace: string,
  labelSelector: string | null,
  fieldSelector: string | null,
  extraName?: string,
): ObjectFilter {
  const labels = parseLabelSelector(labelSelector ?? '');
  const fields = parseFieldSelector(fieldSelector ?? '');
  for (const r of fields.requirements) {
    if (r.field !== 'metadata.name' && r.field !== 'metadata.namespace' && !rt.behaviour.fieldSelectors[r.field]) {
      throw apiErrors.badRequest(`field label not supported: ${r.field}`);
    }
  }
  if (extraName !== undefined) fields.requirements.push({ field: 'metadata.name', op: 'eq', value: extraName });
  const ns = rt.namespaced ? namespace : '';
  const selective = labels.requirements.length > 0 || fields.requirements.length > 0;
  return {
    namespace: ns,
    selective,
    matches: (obj) =>
      (ns === '' || obj.metadata.namespace === ns) &&
      labels.matches(obj.metadata.labels) &&
      fields.requirements.every((r) => {
        const actual = fieldValue(rt, obj, r.field) ?? '';
        return r.op === 'eq' ? actual === r.value : actual !== r.value;
      }),
  };
}
