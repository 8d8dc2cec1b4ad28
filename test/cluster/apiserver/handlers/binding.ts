// POST pods/NAME/binding: assigns an unbound pod to a node (what a scheduler does).
import type { ApiContext } from '../context.js';
import { ApiError, apiErrors } from '../errors.js';
import { isPlainObject, cloneJson, formatTimestamp } from '../types.js';

const PODS = 'core/pods';

function bindingConflict(name: string, why: string): ApiError {
  return new ApiError(409, 'Conflict', `Operation cannot be fulfilled on pods/binding "${name}": ${why}`, {
    name,
    kind: 'pods/binding',
  });
}

export function bindPod(ctx: ApiContext, namespace: string, name: string, body: unknown): void {
  if (!isPlainObject(body)) throw apiErrors.badRequest('the request body must be a Binding');
  const target = body.target;
  const nodeName = isPlainObject(target) ? target.name : undefined;
  if (typeof nodeName !== 'string' || nodeName === '') {
    throw apiErrors.invalid('', 'Binding', name, [
      { field: 'target.name', type: 'FieldValueRequired', message: 'Required value' },
    ]);
  }
  const current = ctx.store.get(PODS, namespace, name);
  if (!current) throw apiErrors.notFound({ group: '', resource: 'pods' }, name);
  if (current.metadata.deletionTimestamp) {
    throw bindingConflict(name, `pod ${name} is being deleted, cannot be assigned to a host`);
  }
  const spec = isPlainObject(current.spec) ? current.spec : {};
  if (typeof spec.nodeName === 'string' && spec.nodeName !== '') {
    throw bindingConflict(name, `pod ${name} is already assigned to node "${spec.nodeName}"`);
  }
  const next = cloneJson(current);
  next.spec = { ...spec, nodeName };
  const annotations = isPlainObject(body.metadata) ? body.metadata.annotations : undefined;
  if (isPlainObject(annotations)) {
    next.metadata.annotations = { ...next.metadata.annotations, ...(annotations as Record<string, string>) };
  }
  const status = isPlainObject(next.status) ? next.status : {};
  const conditions = (Array.isArray(status.conditions) ? status.conditions : []).filter(
    (c) => !isPlainObject(c) || c.type !== 'PodScheduled',
  );
  conditions.push({
    type: 'PodScheduled',
    status: 'True',
    lastProbeTime: null,
    lastTransitionTime: formatTimestamp(ctx.clock.now()),
  });
  next.status = { ...status, conditions };
  ctx.store.update(PODS, next, current);
}
