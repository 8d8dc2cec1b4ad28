// What the kernel says a process runs with, read from /proc/<pid>/status and /proc/<pid>/mountinfo: its
// capability sets, no_new_privs, seccomp mode and ids, and its mounts with their per-mount options. The in-cluster
// test reads these for the agent's and the controller's container processes (the effective settings, not the
// manifests' securityContext).

export interface ProcessSecurity {
  /** Capability sets as the hex masks of /proc/<pid>/status (CapInh, CapPrm, CapEff, CapBnd, CapAmb). */
  caps: { inheritable: bigint; permitted: bigint; effective: bigint; bounding: bigint; ambient: bigint };
  /** NoNewPrivs: 1 when execve can never gain privileges (allowPrivilegeEscalation: false). */
  noNewPrivs: number;
  /** Seccomp: 0 off, 1 strict, 2 filter (a profile such as RuntimeDefault). */
  seccomp: number;
  /** Real, effective, saved and filesystem ids. */
  uids: number[];
  gids: number[];
}

function field(status: string, name: string): string {
  const line = status.split('\n').find((l) => l.startsWith(`${name}:`));
  if (line === undefined) throw new Error(`/proc/<pid>/status has no ${name}: line`);
  return line.slice(name.length + 1).trim();
}

function ids(status: string, name: string): number[] {
  const values = field(status, name).split(/\s+/).map(Number);
  if (values.length !== 4 || values.some((v) => !Number.isInteger(v))) throw new Error(`bad ${name}: line`);
  return values;
}

function mask(status: string, name: string): bigint {
  const value = field(status, name);
  if (!/^[0-9a-f]+$/i.test(value)) throw new Error(`bad ${name}: ${value}`);
  return BigInt(`0x${value}`);
}

function integer(status: string, name: string): number {
  const value = Number(field(status, name));
  if (!Number.isInteger(value)) throw new Error(`bad ${name}: line`);
  return value;
}

/** The text of /proc/<pid>/status, parsed. */
export function parseProcStatus(status: string): ProcessSecurity {
  return {
    caps: {
      inheritable: mask(status, 'CapInh'),
      permitted: mask(status, 'CapPrm'),
      effective: mask(status, 'CapEff'),
      bounding: mask(status, 'CapBnd'),
      ambient: mask(status, 'CapAmb'),
    },
    noNewPrivs: integer(status, 'NoNewPrivs'),
    seccomp: integer(status, 'Seccomp'),
    uids: ids(status, 'Uid'),
    gids: ids(status, 'Gid'),
  };
}

export interface Mount {
  /** Where it is mounted, as the process sees it (octal escapes such as \040 decoded). */
  mountPoint: string;
  /** The per-mount options (field 6), e.g. ["ro", "nosuid", "relatime"]. */
  options: string[];
  fsType: string;
  /** The path within the source filesystem that is mounted (field 4): for a bind mount, the host directory. */
  root: string;
}

const unescape = (path: string): string =>
  path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));

/** The text of /proc/<pid>/mountinfo, parsed (proc(5)); in mount order, so the last entry at a path is on top. */
export function parseMountInfo(text: string): Mount[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [before, after] = line.split(' - ');
      const fields = (before ?? '').split(' ');
      const [fsType] = (after ?? '').split(' ');
      if (fields.length < 6 || after === undefined || !fsType) throw new Error(`bad mountinfo line: ${line}`);
      return {
        root: unescape(fields[3]!),
        mountPoint: unescape(fields[4]!),
        options: fields[5]!.split(','),
        fsType,
      };
    });
}

/** The mount on top at `path` (the one the process sees there); throws if nothing is mounted there. */
export function mountAt(mounts: Mount[], path: string): Mount {
  const found = mounts.filter((m) => m.mountPoint === path).at(-1);
  if (!found) throw new Error(`nothing is mounted at ${path}: ${mounts.map((m) => m.mountPoint).join(' ')}`);
  return found;
}

export const isReadOnly = (mount: Mount): boolean => mount.options.includes('ro');

/**
 * A Node script to run inside a container (CRI ExecSync, as the container's own user, capabilities and seccomp):
 * for each mount point in its /proc/self/mountinfo, whether it may write there (access(2) W_OK: "W", else the error
 * code, EROFS for a read-only mount); and lstat of each path given as an argument. Prints one JSON object.
 */
export const WRITE_ACCESS_PROBE = `
const fs = require('fs');
const points = [...new Set(fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\\n')
  .map((l) => l.split(' ')[4]).filter(Boolean)
  .map((p) => p.replace(/\\\\([0-7]{3})/g, (_, o) => String.fromCharCode(parseInt(o, 8)))))];
const access = {};
for (const p of points) {
  try { fs.accessSync(p, fs.constants.W_OK); access[p] = 'W'; } catch (e) { access[p] = e.code; }
}
const stats = {};
for (const p of process.argv.slice(1)) {
  try { const s = fs.lstatSync(p); stats[p] = { uid: s.uid, gid: s.gid, mode: s.mode }; } catch (e) { stats[p] = e.code; }
}
console.log(JSON.stringify({ uid: process.getuid(), access, stats }));
`;

export interface WriteAccess {
  uid: number;
  /** Mount point → "W" (writable) or the error access(2) gave (EROFS, EACCES, ...). */
  access: Record<string, string>;
  stats: Record<string, { uid: number; gid: number; mode: number } | string>;
}

/** The mount points a probe found writable. */
export const writablePoints = (probe: WriteAccess): string[] =>
  Object.entries(probe.access)
    .filter(([, result]) => result === 'W')
    .map(([path]) => path);
