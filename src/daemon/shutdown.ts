// What runs when the agent stops: every component adds a hook when it starts; on SIGTERM the hooks run one
// at a time, last added first (controllers before the clients they use), within one overall deadline.
import type { Logger } from '../observability/logger.js';
import { systemClock, type Clock } from '../util/clock.js';

export type ShutdownHook = () => unknown;

export interface ShutdownOutcome {
  /** True when every hook finished without error before the deadline. */
  clean: boolean;
  /** Hooks that threw or did not finish in time. */
  failed: string[];
}

export class ShutdownHooks {
  private readonly hooks: Array<{ name: string; hook: ShutdownHook }> = [];
  private running: Promise<ShutdownOutcome> | undefined;

  constructor(private readonly clock: Clock = systemClock) {}

  add(name: string, hook: ShutdownHook): void {
    if (this.running) throw new Error(`cannot add shutdown hook ${name}: shutdown has begun`);
    this.hooks.push({ name, hook });
  }

  get started(): boolean {
    return this.running !== undefined;
  }

  /** Run the hooks once (later calls get the same outcome). */
  run(logger: Logger, deadlineMs: number): Promise<ShutdownOutcome> {
    this.running ??= this.runAll(logger, deadlineMs);
    return this.running;
  }

  private async runAll(logger: Logger, deadlineMs: number): Promise<ShutdownOutcome> {
    const deadline = this.clock.now() + deadlineMs;
    const failed: string[] = [];
    for (const { name, hook } of [...this.hooks].reverse()) {
      const left = deadline - this.clock.now();
      if (left <= 0) {
        failed.push(name);
        logger.error({ hook: name }, 'shutdown deadline passed before this hook could run');
        continue;
      }
      let timer: { cancel(): void } | undefined;
      const timeout = new Promise<'timeout'>((resolve) => {
        timer = this.clock.setTimer(() => resolve('timeout'), left);
      });
      try {
        const result = await Promise.race([Promise.resolve().then(hook), timeout]);
        if (result === 'timeout') {
          failed.push(name);
          logger.error({ hook: name, deadlineMs }, 'shutdown hook did not finish before the deadline');
        } else {
          logger.debug({ hook: name }, 'stopped');
        }
      } catch (err) {
        failed.push(name);
        logger.error({ hook: name, err }, 'shutdown hook failed');
      } finally {
        timer?.cancel();
      }
    }
    return { clean: failed.length === 0, failed };
  }
}
