// A watch response body (one JSON event per line) as an async iterable of typed events.
// ERROR events end the iteration with an ApiError carrying the Status (410 Expired → isGone()).
import type { Readable } from 'node:stream';
import { ApiError, type Status } from './errors.js';
import { type KubeObject } from './object.js';
import { isRecord } from '../util/is-record.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';

export interface WatchEvent<T extends KubeObject = KubeObject> {
  type: WatchEventType;
  object: T;
}

export interface WatchStream<T extends KubeObject = KubeObject> extends AsyncIterable<WatchEvent<T>> {
  /** End the stream; a pending iteration finishes without error. */
  close(): void;
}

const EVENT_TYPES = new Set<string>(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK']);

/** The biggest single event line accepted (an object is at most 1.5 MiB in etcd; leave room). */
const MAX_LINE_BYTES = 16 * 1024 * 1024;

export class WatchProtocolError extends Error {
  override readonly name = 'WatchProtocolError';
}

export function parseWatchLine<T extends KubeObject>(line: string, path: string): WatchEvent<T> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    throw new WatchProtocolError(`watch ${path}: a line is not JSON: ${line.slice(0, 120)}`);
  }
  if (!isRecord(parsed) || typeof parsed.type !== 'string' || !isRecord(parsed.object)) {
    throw new WatchProtocolError(`watch ${path}: an event lacks type or object: ${line.slice(0, 120)}`);
  }
  if (parsed.type === 'ERROR') {
    const status = parsed.object as Status;
    throw new ApiError({ ...status, code: status.code ?? 500 }, 'WATCH', path);
  }
  if (!EVENT_TYPES.has(parsed.type)) {
    throw new WatchProtocolError(`watch ${path}: unknown event type ${JSON.stringify(parsed.type)}`);
  }
  return { type: parsed.type as WatchEventType, object: parsed.object as T };
}

export function watchStreamOf<T extends KubeObject>(body: Readable, path: string): WatchStream<T> {
  let closed = false;
  async function* events(): AsyncGenerator<WatchEvent<T>> {
    let pending = '';
    try {
      for await (const chunk of body) {
        pending += (chunk as Buffer).toString('utf8');
        let nl: number;
        while ((nl = pending.indexOf('\n')) >= 0) {
          const line = pending.slice(0, nl).trim();
          pending = pending.slice(nl + 1);
          if (line) yield parseWatchLine<T>(line, path);
        }
        if (pending.length > MAX_LINE_BYTES) {
          throw new WatchProtocolError(`watch ${path}: an event line is longer than ${MAX_LINE_BYTES} bytes`);
        }
      }
    } catch (err) {
      if (closed) return;
      throw err;
    } finally {
      body.destroy();
    }
    const rest = pending.trim();
    if (rest && !closed) yield parseWatchLine<T>(rest, path);
  }
  const iterable = events();
  return {
    [Symbol.asyncIterator]: () => iterable,
    close() {
      closed = true;
      body.destroy();
    },
  };
}
