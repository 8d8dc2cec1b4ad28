// `npm run dev`'s process supervision, as kubelet does it for a pod's container (restartPolicy Always): a process
// that exits without being asked is started again at once the first time, then after 10 s, 20 s, 40 s, ... at most
// 300 s (kubelet's crash-loop back-off, k8s.io/kubernetes pkg/kubelet: backOffPeriod 10 s, MaxContainerBackOff 300 s,
// client-go's flowcontrol.Backoff without jitter), and the back-off starts over once the process ran for more than
// 10 minutes (twice the maximum) since its last restart. Every exit is said with its cause; stop() ends the process
// with one SIGTERM (SIGKILL after 10 s, as kubelet's grace period) and cancels a pending restart.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Launch } from './k8s/system.js';

/** kubelet's crash-loop back-off. */
export const KUBELET_RESTART_BACKOFF = {
  initialMs: 10_000,
  maxMs: 300_000,
  /** Running longer than this since the last restart starts the back-off over. */
  stableAfterMs: 600_000,
} as const;

/** What the back-off remembers of a process's restarts (kubelet keeps one entry per container). */
export interface RestartHistory {
  /** The wait before the next restart, should the process exit within stableAfterMs of the last restart. */
  backoffMs: number;
  /** When the process was last started again. */
  restartedAt: number;
}

/** How long to wait before starting again a process that exited at `exitedAt`, and the history after that restart. */
export function nextRestart(
  history: RestartHistory | undefined,
  exitedAt: number,
  policy: typeof KUBELET_RESTART_BACKOFF = KUBELET_RESTART_BACKOFF,
): { delayMs: number; history: (restartedAt: number) => RestartHistory } {
  if (history === undefined || exitedAt - history.restartedAt > policy.stableAfterMs) {
    // first crash, or it ran long enough: at once, and the next crash waits the initial back-off
    return { delayMs: 0, history: (restartedAt) => ({ backoffMs: policy.initialMs, restartedAt }) };
  }
  return {
    delayMs: history.backoffMs,
    history: (restartedAt) => ({ backoffMs: Math.min(history.backoffMs * 2, policy.maxMs), restartedAt }),
  };
}

/** Why a process ended, for the terminal: its signal (`SIGKILL`) or its exit code (`0`, `1`). */
export function exitCause(code: number | null, signal: NodeJS.Signals | null): string {
  return signal ?? (code === null ? 'not started' : String(code));
}

export interface SupervisedOptions {
  name: string;
  launch: Launch;
  /** Where each line of the process's stdout and stderr goes (prefixed by the caller). */
  line: (name: string, line: string) => void;
  /** What dev says on its terminal. */
  say: (message: string) => void;
  /**
   * Asked before each restart: a reason when the process cannot be started again (its node is gone). Dev then
   * ends, saying it.
   */
  canRestart?: (() => Promise<string | undefined>) | undefined;
  /** Called once when the process cannot be started again. */
  onFatal: (reason: string) => void;
  now?: () => number;
}

/** One supervised process: started at construction, restarted on exit until stop(). */
export class Supervised {
  readonly name: string;
  private child: ChildProcess | undefined;
  private history: RestartHistory | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  private stopping = false;
  private restarts = 0;
  private readonly now: () => number;

  constructor(private readonly options: SupervisedOptions) {
    this.name = options.name;
    this.now = options.now ?? Date.now;
    this.spawnChild();
  }

  /** The PID of the process running now (undefined between an exit and its restart). */
  get pid(): number | undefined {
    return this.child?.exitCode === null && this.child.signalCode === null ? this.child.pid : undefined;
  }

  /** How many times it was started again. */
  get restartCount(): number {
    return this.restarts;
  }

  /**
   * A child in a process group of its own (detached): the terminal's Ctrl-C reaches dev only, and dev stops each
   * child with one SIGTERM, as kubelet would (a SIGINT from the group followed by dev's SIGTERM made a second signal,
   * which the binaries answer by exiting 1 at once).
   */
  private spawnChild(): void {
    const { launch, name } = this.options;
    const child = spawn(launch.command, launch.args, {
      env: launch.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    this.child = child;
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => this.options.line(name, line));
    }
    let ended = false;
    const end = (code: number | null, signal: NodeJS.Signals | null): void => {
      if (ended) return;
      ended = true;
      this.exited(code, signal);
    };
    child.on('error', (err) => {
      this.options.say(`${name}: ${err.message}`);
      // a command that could not be started (ENOENT) may never emit 'exit': the same path as a crash
      if (child.pid === undefined) end(null, null);
    });
    child.once('exit', end);
  }

  private exited(code: number | null, signal: NodeJS.Signals | null): void {
    const cause = exitCause(code, signal);
    if (this.stopping) {
      this.options.say(`${this.name} exited (${cause})`);
      return;
    }
    const { delayMs, history } = nextRestart(this.history, this.now());
    const when = delayMs === 0 ? 'starting it again now' : `starting it again in ${delayMs / 1000} s (back-off)`;
    this.options.say(`${this.name} exited (${cause}) unasked; ${when}, restart ${this.restarts + 1}`);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      void this.restart(history);
    }, delayMs);
  }

  private async restart(history: (restartedAt: number) => RestartHistory): Promise<void> {
    const blocked = await this.options.canRestart?.();
    if (this.stopping) return;
    if (blocked !== undefined) {
      this.options.onFatal(`${this.name} cannot be started again: ${blocked}`);
      return;
    }
    this.history = history(this.now());
    this.restarts++;
    this.spawnChild();
  }

  /** Stop it: no more restarts; one SIGTERM, SIGKILL after 10 s. Resolves once it has exited. */
  stop(): Promise<void> {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const child = this.child;
    return new Promise<void>((resolve) => {
      if (!child || child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return resolve();
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill('SIGTERM');
    });
  }
}
