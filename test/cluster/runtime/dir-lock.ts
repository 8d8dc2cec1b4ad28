// One up/down at a time per cluster directory (a developer's `npm run cluster -- up` and a test run may overlap).
// The lock is a file created exclusively, holding the owner's PID; a lock whose owner is dead is taken over.
import { open, readFile, rm } from 'node:fs/promises';
import { isAlive } from './processes.js';
import { waitUntil } from './wait-until.js';

async function tryAcquire(path: string): Promise<boolean> {
  try {
    const handle = await open(path, 'wx');
    await handle.writeFile(`${process.pid}\n`);
    await handle.close();
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const owner = Number.parseInt(await readFile(path, 'utf8').catch(() => ''), 10);
  if (!Number.isSafeInteger(owner) || (owner !== process.pid && !isAlive(owner))) {
    await rm(path, { force: true }); // stale: its owner is gone
  }
  return false;
}

/** Run `fn` holding the lock file `path`; waits up to `timeoutMs` for another holder to finish. */
export async function withDirLock<T>(path: string, timeoutMs: number, fn: () => Promise<T>): Promise<T> {
  await waitUntil(() => tryAcquire(path), {
    timeoutMs,
    intervalMs: 100,
    what: `the cluster lock ${path} (another up/down is running on this directory)`,
  });
  try {
    return await fn();
  } finally {
    await rm(path, { force: true });
  }
}
