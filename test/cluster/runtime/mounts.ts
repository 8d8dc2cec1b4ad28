// Mounts the runtime leaves under a cluster directory (container rootfs overlays, sandbox shm, netns bind mounts):
// listed from /proc/self/mountinfo and unmounted deepest first.
import { readFile } from 'node:fs/promises';
import { run } from './exec.js';

/** Undo mountinfo's octal escapes (\040 space, \011 tab, \012 newline, \134 backslash). */
function unescapeMountPath(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

/** Mount points at or below `dir`, deepest first. */
export async function mountsUnder(dir: string): Promise<string[]> {
  const info = await readFile('/proc/self/mountinfo', 'utf8');
  const prefix = dir.endsWith('/') ? dir : `${dir}/`;
  const points = info
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((field): field is string => field !== undefined)
    .map(unescapeMountPath)
    .filter((point) => point === dir || point.startsWith(prefix));
  return [...new Set(points)].sort((a, b) => b.length - a.length || b.localeCompare(a));
}

/** Unmount everything at or below `dir` (lazily when busy); returns the mount points still left. */
export async function unmountAllUnder(dir: string): Promise<string[]> {
  for (let round = 0; round < 3; round++) {
    const points = await mountsUnder(dir);
    if (points.length === 0) return [];
    for (const point of points) {
      if ((await run('umount', [point])).code !== 0) await run('umount', ['-l', point]);
    }
  }
  return mountsUnder(dir);
}
