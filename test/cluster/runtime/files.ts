// Small file helpers for generated configs: write only when the content changed (so a daemon is restarted only
// for a real change) and always atomically (a reader never sees half a file).
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

export async function readTextIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

export async function writeAtomic(path: string, content: string, mode = 0o644): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(temp, content, { mode });
  await chmod(temp, mode);
  await rename(temp, path);
}

/** Write `content` unless the file already holds exactly that; returns true when it wrote. */
export async function writeIfChanged(path: string, content: string, mode = 0o644): Promise<boolean> {
  if ((await readTextIfExists(path)) === content) return false;
  await writeAtomic(path, content, mode);
  return true;
}

/** The last `lines` lines of a text file ('' when missing), for error messages that point at a daemon's log. */
export async function tailOfFile(path: string, lines = 5): Promise<string> {
  const text = (await readTextIfExists(path)) ?? '';
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}
