// The agent's configuration: command-line flags first, then environment variables, then defaults.
// Every problem is a ConfigError with a one-line message that names the flag or variable, so the
// entry point can print it and exit 2 instead of crashing.
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter } from 'node:path';
import { parseArgs } from 'node:util';
import { IPAM_FLAGS, IPAM_USAGE, IpamFlagError, parseIpamFlags, type IpamOptions } from './ipreservation/options.js';
import { logLevelFromEnv } from '../observability/logger.js';
import { errorMessage } from '../util/error-message.js';
import type { ListenAddress } from '../observability/status-server.js';
import { ConfigError } from '../util/config-error.js';
import {
  DEFAULT_IMAGE_GC_HIGH_THRESHOLD_PERCENT,
  DEFAULT_IMAGE_GC_LOW_THRESHOLD_PERCENT,
} from './imagepuller/image-fs.js';

export const DEFAULT_ADDR = ':10221';
export const DEFAULT_HOST_RUN_DIR = '/hostvarrun';
/** Image pulls the agent runs at once on its node (kubelet's own pull limits do not cover them). */
export const DEFAULT_MAX_PARALLEL_PULLS = 2;
export const MAX_PARALLEL_PULLS_LIMIT = 64;
/** Custom probe runs at once on the node (exec, tcp, http), whatever the number of probes. */
export const DEFAULT_MAX_CONCURRENT_PROBES = 16;
export const MAX_CONCURRENT_PROBES_LIMIT = 256;
/** Probe results gathered this long into one NodePodProbe status write (and at most one write per window). */
export const DEFAULT_PROBE_STATUS_WINDOW_MS = 1000;
export const PROBE_STATUS_WINDOW_MS_RANGE = [100, 60_000] as const;

export interface DaemonOptions {
  /** The node this agent serves (NODE_NAME, from the pod's spec.nodeName). */
  nodeName: string;
  /** An explicit CRI socket; when unset, the runtime is discovered under hostRunDir. */
  runtimeSocket: string | undefined;
  /** Where the host's /var/run is mounted. */
  hostRunDir: string;
  /** A kubeconfig file; unset = in-cluster service-account credentials. */
  kubeconfig: string | undefined;
  /** Where /livez, /readyz, /healthz and /metrics are served. */
  listen: ListenAddress;
  logLevel: string;
  /** Node-wide cap on NodeImage pulls running at once (never unlimited). */
  maxParallelPulls: number;
  /** kubelet's image GC thresholds (percent of the image filesystem) the image puller keeps below. */
  imageGcHighThresholdPercent: number;
  imageGcLowThresholdPercent: number;
  /** Where the host's root is seen, to read the capacity of the runtime's image filesystem. */
  imageFsRoot: string;
  /** Custom probes (NodePodProbe): on unless --pod-probe=false (OpenKruise's PodProbeMarkerGate). */
  podProbe: boolean;
  /** Node-wide cap on custom probe runs at once. */
  maxConcurrentProbes: number;
  /** The coalescing window of NodePodProbe status writes. */
  probeStatusWindowMs: number;
  /**
   * https://host:port of kruise-controller's pull-credentials listener; unset: the agent reads pull-secret copies in
   * kruise-daemon-config itself (the agent-only install beside OpenKruise's manager).
   */
  pullCredentialsUrl?: string | undefined;
  /** IP reservations (kruise-ipam): present only with --ipam or --ipam-install. */
  ipam?: IpamOptions;
}

export type ParsedCommandLine = { kind: 'help' } | { kind: 'run'; options: DaemonOptions };

/** Tells whether a path is a readable regular file; returns a reason when it is not. */
export type FileCheck = (path: string) => string | undefined;

