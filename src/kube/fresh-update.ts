// Writes that never clobber someone else's edit (OpenKruise #1517): read the object fresh, apply a mutation to it,
// PUT it back with that resourceVersion; on 409 Conflict read again and re-apply. The mutation decides from what it
// is given and returns false when nothing needs to change (then nothing is sent). A caller whose cache is known to
// be current may start from it (no first read); one that expects contention may space the retries after the first.
import type { KubeClient } from './client.js';
import { isConflict, isNotFound } from './errors.js';
import type { KubeObject } from './object.js';
import type { ResourceType } from './resource.js';
import { backoffDelay, type BackoffPolicy } from '../util/backoff.js';
import type { Clock } from '../util/clock.js';

export interface FreshUpdateResult<T> {
  /** The object as stored after the write (or as read, when unchanged); undefined when it does not exist. */
  object?: T;
  written: boolean;
  /** 409 Conflicts met on the way. */
  conflicts: number;
}

export interface FreshUpdateOptions<T> {
  /** Start from this copy instead of a read (a cache known to hold the latest version); later tries read fresh. */
  start?: T | undefined;
  /** The first conflict is redone at once; later ones after this backoff on the clock (default: all at once). */
  conflictBackoff?: { clock: Clock; policy: BackoffPolicy } | undefined;
}

/** Reads and writes before a run of conflicts is given up (thrown). */
const ATTEMPTS = 5;

export async function updateFromFresh<T extends KubeObject>(
  client: KubeClient,
  rt: ResourceType,
  name: string,
  namespace: string | undefined,
  mutate: (draft: T) => boolean,
  options: FreshUpdateOptions<T> = {},
): Promise<FreshUpdateResult<T>> {
  let current: T | undefined = options.start;
  let conflicts = 0;
  for (let attempt = 1; ; attempt++) {
    if (!current) {
      try {
        current = await client.get<T>(rt, name, { namespace });
      } catch (err) {
        if (isNotFound(err)) return { written: false, conflicts };
        throw err;
      }
    }
    const draft = structuredClone(current);
    if (!mutate(draft)) return { object: current, written: false, conflicts };
    try {
      const stored = await client.update<T>(rt, draft, { namespace });
      return { object: stored, written: true, conflicts };
    } catch (err) {
      if (isNotFound(err)) return { written: false, conflicts };
      if (!isConflict(err) || attempt >= ATTEMPTS) throw err;
    }
    conflicts++;
    const backoff = options.conflictBackoff;
    if (backoff && conflicts > 1) await backoff.clock.sleep(backoffDelay(backoff.policy, conflicts - 1));
    current = undefined;
  }
}
