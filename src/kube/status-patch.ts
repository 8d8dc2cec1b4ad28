// Status writes that are cheap for the API server: a minimal merge patch of .status, nothing sent when the status
// did not change, and on a 409 Conflict a fresh read and a second try of the same mutation.
import type { Logger } from 'pino';
import { silentLogger } from '../observability/logger.js';
import type { KubeClient } from './client.js';
import { isConflict } from './errors.js';
import { createMergePatch, toJson } from './merge-patch.js';
import type { KubeObject } from './object.js';
import type { ResourceType } from './resource.js';

export interface PatchStatusOptions {
  /** Tries in all (first + retries after conflicts); default 5. */
  attempts?: number;
  logger?: Logger;
}

export interface PatchStatusResult<T> {
  object: T;
  /** False when the status was unchanged and nothing was sent. */
  patched: boolean;
  attempts: number;
}

export type StatusObject = KubeObject & { status?: unknown };

/**
 * Apply `mutate` to a copy of `obj`'s status and merge-patch the difference. `mutate` gets a deep copy of the
 * object (edit its `.status`, or return a new status) and may run again on a fresher copy after a conflict,
 * so it must derive the status from what it is given.
 */
export async function patchStatus<T extends StatusObject>(
  client: KubeClient,
  rt: ResourceType,
  obj: T,
  mutate: (draft: T) => T['status'] | void,
  options: PatchStatusOptions = {},
): Promise<PatchStatusResult<T>> {
  const attempts = options.attempts ?? 5;
  const logger = options.logger ?? silentLogger;
  const name = obj.metadata?.name;
  if (!name) throw new Error(`patchStatus ${rt.resource}: the object has no metadata.name`);
  const namespace = rt.namespaced ? obj.metadata?.namespace : undefined;
  let current = obj;
  for (let attempt = 1; ; attempt++) {
    const draft = structuredClone(current);
    const returned = mutate(draft);
    const desiredStatus = returned === undefined ? draft.status : returned;
    const statusPatch = createMergePatch(
      { status: toJson(current.status ?? {}) },
      { status: toJson(desiredStatus ?? {}) },
    );
    if (statusPatch === undefined) return { object: current, patched: false, attempts: attempt };
    const body: Record<string, unknown> = { ...(statusPatch as Record<string, unknown>) };
    // with the resourceVersion, a concurrent write answers 409 and the mutation is re-applied to the fresh object
    if (current.metadata?.resourceVersion) body.metadata = { resourceVersion: current.metadata.resourceVersion };
    try {
      const object = await client.patch<T>(rt, name, body, { type: 'merge', namespace, subresource: 'status' });
      return { object, patched: true, attempts: attempt };
    } catch (err) {
      if (!isConflict(err) || attempt >= attempts) throw err;
      logger.debug({ resource: rt.resource, name, attempt }, 'status patch conflict; retrying from a fresh read');
      current = await client.get<T>(rt, name, { namespace });
    }
  }
}