export const DAEMON_USAGE = `Usage: kruise-daemon [flags]            run the node agent
       kruise-daemon <command> [args]   run a tool (see Commands)

The node agent of kruise-daemon: runs OpenKruise's node-side controllers for the node NODE_NAME
against the node's container runtime (CRI) and serves /livez, /readyz, /healthz and /metrics.

Flags (a flag wins over its environment variable):
  --runtime-socket PATH   CRI socket (env RUNTIME_SOCKET); default: discovered under --host-run-dir
                          (containerd.sock, containerd/containerd.sock, crio.sock, crio/crio.sock,
                          cri-dockerd.sock, cri-dockerd/cri-dockerd.sock)
  --host-run-dir DIR      where the host's /var/run is mounted (default ${DEFAULT_HOST_RUN_DIR})
  --kubeconfig PATH       kubeconfig file (env KUBECONFIG); default: in-cluster service account
  --addr [HOST]:PORT      health and metrics listener (default ${DEFAULT_ADDR}; port 0 = any free port)
  --max-parallel-pulls N  image pulls run at once for the NodeImage (1-${MAX_PARALLEL_PULLS_LIMIT}, default ${DEFAULT_MAX_PARALLEL_PULLS})
  --image-gc-high-threshold-percent N, --image-gc-low-threshold-percent N
                          kubelet's image GC thresholds on this node (kubelet's defaults ${DEFAULT_IMAGE_GC_HIGH_THRESHOLD_PERCENT} and ${DEFAULT_IMAGE_GC_LOW_THRESHOLD_PERCENT}):
                          at the high one no new pre-pull starts and pins are released, oldest tags first,
                          until what they hold would bring the image filesystem down to the low one
  --image-fs-root DIR     where the host's / is seen, to read the capacity of the runtime's image
                          filesystem (statfs of ImageFsInfo's mountpoint below DIR; default /); unreadable:
                          the disk check is off, and the log says why
  --pod-probe BOOL        run the custom probes of this node's NodePodProbe (PodProbeMarker): true (default)
                          or false
  --max-concurrent-probes N
                          custom probe runs at once on the node (1-${MAX_CONCURRENT_PROBES_LIMIT}, default ${DEFAULT_MAX_CONCURRENT_PROBES})
  --probe-status-window-ms MS
                          probe results gathered into one NodePodProbe status write, at most one write per
                          window (${PROBE_STATUS_WINDOW_MS_RANGE[0]}-${PROBE_STATUS_WINDOW_MS_RANGE[1]}, default ${DEFAULT_PROBE_STATUS_WINDOW_MS})
  --pull-credentials-url URL
                          ask kruise-controller at this https URL for a tag's pull secrets (env
                          PULL_CREDENTIALS_URL); unset: read the copies in kruise-daemon-config directly
${IPAM_USAGE}
  -h, --help              print this help

Environment:
  NODE_NAME               required: the name of this node
  LOG_LEVEL               fatal, error, warn, info (default), debug, trace or silent

If the runtime does not answer (at start or later), the agent keeps retrying (1 s up to 30 s) and
/readyz says why; it does not exit, and /livez stays ok. SIGTERM or SIGINT stop it cleanly (exit 0).
Exit codes: 0 stopped cleanly, 1 failed while running, 2 bad configuration.`;

const FLAGS = {
  'runtime-socket': { type: 'string' },
  'host-run-dir': { type: 'string' },
  kubeconfig: { type: 'string' },
  addr: { type: 'string' },
  'max-parallel-pulls': { type: 'string' },
  'image-gc-high-threshold-percent': { type: 'string' },
  'image-gc-low-threshold-percent': { type: 'string' },
  'image-fs-root': { type: 'string' },
  'pod-probe': { type: 'string' },
  'max-concurrent-probes': { type: 'string' },
  'probe-status-window-ms': { type: 'string' },
  'pull-credentials-url': { type: 'string' },
  ...IPAM_FLAGS,
  help: { type: 'boolean', short: 'h' },
} as const;

