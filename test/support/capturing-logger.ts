// A real pino logger for unit tests whose JSON lines land in an array the test reads.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import type { Logger } from '../../src/observability/logger.js';

/** A logger at `level` (default info) writing each JSON line into `lines`. */
export function capturingLogger(lines: string[], level = 'info'): Logger {
  return pino(
    { level },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString().split('\n').filter(Boolean));
        done();
      },
    }),
  );
}
