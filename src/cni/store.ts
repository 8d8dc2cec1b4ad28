// The on-disk store of one network: <dataDir>/<network>/state.json plus the lock directory lock.d/.
// Writes are crash-safe: the new state goes to state.json.tmp, is fsynced, renamed over state.json, and the
// directory is fsynced; a crash leaves the old or the new file, never a mix. Only a lock holder writes.
// Directories are 0700, files 0600 (the store names pods and sandboxes of the node).
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { makeDirectories } from './dirs.js';
import { CniCode, CniError, onPath } from './errors.js';
import { acquire, acquireSync, GenerationLock, LockTimeout, type LockHandle } from './lock.js';
import { emptyState, stateProblem, type NetworkState } from './state.js';

export const LOCK_TIMEOUT_MS = 20_000;

export interface StorePaths {
  dir: string;
  state: string;
  temp: string;
  lockDir: string;
}

export function storePaths(dataDir: string, network: string): StorePaths {
  const dir = join(dataDir, network);
  return { dir, state: join(dir, 'state.json'), temp: join(dir, 'state.json.tmp'), lockDir: join(dir, 'lock.d') };
}

/** Read the state (no lock needed to read: the file is always whole). Missing = empty. */
export function readState(paths: StorePaths): NetworkState {
  let text: string;
  try {
    text = onPath(paths.state, () => readFileSync(paths.state, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return emptyState();
    throw err;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  const problem = value === undefined ? 'not JSON' : stateProblem(value);
  if (problem) {
    throw new CniError(
      CniCode.corruptStore,
      `the IPAM store ${paths.state} is unreadable: ${problem}`,
      'fix or move the file',
    );
  }
  return value as NetworkState;
}

/** Replace the state atomically and durably. Call only while holding the lock. */
export function writeState(paths: StorePaths, state: NetworkState): void {
  const fd = openSync(paths.temp, 'w', 0o600);
  try {
    onPath(paths.temp, () => {
      writeSync(fd, JSON.stringify(state));
      fsyncSync(fd);
    });
  } finally {
    closeSync(fd);
  }
  renameSync(paths.temp, paths.state);
  const dirFd = openSync(paths.dir, 'r');
  try {
    onPath(paths.dir, () => fsyncSync(dirFd));
  } finally {
    closeSync(dirFd);
  }
}

export function ensureStoreDir(paths: StorePaths): void {
  makeDirectories(paths.dir, 0o700);
}

/** The state's `change` and whether it changed the state. */
type StateChange<T> = (state: NetworkState) => { changed: boolean; value: T };

/**
 * Run `change` on the state under the lock (blocking: the plugin). `change` returns whether it changed the state;
 * the state is written only then.
 */
export function updateSync<T>(paths: StorePaths, change: StateChange<T>): T {
  ensureStoreDir(paths);
  const lock = new GenerationLock(paths.lockDir);
  let handle;
  try {
    handle = acquireSync(lock, LOCK_TIMEOUT_MS);
  } catch (err) {
    if (err instanceof LockTimeout) throw new CniError(CniCode.tryAgainLater, err.message);
    throw err;
  }
  return changeHeld(paths, lock, handle, change);
}

/** The same without blocking the event loop (the agent). */
export async function update<T>(
  paths: StorePaths,
  sleep: (ms: number) => Promise<void>,
  change: StateChange<T>,
): Promise<T> {
  ensureStoreDir(paths);
  const lock = new GenerationLock(paths.lockDir);
  return changeHeld(paths, lock, await acquire(lock, LOCK_TIMEOUT_MS, sleep), change);
}

/** Run `change` on the state while holding `handle`, write it when changed, and release the lock. */
function changeHeld<T>(paths: StorePaths, lock: GenerationLock, handle: LockHandle, change: StateChange<T>): T {
  try {
    const state = readState(paths);
    const { changed, value } = change(state);
    if (changed) writeState(paths, state);
    return value;
  } finally {
    lock.release(handle);
  }
}