/** Parse the agent's flags and environment. Throws ConfigError for anything it cannot use. */
export function parseDaemonCommandLine(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  checkFile: FileCheck = readableFileProblem,
): ParsedCommandLine {
  const values = parseFlags(argv);
  if (values.help) return { kind: 'help' };

  const nodeName = (env.NODE_NAME ?? '').trim();
  if (nodeName === '') {
    throw new ConfigError('NODE_NAME is not set: the agent must know its node (set it from spec.nodeName)');
  }
  if (!isDnsSubdomain(nodeName)) {
    throw new ConfigError(`NODE_NAME=${JSON.stringify(nodeName)} is not a valid node name (a DNS subdomain)`);
  }

  const runtimeSocket = nonEmpty('--runtime-socket', values['runtime-socket']) ?? fromEnv(env.RUNTIME_SOCKET);
  const hostRunDir = nonEmpty('--host-run-dir', values['host-run-dir']) ?? DEFAULT_HOST_RUN_DIR;
  const listen = parseListenAddress(values.addr ?? DEFAULT_ADDR, '--addr');
  const kubeconfig = kubeconfigPath(values.kubeconfig, env.KUBECONFIG, checkFile);
  const maxParallelPulls = parseMaxParallelPulls(values['max-parallel-pulls']);
  const imageGcHighThresholdPercent = parseWholeNumber(
    '--image-gc-high-threshold-percent',
    values['image-gc-high-threshold-percent'],
    DEFAULT_IMAGE_GC_HIGH_THRESHOLD_PERCENT,
    [1, 100],
  );
  const imageGcLowThresholdPercent = parseWholeNumber(
    '--image-gc-low-threshold-percent',
    values['image-gc-low-threshold-percent'],
    Math.min(DEFAULT_IMAGE_GC_LOW_THRESHOLD_PERCENT, imageGcHighThresholdPercent),
    [0, 100],
  );
  if (imageGcLowThresholdPercent > imageGcHighThresholdPercent) {
    throw new ConfigError(
      `--image-gc-low-threshold-percent=${imageGcLowThresholdPercent} must not be above ` +
        `--image-gc-high-threshold-percent=${imageGcHighThresholdPercent} (as kubelet requires)`,
    );
  }
  const imageFsRoot = nonEmpty('--image-fs-root', values['image-fs-root']) ?? '/';
  const podProbe = parseBoolean('--pod-probe', values['pod-probe'], true);
  const maxConcurrentProbes = parseWholeNumber(
    '--max-concurrent-probes',
    values['max-concurrent-probes'],
    DEFAULT_MAX_CONCURRENT_PROBES,
    [1, MAX_CONCURRENT_PROBES_LIMIT],
    '(probe runs are never unlimited)',
  );
  const probeStatusWindowMs = parseWholeNumber(
    '--probe-status-window-ms',
    values['probe-status-window-ms'],
    DEFAULT_PROBE_STATUS_WINDOW_MS,
    PROBE_STATUS_WINDOW_MS_RANGE,
  );
  const pullCredentialsUrl =
    nonEmpty('--pull-credentials-url', values['pull-credentials-url']) ?? fromEnv(env.PULL_CREDENTIALS_URL);
  if (pullCredentialsUrl !== undefined && !/^https:\/\/[^/]+/.test(pullCredentialsUrl)) {
    throw new ConfigError(`--pull-credentials-url=${JSON.stringify(pullCredentialsUrl)} must be an https:// URL`);
  }
  let ipam: IpamOptions | undefined;
  try {
    ipam = parseIpamFlags(values, env);
  } catch (err) {
    throw err instanceof IpamFlagError ? new ConfigError(err.message) : err;
  }

  let logLevel: string;
  try {
    logLevel = logLevelFromEnv(env);
  } catch (err) {
    throw new ConfigError(firstLine(err));
  }

  return {
    kind: 'run',
    options: {
      nodeName,
      runtimeSocket,
      hostRunDir,
      kubeconfig,
      listen,
      logLevel,
      maxParallelPulls,
      imageGcHighThresholdPercent,
      imageGcLowThresholdPercent,
      imageFsRoot,
      podProbe,
      maxConcurrentProbes,
      probeStatusWindowMs,
      ...(pullCredentialsUrl !== undefined && { pullCredentialsUrl }),
      ...(ipam && { ipam }),
    },
  };
}

