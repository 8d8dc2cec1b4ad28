// A child process's exit, watched from its start: a promise of it, what it was once it came, and a stop by SIGTERM
// with a deadline before SIGKILL. Shared by the test harness's process wrappers (our agent, OpenKruise's daemon and
// manager).
import type { ChildProcess } from 'node:child_process';

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export class ChildExit {
  readonly exited: Promise<Exit>;
  private status: Exit | undefined;
  private readonly child: ChildProcess;

  constructor(child: ChildProcess) {
    this.child = child;
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.status = { code, signal };
        resolve(this.status);
      });
    });
  }

  /** The exit, once it came. */
  get current(): Exit | undefined {
    return this.status;
  }

  /** SIGTERM, then SIGKILL after the deadline (so nothing is left behind), and wait for the exit. */
  async terminate(deadlineMs: number): Promise<Exit> {
    if (this.status) return this.status;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), deadlineMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}
