// A process of OpenKruise's (its kruise-daemon in a node, its kruise-manager on the host) whose output goes to a
// log file: its exit, its log lines, and a stop by SIGTERM with a deadline before SIGKILL.
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export class LoggedProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<Exit>;
  readonly logFile: string;
  private exitStatus: Exit | undefined;

  protected constructor(child: ChildProcess, logFile: string) {
    this.child = child;
    this.logFile = logFile;
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exitStatus = { code, signal };
        resolve(this.exitStatus);
      });
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  get hasExited(): boolean {
    return this.exitStatus !== undefined;
  }

  /** Its log's lines so far. */
  log(): string[] {
    return readFileSync(this.logFile, 'utf8').split('\n');
  }

  /** Throws, with its last log lines, if it has exited (a health check's first step). */
  protected assertRunning(name: string): void {
    if (this.exitStatus) {
      throw new Error(
        `${name} exited (${JSON.stringify(this.exitStatus)}); last lines of ${this.logFile}:\n` +
          this.log().slice(-15).join('\n'),
      );
    }
  }

  /** SIGTERM, then SIGKILL after the deadline, and wait for the exit. */
  protected async terminate(deadlineMs: number): Promise<Exit> {
    if (this.exitStatus) return this.exitStatus;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), deadlineMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}
