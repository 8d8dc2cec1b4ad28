// Finding the container runtime's CRI socket the way OpenKruise's kruise-daemon does: the host's /var/run is
// mounted at a host run dir (default /hostvarrun) and the well-known socket paths are tried in order; the
// first that answers Version and ListImages wins. An explicit socket (--runtime-socket / RUNTIME_SOCKET)
// replaces the search. When nothing answers, the error lists every path and what it answered.
import { join } from 'node:path';
import { silentLogger, type Logger } from '../observability/logger.js';
import { probeSocket, type ProbeOutcome } from './socket-probe.js';
import type { VersionResponse__Output } from './types.js';

export const DEFAULT_HOST_RUN_DIR = '/hostvarrun';

/** Tried in this order under the host run dir. */
export const CANDIDATE_SOCKETS: readonly string[] = Object.freeze([
  'containerd.sock',
  'containerd/containerd.sock',
  'crio.sock',
  'crio/crio.sock',
  'cri-dockerd.sock',
  'cri-dockerd/cri-dockerd.sock',
]);

/** Default wait for each probe call (Version, ListImages). */
export const DEFAULT_PROBE_TIMEOUT_MS = 5_000;

export interface DiscoveredRuntime {
  socket: string;
  version: VersionResponse__Output;
  /** Every path probed, in order, the winner last. */
  attempts: ProbeOutcome[];
}

export class CriDiscoveryError extends Error {
  override readonly name = 'CriDiscoveryError';
  constructor(
    message: string,
    readonly attempts: ProbeOutcome[],
  ) {
    super(message);
  }
}

function describe(attempts: ProbeOutcome[]): string {
  return attempts.map((a) => `  ${a.path}: ${a.detail}`).join('\n');
}

/** Probe the candidates under `hostRunDir` in order and return the first live CRI runtime. */
export async function discoverRuntime(
  options: { hostRunDir?: string | undefined; timeoutMs?: number | undefined; logger?: Logger | undefined } = {},
): Promise<DiscoveredRuntime> {
  const hostRunDir = options.hostRunDir ?? DEFAULT_HOST_RUN_DIR;
  const timeoutMs = options.timeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS;
  const log = options.logger ?? silentLogger;
  const attempts: ProbeOutcome[] = [];
  for (const candidate of CANDIDATE_SOCKETS) {
    const outcome = await probeSocket(join(hostRunDir, candidate), timeoutMs);
    attempts.push(outcome);
    if (outcome.status === 'ok' && outcome.version) {
      log.info({ socket: outcome.path, tried: attempts.length }, `found CRI runtime: ${outcome.detail}`);
      return { socket: outcome.path, version: outcome.version, attempts };
    }
    if (outcome.status !== 'missing') log.debug({ socket: outcome.path }, `not a CRI runtime: ${outcome.detail}`);
  }
  throw new CriDiscoveryError(
    `no CRI runtime answered under ${hostRunDir}; tried:\n${describe(attempts)}\n` +
      'set --runtime-socket / RUNTIME_SOCKET to the runtime socket, or --host-run-dir to where the host /var/run is mounted',
    attempts,
  );
}

/** Check an explicitly configured socket; `source` says where it came from, for the error. */
export async function checkExplicitSocket(
  socket: string,
  source: string,
  options: { timeoutMs?: number | undefined } = {},
): Promise<DiscoveredRuntime> {
  const outcome = await probeSocket(socket, options.timeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS);
  if (outcome.status === 'ok' && outcome.version) {
    return { socket: outcome.path, version: outcome.version, attempts: [outcome] };
  }
  throw new CriDiscoveryError(`CRI runtime socket ${socket} (${source}) does not answer: ${outcome.detail}`, [outcome]);
}
