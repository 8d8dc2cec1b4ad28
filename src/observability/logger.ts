// The one logger of a process: pino JSON on stdout, level from LOG_LEVEL (default info).
// Components take a child logger with their structured fields (node, pod, crr, image) instead of formatting them in.
import { pino, type Logger } from 'pino';

export type { Logger };

const LEVELS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

export function logLevelFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  const level = (env.LOG_LEVEL ?? 'info').toLowerCase();
  if (!LEVELS.has(level)) {
    throw new Error(`LOG_LEVEL=${env.LOG_LEVEL} is not one of ${[...LEVELS].join(', ')}`);
  }
  return level;
}

/** Create the root logger of a process. `name` is the binary (kruise-daemon, kruise-controller). */
export function createLogger(name: string, level: string = logLevelFromEnv()): Logger {
  return pino({
    name,
    level,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    // Credentials never reach the log, whatever a caller passes in.
    redact: {
      paths: ['password', '*.password', 'auth', '*.auth', 'token', '*.token', 'authorization', '*.authorization'],
      censor: '[redacted]',
    },
  });
}

/** A logger that drops everything: for tests and for library code called without one. */
export const silentLogger: Logger = pino({ level: 'silent' });