function parseMaxParallelPulls(text: string | undefined): number {
  if (text === undefined) return DEFAULT_MAX_PARALLEL_PULLS;
  const value = Number(text.trim());
  if (!/^\d+$/.test(text.trim()) || value < 1 || value > MAX_PARALLEL_PULLS_LIMIT) {
    throw new ConfigError(
      `--max-parallel-pulls=${JSON.stringify(text)} must be a whole number from 1 to ${MAX_PARALLEL_PULLS_LIMIT} ` +
        '(pulls are never unlimited)',
    );
  }
  return value;
}

function parseBoolean(flag: string, text: string | undefined, fallback: boolean): boolean {
  if (text === undefined) return fallback;
  const value = text.trim().toLowerCase();
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new ConfigError(`${flag}=${JSON.stringify(text)} must be true or false`);
}

function parseWholeNumber(
  flag: string,
  text: string | undefined,
  fallback: number,
  [min, max]: readonly [number, number],
  why = '',
): number {
  if (text === undefined) return fallback;
  const value = Number(text.trim());
  if (!/^\d+$/.test(text.trim()) || value < min || value > max) {
    throw new ConfigError(
      `${flag}=${JSON.stringify(text)} must be a whole number from ${min} to ${max}${why ? ` ${why}` : ''}`,
    );
  }
  return value;
}

/** Parse `[host]:port` (`:10221`, `127.0.0.1:0`, `[::1]:8080`, `localhost:10221`). */
export function parseListenAddress(text: string, what = 'address'): ListenAddress {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(text.trim());
  const bad = (why: string): ConfigError =>
    new ConfigError(`${what}=${JSON.stringify(text)} ${why}; expected [HOST]:PORT such as :10221 or 127.0.0.1:10221`);
  if (!match) throw bad('is not HOST:PORT');
  const port = Number(match[3]);
  if (port > 65535) throw bad('has a port above 65535');
  const host = match[1] ?? match[2];
  if (host === undefined || host === '') return { host: undefined, port };
  if (match[1] === undefined && !/^[A-Za-z0-9.-]+$/.test(host)) throw bad('has an invalid host');
  return { host, port };
}

/** Why a path cannot be read as a file, or undefined when it can. */
export function readableFileProblem(path: string): string | undefined {
  try {
    if (!statSync(path).isFile()) return 'is not a regular file';
    accessSync(path, constants.R_OK);
    return undefined;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return 'does not exist';
    if (code === 'EACCES') return 'is not readable';
    return `cannot be read (${code ?? firstLine(err)})`;
  }
}

function parseFlags(argv: readonly string[]) {
  try {
    return parseArgs({ args: [...argv], options: FLAGS, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new ConfigError(`${firstLine(err)} (see kruise-daemon --help)`);
  }
}

function kubeconfigPath(
  flag: string | undefined,
  envValue: string | undefined,
  checkFile: FileCheck,
): string | undefined {
  const fromFlag = nonEmpty('--kubeconfig', flag);
  if (fromFlag !== undefined) return checkedFile('--kubeconfig', fromFlag, checkFile);
  const entries = (envValue ?? '').split(delimiter).filter((p) => p !== '');
  if (entries.length === 0) return undefined;
  if (entries.length > 1) {
    throw new ConfigError(
      `KUBECONFIG names ${entries.length} files; kruise-daemon reads one kubeconfig (pass --kubeconfig PATH)`,
    );
  }
  return checkedFile('KUBECONFIG', entries[0]!, checkFile);
}

function checkedFile(what: string, path: string, checkFile: FileCheck): string {
  const problem = checkFile(path);
  if (problem !== undefined) throw new ConfigError(`${what}=${path}: the kubeconfig file ${problem}`);
  return path;
}

function nonEmpty(what: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value.trim() === '') throw new ConfigError(`${what} is empty`);
  return value;
}

/** An environment variable set to the empty string counts as unset. */
function fromEnv(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

function isDnsSubdomain(name: string): boolean {
  return name.length <= 253 && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(name);
}

function firstLine(err: unknown): string {
  const text = errorMessage(err);
  return text.split('\n')[0] ?? text;
}
