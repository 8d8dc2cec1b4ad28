// Pod cgroups of a cluster. Pods get the cgroup parent POD_CGROUP_PARENT (/kd-<id>, cgroupfs driver), so every
// pod cgroup of one cluster lives below that name in each hierarchy under /sys/fs/cgroup (v1 controllers and the
// unified v2 tree of a hybrid setup). runc removes container cgroups; the pod-level parents stay behind (kubelet
// would remove them), so down kills what is left in them and removes the directories, deepest first.
import { readdir, readFile, rmdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { signal } from './processes.js';
import { waitUntil } from './wait-until.js';

const CGROUP_ROOT = '/sys/fs/cgroup';

/** Every hierarchy directory under /sys/fs/cgroup (cpu, memory, ..., unified, systemd), or the root itself on v2. */
async function hierarchies(): Promise<string[]> {
  const entries = await readdir(CGROUP_ROOT, { withFileTypes: true }).catch(() => []);
  const dirs = entries.filter((e) => e.isDirectory()).map((e) => join(CGROUP_ROOT, e.name));
  const roots = [CGROUP_ROOT, ...dirs];
  const withProcs: string[] = [];
  for (const dir of roots) {
    if (await stat(join(dir, 'cgroup.procs')).catch(() => undefined)) withProcs.push(dir);
  }
  return withProcs;
}

/** `dir` and every cgroup directory below it, deepest first. */
async function cgroupTree(dir: string): Promise<string[]> {
  const children = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const below: string[] = [];
  for (const child of children) if (child.isDirectory()) below.push(...(await cgroupTree(join(dir, child.name))));
  return [...below, dir];
}

async function pidsIn(dir: string): Promise<number[]> {
  const text = await readFile(join(dir, 'cgroup.procs'), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map(Number)
    .filter((pid) => Number.isSafeInteger(pid) && pid > 1 && pid !== process.pid);
}

/**
 * Kill every process in the cgroup `relativePath` (e.g. "/kd-1a2b3c4d") and below, in every hierarchy, then remove
 * the directories. Returns the directories that could not be removed.
 */
export async function removeCgroupTree(relativePath: string): Promise<string[]> {
  const clean = relativePath.replace(/^\/+/, '');
  if (clean === '' || clean.split('/').includes('..')) throw new Error(`refusing cgroup path ${relativePath}`);
  const left: string[] = [];
  for (const hierarchy of await hierarchies()) {
    const top = join(hierarchy, clean);
    if (!(await stat(top).catch(() => undefined))) continue;
    const tree = await cgroupTree(top);
    for (const dir of tree) for (const pid of await pidsIn(dir)) signal(pid, 'SIGKILL');
    for (const dir of tree) {
      const removed = await waitUntil(
        async () => {
          try {
            await rmdir(dir);
            return true;
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code === 'ENOENT') return true;
            for (const pid of await pidsIn(dir)) signal(pid, 'SIGKILL');
            return false;
          }
        },
        { timeoutMs: 5_000, what: `cgroup ${dir} to be removable` },
      ).then(
        () => true,
        () => false,
      );
      if (!removed) left.push(dir);
    }
  }
  return left;
}
