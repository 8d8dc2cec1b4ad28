// A daemon driven by one generated config file: started if not running, left alone if running with the same
// config, restarted when the config changed. Identified by its PID file and by its config path in its cmdline.
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { readTextIfExists, writeAtomic } from './files.js';
import { runningPid, startDaemon, stopProcess } from './processes.js';

export interface DaemonDefinition {
  name: string;
  command: string;
  /** Arguments; must contain configFile (it identifies the process as ours). */
  args: string[];
  configFile: string;
  configText: string;
  configMode?: number;
  pidFile: string;
  logFile: string;
  /** How long the daemon gets to exit on SIGTERM before SIGKILL. */
  stopGraceMs?: number;
  /** Variables added to this process's environment. */
  env?: Record<string, string>;
}

export interface DaemonState {
  pid: number;
  /** false: it was already running with this config and was left alone. */
  started: boolean;
}

export async function ensureDaemon(def: DaemonDefinition, log: (message: string) => void): Promise<DaemonState> {
  const running = await runningPid(def.pidFile, def.configFile);
  const current = await readTextIfExists(def.configFile);
  if (running !== undefined && current === def.configText) return { pid: running, started: false };
  if (running !== undefined) {
    log(`${def.name}: config changed, restarting (PID ${running})`);
    await stopProcess(running, def.configFile, def.stopGraceMs);
  }
  if (current !== def.configText) await writeAtomic(def.configFile, def.configText, def.configMode);
  await mkdir(dirname(def.logFile), { recursive: true });
  const pid = await startDaemon({
    command: def.command,
    args: def.args,
    logFile: def.logFile,
    pidFile: def.pidFile,
    ...(def.env ? { env: def.env } : {}),
  });
  log(`${def.name}: started (PID ${pid})`);
  return { pid, started: true };
}
