// The real kruise-ipam plugin as the runtime runs it: a fresh Node process with the CNI_* environment and the network
// configuration on stdin. The harness kills it with SIGKILL at `killAfterMs`: the crash test kills it on purpose; the
// other tests use the kill as a deadline and fail when it was needed (`killed`).
import { spawn } from 'node:child_process';
import { pluginEntry } from '../../../src/daemon/ipreservation/install.js';

export interface PluginRun {
  /** Exit status (null when killed). */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Whether the harness had to kill it. */
  killed: boolean;
}

export interface PluginRunOptions {
  env: Record<string, string>;
  /** The network configuration (written as JSON unless a string). */
  stdin: unknown;
  /** SIGKILL after this many milliseconds. */
  killAfterMs: number;
  /** Run through this command, e.g. ['unshare', '--user']. */
  prefix?: readonly string[];
}

export function runPluginProcess(options: PluginRunOptions): Promise<PluginRun> {
  const argv = [...(options.prefix ?? []), process.execPath, pluginEntry()];
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), {
      // PATH only so that a prefix command is found; the plugin reads nothing else of the environment
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let killed = false;
    child.stdout.on('data', (d: Buffer) => (stdout += String(d)));
    child.stderr.on('data', (d: Buffer) => (stderr += String(d)));
    child.stdin.on('error', () => undefined); // EPIPE when it is killed before reading stdin
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, options.killAfterMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, killed });
    });
    child.stdin.end(typeof options.stdin === 'string' ? options.stdin : JSON.stringify(options.stdin));
  });
}
