// A long-running process of the real cluster, identified by its PID file and a marker argument (a path under the
// cluster directory, so PIDs recycled by other programs are never taken for ours). Its full command line is kept
// beside the PID file: up leaves a running process alone when the command line is the same and restarts it when not.
import { mkdir } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { readTextIfExists, tailOfFile, writeAtomic } from '../runtime/files.js';
import { isAlive, runningPid, startDaemon, stopDaemon, stopProcess } from '../runtime/processes.js';
import { waitUntil } from '../runtime/wait-until.js';

export interface ProcessSpec {
  name: string;
  command: string;
  args: string[];
  /** An argument (or part of one) only our instance has: identifies the process as ours. */
  marker: string;
  pidFile: string;
  logFile: string;
  env?: Record<string, string>;
  stopGraceMs?: number;
}

export interface ProcessState {
  pid: number;
  started: boolean;
}

function commandLineText(spec: ProcessSpec): string {
  return `${JSON.stringify([spec.command, ...spec.args, spec.env ?? {}])}\n`;
}

/** The command, arguments and added environment a process was last started with (`<pidFile>.cmdline`). */
export function recordedCommand(pidFile: string): { command: string; args: string[]; env: Record<string, string> } {
  const recorded = JSON.parse(readFileSync(`${pidFile}.cmdline`, 'utf8')) as unknown[];
  return {
    command: recorded[0] as string,
    args: recorded.slice(1, -1) as string[],
    env: recorded.at(-1) as Record<string, string>,
  };
}

export async function ensureProcess(spec: ProcessSpec, log: (message: string) => void): Promise<ProcessState> {
  const argsFile = `${spec.pidFile}.cmdline`;
  const wanted = commandLineText(spec);
  const running = await runningPid(spec.pidFile, spec.marker);
  if (running !== undefined && (await readTextIfExists(argsFile)) === wanted) return { pid: running, started: false };
  if (running !== undefined) {
    log(`${spec.name}: command line changed, restarting (PID ${running})`);
    await stopProcess(running, spec.marker, spec.stopGraceMs);
  }
  await mkdir(dirname(spec.pidFile), { recursive: true });
  await mkdir(dirname(spec.logFile), { recursive: true });
  const pid = await startDaemon({
    command: spec.command,
    args: spec.args,
    logFile: spec.logFile,
    pidFile: spec.pidFile,
    env: spec.env,
  });
  await writeAtomic(argsFile, wanted);
  log(`${spec.name}: started (PID ${pid})`);
  return { pid, started: true };
}

export async function stopOwnProcess(
  spec: Pick<ProcessSpec, 'name' | 'pidFile' | 'marker' | 'stopGraceMs'>,
  log: (message: string) => void,
): Promise<void> {
  const pid = await stopDaemon(spec.pidFile, spec.marker, spec.stopGraceMs);
  if (pid !== undefined) log(`${spec.name}: stopped (PID ${pid})`);
}

/** Wait for `probe`, giving up at once (with the last lines of its log) when the process dies. */
export async function waitForProcess(
  spec: Pick<ProcessSpec, 'name' | 'logFile' | 'command'>,
  pid: number,
  what: string,
  probe: () => boolean | Promise<boolean>,
  timeoutMs = 60_000,
): Promise<void> {
  await waitUntil(probe, {
    timeoutMs,
    intervalMs: 100,
    what: `${spec.name}: ${what}`,
    failFast: async () =>
      isAlive(pid)
        ? undefined
        : `${spec.name} (PID ${pid}, ${spec.command}) exited; last lines of ${spec.logFile}:\n${await tailOfFile(spec.logFile, 12)}`,
  });
}
