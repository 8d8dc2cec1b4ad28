// How a long-running binary (the agent, the controller) learns it should stop.
import type { Logger } from 'pino';

/** Resolves with the first SIGTERM/SIGINT; a second one while stopping exits at once (status 1). */
export function firstSignal(logger: Pick<Logger, 'warn' | 'flush'>): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    let received = false;
    const onSignal = (signal: NodeJS.Signals): void => {
      if (!received) {
        received = true;
        resolve(signal);
        return;
      }
      logger.warn({ signal }, 'second signal while stopping: exiting now');
      logger.flush();
      process.exit(1);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}
