// Writes that never clobber someone else's edit (OpenKruise #1517): read the object fresh, apply a mutation to it,
// PUT it back with that resourceVersion; on 409 Conflict read again and re-apply. The mutation decides from what it
// is given and returns false when nothing needs to change (then nothing is sent).
import type { KubeClient } from './client.js';
import { isConflict, isNotFound } from './errors.js';
import type { KubeObject } from './object.js';
import type { ResourceType } from './resource.js';

export interface FreshUpdateResult<T> {
  /** The object as stored after the write (or as read, when unchanged); undefined when it does not exist. */
  object?: T;
  written: boolean;
}

/** Reads and writes before a run of conflicts is given up (thrown). */
const ATTEMPTS = 5;

export async function updateFromFresh<T extends KubeObject>(
  client: KubeClient,
  rt: ResourceType,
  name: string,
  namespace: string | undefined,
  mutate: (draft: T) => boolean,
): Promise<FreshUpdateResult<T>> {
  for (let attempt = 1; ; attempt++) {
    let current: T;
    try {
      current = await client.get<T>(rt, name, { namespace });
    } catch (err) {
      if (isNotFound(err)) return { written: false };
      throw err;
    }
    const draft = structuredClone(current);
    if (!mutate(draft)) return { object: current, written: false };
    try {
      const stored = await client.update<T>(rt, draft, { namespace });
      return { object: stored, written: true };
    } catch (err) {
      if (isNotFound(err)) return { written: false };
      if (!isConflict(err) || attempt >= ATTEMPTS) throw err;
    }
  }
}
