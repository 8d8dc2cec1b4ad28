// State kept across emulator restarts (dataFile): every object and the resourceVersion counter, written
// atomically on stop. Watch history is not kept: after a process restart, resuming from an older
// resourceVersion gets 410 Expired and clients relist, as after an etcd compaction.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { ObjectStore } from './store.js';
import { isPlainObject, type KubeObject } from './types.js';

export interface Snapshot {
  version: 1;
  resourceVersion: number;
  objects: { storageKey: string; object: KubeObject }[];
}

export function takeSnapshot(store: ObjectStore): Snapshot {
  const objects: Snapshot['objects'] = [];
  for (const storageKey of store.storageKeys()) {
    for (const object of store.list(storageKey)) objects.push({ storageKey, object });
  }
  return { version: 1, resourceVersion: store.currentRv(), objects };
}

export async function saveSnapshot(path: string, snapshot: Snapshot): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(temp, JSON.stringify(snapshot));
  await rename(temp, path);
}

/** The snapshot in `path`, undefined when there is none; a damaged file is an error naming the problem. */
export async function loadSnapshot(path: string): Promise<Snapshot | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`API emulator data file ${path} is not valid JSON: ${(err as Error).message}`);
  }
  if (
    !isPlainObject(parsed) ||
    parsed.version !== 1 ||
    typeof parsed.resourceVersion !== 'number' ||
    !Array.isArray(parsed.objects)
  ) {
    throw new Error(`API emulator data file ${path} is not a version 1 snapshot ({version, resourceVersion, objects})`);
  }
  for (const [i, entry] of parsed.objects.entries()) {
    if (!isPlainObject(entry) || typeof entry.storageKey !== 'string' || !isPlainObject(entry.object)) {
      throw new Error(`API emulator data file ${path}: objects[${i}] is not {storageKey, object}`);
    }
    if (!isPlainObject(entry.object.metadata) || typeof entry.object.metadata.name !== 'string') {
      throw new Error(`API emulator data file ${path}: objects[${i}] has no metadata.name`);
    }
  }
  return parsed as unknown as Snapshot;
}
