// Create a directory and its missing parents with a bounded number of system calls. Node's own
// `mkdirSync(path, {recursive: true})` loops forever when a parent exists but mkdir of the child still answers ENOENT
// (anything under /proc): it reads ENOENT as "the parent is missing", finds the parent there (EEXIST), and tries the
// child again, at 100% CPU, never returning. Here every level is tried at most twice: ENOENT after the parent is in
// place is final.
import { mkdirSync, statSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { dirname } from 'node:path';
import { isErrno } from './errors.js';

function notADirectory(path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${path}'`), {
    code: 'ENOTDIR',
    errno: -osConstants.errno.ENOTDIR,
    syscall: 'mkdir',
    path,
  });
}

/** mkdir once: undefined when it was created or is a directory already, the ENOENT error when it could not be. */
function mkdirOnce(path: string, mode: number): NodeJS.ErrnoException | undefined {
  try {
    mkdirSync(path, { mode });
    return undefined;
  } catch (err) {
    if (!isErrno(err)) throw err;
    if (err.code === 'ENOENT') return err;
    if (err.code !== 'EEXIST') throw err;
  }
  if (!statSync(path).isDirectory()) throw notADirectory(path);
  return undefined;
}

/** `mkdir -p` with `mode` for every directory it creates; at most two mkdir calls per path component. */
export function makeDirectories(path: string, mode: number): void {
  const missing = mkdirOnce(path, mode);
  if (!missing) return;
  const parent = dirname(path);
  if (parent === path) throw missing;
  makeDirectories(parent, mode);
  // ENOENT again with the parent in place is final: the parent cannot hold entries (/proc, a dangling link)
  const still = mkdirOnce(path, mode);
  if (still) throw still;
}
