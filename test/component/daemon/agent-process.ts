// The compiled kruise-daemon binary as a child process, for component tests and the benchmark.
// Found relative to this file so any outDir works; run with this process's Node (process.execPath).
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ChildExit, type Exit } from '../../cluster/runtime/child-exit.js';
import { waitFor } from '../../support/wait.js';

export const KRUISE_DAEMON_BIN = fileURLToPath(new URL('../../../src/cli/kruise-daemon.js', import.meta.url));

export interface AgentProcessOptions {
  /** Flags after the binary (default: --addr 127.0.0.1:0, a free port on loopback). */
  args?: string[] | undefined;
  /** Environment on top of PATH only (NODE_NAME, RUNTIME_SOCKET, NODE_OPTIONS...). */
  env?: Record<string, string>;
  /** Runs the agent through this command line, e.g. `nsenter -t PID --mount --net --` to run it inside a node. */
  launcher?: string[];
  /** The address the agent's /healthz is reached at (default 127.0.0.1; a real node's address inside its netns). */
  host?: string;
}

export type { Exit };

export type LogLine = Record<string, unknown> & { msg?: string; level?: string };

/** A running agent: its JSON log lines, its stderr, and its HTTP base URL once it listens. */
export class AgentProcess {
  readonly child: ChildProcess;
  readonly logs: LogLine[] = [];
  stderr = '';
  /** Lines of stdout that were not JSON (should stay empty). */
  readonly otherOutput: string[] = [];
  readonly exited: Promise<Exit>;
  private readonly watch: ChildExit;
  private readonly host: string;

  constructor(options: AgentProcessOptions = {}) {
    const args = options.args ?? ['--addr', '127.0.0.1:0'];
    this.host = options.host ?? '127.0.0.1';
    const [command, ...prefix] = [...(options.launcher ?? []), process.execPath];
    this.child = spawn(command, [...prefix, KRUISE_DAEMON_BIN, ...args], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let partial = '';
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      partial += chunk;
      const lines = partial.split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        if (line.trim() === '') continue;
        try {
          this.logs.push(JSON.parse(line) as LogLine);
        } catch {
          this.otherOutput.push(line);
        }
      }
    });
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    this.watch = new ChildExit(this.child);
    this.exited = this.watch.exited;
  }

  private get exit(): Exit | undefined {
    return this.watch.current;
  }

  get pid(): number {
    return this.child.pid!;
  }

  get hasExited(): boolean {
    return this.exit !== undefined;
  }

  /** The first log line whose msg matches. */
  findLog(msg: RegExp): LogLine | undefined {
    return this.logs.find((l) => typeof l.msg === 'string' && msg.test(l.msg));
  }

  /** http://HOST:PORT once the agent logged where it listens. */
  async baseUrl(timeoutMs = 15_000): Promise<string> {
    const line = await waitFor(
      () => {
        if (this.exit) throw new Error(`agent exited (${JSON.stringify(this.exit)}): ${this.stderr}`);
        return this.findLog(/^serving \/livez, \/readyz, \/healthz/);
      },
      { timeoutMs, message: 'the agent to log its listen address' },
    );
    return `http://${this.host}:${String(line.port)}`;
  }

  /** Send SIGTERM and wait for the exit (SIGKILL after the deadline so nothing is left behind). */
  stop(deadlineMs = 15_000): Promise<Exit> {
    return this.watch.terminate(deadlineMs);
  }
}

/** GET a path; resolves with status and body. */
export async function httpGet(url: string): Promise<{ status: number; body: string; contentType: string }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  return { status: res.status, body: await res.text(), contentType: res.headers.get('content-type') ?? '' };
}

/** Run the binary to completion (for --help, bad configuration...). */
export async function runToExit(
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 20_000,
): Promise<Exit & { stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [KRUISE_DAEMON_BIN, ...args], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const exit = await new Promise<Exit>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  clearTimeout(timer);
  return { ...exit, stdout, stderr };
}

/** Resident set size of a process in MiB (VmRSS of /proc/PID/status). */
export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  if (!match) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(match[1]) / 1024;
}

/** User + system CPU time of a process so far, in seconds (utime + stime of /proc/PID/stat, clock ticks of 10 ms). */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
