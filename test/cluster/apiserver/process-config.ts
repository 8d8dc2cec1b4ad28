// The config file of the emulator process (see main.ts), validated with messages that name the bad field.
import { isPlainObject } from './types.js';

export interface ProcessConfig {
  host: string;
  port: number;
  dataFile?: string;
  watchWindow?: number;
  bookmarkIntervalMs?: number;
}

function positiveInt(value: unknown, name: string, allowZero = false): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < (allowZero ? 0 : 1)) {
    throw new Error(
      `config: ${name} must be a ${allowZero ? 'non-negative' : 'positive'} integer, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

export function parseProcessConfig(text: string): ProcessConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new Error(`config is not valid JSON: ${(err as Error).message}`);
  }
  if (!isPlainObject(raw)) throw new Error('config must be a JSON object');
  const port = positiveInt(raw.port, 'port', true);
  if (port === undefined || port > 65535)
    throw new Error(`config: port must be 0..65535, got ${JSON.stringify(raw.port)}`);
  const host = raw.host ?? '127.0.0.1';
  if (typeof host !== 'string' || host === '') throw new Error('config: host must be a non-empty string');
  if (raw.dataFile !== undefined && (typeof raw.dataFile !== 'string' || !raw.dataFile.startsWith('/'))) {
    throw new Error('config: dataFile must be an absolute path');
  }
  return {
    host,
    port,
    dataFile: raw.dataFile as string | undefined,
    watchWindow: positiveInt(raw.watchWindow, 'watchWindow'),
    bookmarkIntervalMs: positiveInt(raw.bookmarkIntervalMs, 'bookmarkIntervalMs'),
  };
}
