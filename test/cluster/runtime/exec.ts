// Running a host command to completion (apt-get, ip, umoci, skopeo, ctr, htpasswd) with a deadline.
import { spawn } from 'node:child_process';
import { ClusterError } from './errors.js';

export interface RunOptions {
  /** Written to the command's stdin (secrets go here, never on the command line). */
  input?: string;
  /** Extra environment variables (merged over process.env). */
  env?: Record<string, string>;
  cwd?: string;
  /** Kill the command after this many milliseconds (default 60 s). */
  timeoutMs?: number;
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Run `command args` and collect its output; never throws for a non-zero exit (see runChecked). */
export function run(command: string, args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ? { ...process.env, ...options.env } : process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: options.timeoutMs ?? 60_000,
      killSignal: 'SIGKILL',
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', (e: NodeJS.ErrnoException) => {
      reject(
        new ClusterError(
          e.code === 'ENOENT' ? `command not found: ${command}` : `cannot run ${command}: ${e.message}`,
          { cause: e },
        ),
      );
    });
    child.on('close', (code, signal) => {
      resolve({
        code,
        signal,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      });
    });
    child.stdin.on('error', () => {
      // the command may exit without reading its stdin; its exit status tells what happened
    });
    child.stdin.end(options.input ?? '');
  });
}

/** Run a command and return its stdout; a non-zero exit throws with the command's stderr in the message. */
export async function runChecked(command: string, args: readonly string[], options: RunOptions = {}): Promise<string> {
  const result = await run(command, args, options);
  if (result.code !== 0) {
    const why = result.signal ? `killed by ${result.signal}` : `exit code ${String(result.code)}`;
    const detail = (result.stderr.trim() || result.stdout.trim()).split('\n').slice(-5).join('\n');
    throw new ClusterError(`${command} ${args.join(' ')} failed (${why})${detail ? `: ${detail}` : ''}`);
  }
  return result.stdout;
}
