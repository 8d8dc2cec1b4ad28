// Daemons of the local cluster (registries, containerd) run detached and are tracked by PID files.
// A PID is ours only if its command line still names our config file (PIDs are recycled), and a zombie is dead
// (PID 1 on these machines reaps orphans only every ~2 s, so kill(pid, 0) alone would say "alive").
import { spawn } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { waitUntil } from './wait-until.js';

/** Process state letter from /proc/PID/stat (R, S, D, Z, ...), or undefined when there is no such process. */
export function processState(pid: number): string | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // "pid (comm) S ..." - comm may contain spaces and parentheses, so look after the last ')'.
  const rest = stat.slice(stat.lastIndexOf(')') + 2);
  return rest.charAt(0) || undefined;
}

export function isAlive(pid: number): boolean {
  const state = processState(pid);
  return state !== undefined && state !== 'Z' && state !== 'X';
}

/** The command line of a process as its arguments ([] when gone or unreadable). */
export function commandLine(pid: number): string[] {
  try {
    const raw = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return raw.split('\0').filter((part) => part !== '');
  } catch {
    return [];
  }
}

/** Alive and its command line contains `marker` as one argument or inside one. */
export function isOurProcess(pid: number, marker: string): boolean {
  return isAlive(pid) && commandLine(pid).some((arg) => arg.includes(marker));
}

export async function readPidFile(path: string): Promise<number | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
  const pid = Number.parseInt(text.trim(), 10);
  return Number.isSafeInteger(pid) && pid > 1 ? pid : undefined;
}

/** The PID recorded in `pidFile` if that process is alive and is ours (its command line contains `marker`). */
export async function runningPid(pidFile: string, marker: string): Promise<number | undefined> {
  const pid = await readPidFile(pidFile);
  return pid !== undefined && isOurProcess(pid, marker) ? pid : undefined;
}

export interface DaemonSpec {
  command: string;
  args: string[];
  /** stdout and stderr are appended here. */
  logFile: string;
  pidFile: string;
  env?: Record<string, string> | undefined;
}

/** Start a daemon in its own session, detached from this process (it outlives us), and record its PID. */
export async function startDaemon(spec: DaemonSpec): Promise<number> {
  const log = openSync(spec.logFile, 'a');
  try {
    const child = spawn(spec.command, spec.args, {
      detached: true,
      stdio: ['ignore', log, log],
      env: spec.env ? { ...process.env, ...spec.env } : process.env,
    });
    const pid = await new Promise<number>((resolve, reject) => {
      child.once('error', reject);
      child.once('spawn', () => resolve(child.pid ?? -1));
    });
    child.unref();
    await writeFile(spec.pidFile, `${pid}\n`);
    return pid;
  } finally {
    closeSync(log);
  }
}

/**
 * Stop our process: TERM, then KILL when it has not exited after `graceMs`. Does nothing when the PID is not
 * alive or not ours. Returns true when it stopped something.
 */
export async function stopProcess(pid: number, marker: string, graceMs = 10_000): Promise<boolean> {
  if (!isOurProcess(pid, marker)) return false;
  signal(pid, 'SIGTERM');
  const stopped = await waitUntil(() => !isAlive(pid), { timeoutMs: graceMs, what: `PID ${pid} to exit` }).then(
    () => true,
    () => false,
  );
  if (!stopped) {
    signal(pid, 'SIGKILL');
    await waitUntil(() => !isAlive(pid), { timeoutMs: 5_000, what: `PID ${pid} to exit after SIGKILL` });
  }
  return true;
}

/** Stop the daemon recorded in `pidFile` (if running and ours) and remove the PID file. */
export async function stopDaemon(pidFile: string, marker: string, graceMs?: number): Promise<number | undefined> {
  const pid = await runningPid(pidFile, marker);
  if (pid !== undefined) await stopProcess(pid, marker, graceMs);
  await rm(pidFile, { force: true });
  return pid;
}

export function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/** PIDs of live processes whose command line satisfies `match`. */
export function findProcesses(match: (args: string[]) => boolean): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid || !isAlive(pid)) continue;
    const args = commandLine(pid);
    if (args.length > 0 && match(args)) pids.push(pid);
  }
  return pids;
}
