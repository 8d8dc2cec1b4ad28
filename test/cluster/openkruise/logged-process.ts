// A process of OpenKruise's (its kruise-daemon in a node, its kruise-manager on the host) whose output goes to a
// log file: its exit, its log lines, and a stop by SIGTERM with a deadline before SIGKILL.
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { ChildExit, type Exit } from '../runtime/child-exit.js';

export type { Exit };

export class LoggedProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<Exit>;
  readonly logFile: string;
  private readonly exit: ChildExit;

  protected constructor(child: ChildProcess, logFile: string) {
    this.child = child;
    this.logFile = logFile;
    this.exit = new ChildExit(child);
    this.exited = this.exit.exited;
  }

  get pid(): number {
    return this.child.pid!;
  }

  get hasExited(): boolean {
    return this.exit.current !== undefined;
  }

  /** Its log's lines so far. */
  log(): string[] {
    return readFileSync(this.logFile, 'utf8').split('\n');
  }

  /** Throws, with its last log lines, if it has exited (a health check's first step). */
  protected assertRunning(name: string): void {
    if (this.exit.current) {
      throw new Error(
        `${name} exited (${JSON.stringify(this.exit.current)}); last lines of ${this.logFile}:\n` +
          this.log().slice(-15).join('\n'),
      );
    }
  }

  /** SIGTERM, then SIGKILL after the deadline, and wait for the exit. */
  protected terminate(deadlineMs: number): Promise<Exit> {
    return this.exit.terminate(deadlineMs);
  }
}
