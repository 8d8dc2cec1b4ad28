// The CRI client of kruise-daemon: connectRuntime() finds (or takes) the runtime socket and returns a
// CriClient with typed methods for every RPC the project uses.
import type { Registry } from 'prom-client';
import { silentLogger, type Logger } from '../observability/logger.js';
import { CriClient, socketPathOf } from './client.js';
import { checkExplicitSocket, discoverRuntime } from './discovery.js';

export { CriClient } from './client.js';
export {
  CriError,
  CriAuthenticationFailedError,
  CriDeadlineExceededError,
  CriImageNotFoundError,
  CriInvalidArgumentError,
  CriNotFoundError,
  CriRegistryUnreachableError,
  CriUnavailableError,
  CriUnimplementedError,
  isCriError,
} from './errors.js';
export type { CriErrorKind } from './errors.js';
export { CANDIDATE_SOCKETS, CriDiscoveryError, discoverRuntime } from './discovery.js';
export type * from './types.js';

export interface ConnectRuntimeOptions {
  /** Explicit runtime socket (path or unix:// URL); default RUNTIME_SOCKET from `env`, else discovery. */
  socket?: string | undefined;
  /** Where the host's /var/run is mounted, searched when no socket is given (default /hostvarrun). */
  hostRunDir?: string | undefined;
  /** Wait for each probe call while connecting (ms, default 5000). */
  timeoutMs?: number | undefined;
  /** Default deadline of the returned client's calls (ms), replacing the per-method defaults. */
  callTimeoutMs?: number | undefined;
  registry?: Registry | undefined;
  logger?: Logger | undefined;
  /** Environment read for RUNTIME_SOCKET (default process.env). */
  env?: Record<string, string | undefined> | undefined;
}

/**
 * Connect to the container runtime: the explicit socket (option, then RUNTIME_SOCKET) when given, checked
 * with Version and ListImages; otherwise the first candidate under the host run dir that answers both.
 * Throws CriDiscoveryError naming every path tried and what it answered.
 */
export async function connectRuntime(options: ConnectRuntimeOptions = {}): Promise<CriClient> {
  const env = options.env ?? process.env;
  const log = options.logger ?? silentLogger;
  const explicit = options.socket?.trim() || env.RUNTIME_SOCKET?.trim() || undefined;
  const found = explicit
    ? await checkExplicitSocket(
        socketPathOf(explicit),
        options.socket?.trim() ? 'runtime socket option' : 'RUNTIME_SOCKET',
        {
          timeoutMs: options.timeoutMs,
        },
      )
    : await discoverRuntime({ hostRunDir: options.hostRunDir, timeoutMs: options.timeoutMs, logger: log });
  const v = found.version;
  log.info(
    { socket: found.socket, runtime: v.runtime_name, runtimeVersion: v.runtime_version, api: v.runtime_api_version },
    'connected to the CRI runtime',
  );
  return new CriClient({
    socket: found.socket,
    registry: options.registry,
    logger: options.logger,
    timeoutMs: options.callTimeoutMs,
  });
}
