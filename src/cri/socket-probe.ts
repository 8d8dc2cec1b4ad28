// Probe one candidate path for a CRI runtime: is it there, is it a socket, does something listen, does it
// speak gRPC, does it serve CRI v1 (Version and ListImages answer). The answer says which, in words.
import { lstat, readlink, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { CriClient } from './client.js';
import { CriError } from './errors.js';
import type { VersionResponse__Output } from './types.js';
import { errorMessage } from '../util/error-message.js';

export type ProbeStatus =
  'ok' | 'missing' | 'not-a-socket' | 'refused' | 'not-grpc' | 'not-cri' | 'timeout' | 'permission-denied' | 'error';

export interface ProbeOutcome {
  /** The path probed, as given. */
  path: string;
  status: ProbeStatus;
  /** What the path answered, for humans ("missing", "connection refused (stale socket...)"). */
  detail: string;
  /** The runtime's Version answer when status is ok. */
  version?: VersionResponse__Output;
}

function fileType(s: Stats): string {
  if (s.isFile()) return 'a regular file';
  if (s.isDirectory()) return 'a directory';
  if (s.isFIFO()) return 'a named pipe';
  if (s.isCharacterDevice()) return 'a character device';
  if (s.isBlockDevice()) return 'a block device';
  return 'not a socket';
}

function errnoOf(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null ? (err as NodeJS.ErrnoException).code : undefined;
}

/** Check a path and, when it is a socket, ask it Version and ListImages within `timeoutMs` each. */
export async function probeSocket(path: string, timeoutMs: number): Promise<ProbeOutcome> {
  let info: Stats;
  try {
    info = await stat(path);
  } catch (err) {
    const errno = errnoOf(err);
    if (errno === 'ENOENT' || errno === 'ENOTDIR') {
      const target = await readlink(path).catch(() => undefined);
      return target !== undefined
        ? { path, status: 'missing', detail: `dangling symlink to ${target}` }
        : { path, status: 'missing', detail: 'missing' };
    }
    if (errno === 'EACCES') return { path, status: 'permission-denied', detail: 'permission denied' };
    return { path, status: 'error', detail: `cannot stat: ${errorMessage(err)}` };
  }
  if (!info.isSocket()) return { path, status: 'not-a-socket', detail: `not a socket (${fileType(info)})` };

  const target = (await lstat(path).catch(() => undefined))?.isSymbolicLink()
    ? await readlink(path).catch(() => '?')
    : undefined;
  const viaLink = target === undefined ? '' : ` (symlink to ${target})`;
  const client = new CriClient({ socket: path, timeoutMs, reconnectWaitMs: 1 });
  try {
    const version = await client.version({ version: 'v1' });
    await client.listImages({});
    const name = `${version.runtime_name} ${version.runtime_version}`.trim();
    return {
      path,
      status: 'ok',
      detail: `CRI ${version.runtime_api_version || '?'} runtime ${name}${viaLink}`,
      version,
    };
  } catch (err) {
    return { path, ...classify(err, timeoutMs) };
  } finally {
    client.close();
  }
}

function classify(err: unknown, timeoutMs: number): { status: ProbeStatus; detail: string } {
  if (!(err instanceof CriError)) {
    return { status: 'error', detail: errorMessage(err) };
  }
  const said = err.runtimeMessage;
  switch (err.kind) {
    case 'Unavailable':
      if (/ECONNREFUSED/.test(said)) {
        return { status: 'refused', detail: 'connection refused (stale socket, nothing listening)' };
      }
      if (/ENOENT/.test(said)) return { status: 'missing', detail: 'missing (vanished while probing)' };
      if (/EACCES/.test(said)) return { status: 'permission-denied', detail: 'permission denied' };
      if (/Protocol error|HTTP|http2|frame/i.test(said)) {
        return { status: 'not-grpc', detail: `listening, but not a gRPC server (${said})` };
      }
      return { status: 'error', detail: `unavailable: ${said}` };
    case 'Unimplemented':
      return { status: 'not-cri', detail: `a gRPC server, but not CRI v1 (${err.method} unimplemented)` };
    case 'DeadlineExceeded':
      return { status: 'timeout', detail: `no answer to ${err.method} within ${timeoutMs} ms` };
    case 'Internal':
    case 'Unknown':
      if (/Received HTTP status|Protocol error|content-type/i.test(said)) {
        return { status: 'not-grpc', detail: `listening, but not a gRPC server (${said})` };
      }
      return { status: 'error', detail: `${err.method} failed: ${said}` };
    default:
      return { status: 'error', detail: `${err.method} failed: ${err.kind}: ${said}` };
  }
}
