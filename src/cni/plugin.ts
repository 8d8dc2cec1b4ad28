// The kruise-ipam plugin: one CNI call per process. Reads the call from the environment and the network
// configuration from stdin, runs it against the network's store under its lock, prints the result (ADD), the
// supported versions (VERSION) or a CNI error, and returns the exit status. Synchronous from end to end.
import { collect, assign, expire, freeCount, heldBy, release, type Attachment } from './allocator.js';
import {
  checkVersion,
  decodeConfig,
  parseIpamConfig,
  reservedDuration,
  RESERVED_IP_DURATION_ANNOTATION,
  SUPPORTED_VERSIONS,
  versionOf,
  type IpamConfig,
} from './config.js';
import { readCniCall, type CniCall } from './env.js';
import { CniCode, CniError, describeErrno, errorBody, isErrno, quote, storeFailure } from './errors.js';
import { buildResult } from './result.js';
import { addNote, type NetworkState, type PodIdentity } from './state.js';
import { ensureStoreDir, readState, storePaths, updateSync } from './store.js';
import { accessSync, constants } from 'node:fs';

export interface PluginIo {
  env: NodeJS.ProcessEnv;
  stdin: string;
  now(): number;
  stdout(text: string): void;
  stderr(text: string): void;
}

/** Run one CNI call; resolves to the exit status (0 success, 1 error printed on stdout). */
export function runPlugin(io: PluginIo): number {
  let version = '1.0.0';
  try {
    const command = io.env.CNI_COMMAND;
    const conf = io.stdin.trim() === '' && command === 'VERSION' ? {} : decodeConfig(io.stdin);
    version = versionOf(conf);
    if (command === 'VERSION') {
      io.stdout(`${JSON.stringify({ cniVersion: version, supportedVersions: SUPPORTED_VERSIONS })}\n`);
      return 0;
    }
    checkVersion(version);
    const call = readCniCall(io.env);
    const config = parseIpamConfig(conf);
    let out: unknown;
    try {
      out = dispatch(call, config, io);
    } catch (err) {
      throw storeFailure(err, 'ipam.dataDir', config.dataDir);
    }
    if (out !== undefined) io.stdout(`${JSON.stringify(out)}\n`);
    return 0;
  } catch (err) {
    const body = errorBody(err, version);
    io.stdout(`${JSON.stringify(body)}\n`);
    // unexpected: one line for the runtime's log (a CniError is the runtime's to report)
    if (!(err instanceof CniError)) io.stderr(`kruise-ipam: ${body.msg}\n`);
    return 1;
  }
}

function dispatch(call: CniCall, config: IpamConfig, io: PluginIo): unknown {
  switch (call.command) {
    case 'ADD':
      return add(call, config, io);
    case 'DEL':
      del(call, config, io);
      return undefined;
    case 'CHECK':
      check(call, config);
      return undefined;
    case 'GC':
      gc(config, io);
      return undefined;
    case 'STATUS':
      status(config, io);
      return undefined;
    default:
      throw new CniError(CniCode.invalidEnv, `CNI_COMMAND ${call.command} is not handled`);
  }
}

function podIdentity(call: CniCall): PodIdentity | undefined {
  if (!call.pod) return undefined;
  return call.pod.uid
    ? { namespace: call.pod.namespace, name: call.pod.name, uid: call.pod.uid }
    : { namespace: call.pod.namespace, name: call.pod.name };
}

/** The duration the annotations ask for: minutes, 0 (explicitly none, or invalid), or undefined (not given). */
function durationOf(call: CniCall, config: IpamConfig, io: PluginIo, state: NetworkState): number | undefined {
  const reading = reservedDuration(config.podAnnotations);
  const pod = podIdentity(call);
  if (reading.kind === 'invalid') {
    const who = pod ? `pod ${pod.namespace}/${pod.name}` : `sandbox ${call.containerId}`;
    io.stderr(
      `kruise-ipam: ${who}: ${RESERVED_IP_DURATION_ANNOTATION}=${quote(reading.value)} is not a whole number of minutes (1-525600); the IP is not reserved\n`,
    );
    addNote(state, {
      kind: 'invalid-duration',
      at: io.now(),
      pod,
      containerId: call.containerId,
      detail: reading.value,
    });
    return 0;
  }
  if (reading.kind === 'minutes') {
    if (!pod) {
      addNote(state, {
        kind: 'no-pod-identity',
        at: io.now(),
        containerId: call.containerId,
        detail: 'CNI_ARGS lack K8S_POD_NAMESPACE/K8S_POD_NAME',
      });
      return 0;
    }
    return reading.minutes;
  }
  return reading.kind === 'none' ? 0 : undefined;
}

function add(call: CniCall, config: IpamConfig, io: PluginIo): unknown {
  const paths = storePaths(config.dataDir, config.networkName);
  const assigned = updateSync(paths, (state) => {
    const now = io.now();
    expire(state, now);
    const minutes = durationOf(call, config, io, state);
    const value = assign(
      state,
      config,
      {
        containerId: call.containerId,
        ifName: call.ifName,
        pod: podIdentity(call),
        reservedMinutes: minutes ? minutes : undefined,
        minuteMs: config.minuteMs,
      },
      now,
    );
    return { changed: true, value };
  });
  return buildResult(config, assigned);
}

function del(call: CniCall, config: IpamConfig, io: PluginIo): void {
  const paths = storePaths(config.dataDir, config.networkName);
  updateSync(paths, (state) => {
    const now = io.now();
    const before = state.notes.length;
    const expired = expire(state, now);
    const attachment: Attachment = { containerId: call.containerId, ifName: call.ifName };
    const holds = heldBy(state, attachment).length > 0;
    const minutes = holds ? durationOf(call, config, io, state) : undefined;
    const released = release(state, attachment, minutes, config.minuteMs, now);
    return { changed: expired.length > 0 || released.length > 0 || state.notes.length !== before, value: undefined };
  });
}

function check(call: CniCall, config: IpamConfig): void {
  const state = readState(storePaths(config.dataDir, config.networkName));
  const held = heldBy(state, call);
  for (const set of config.rangeSets) {
    if (!held.some((h) => h.entry.set === set.key)) {
      throw new CniError(CniCode.unknownContainer, `${call.containerId}/${call.ifName} holds no address of ${set.key}`);
    }
  }
  for (const ip of config.prevIps ?? []) {
    if (!held.some((h) => h.ip === ip)) {
      throw new CniError(
        CniCode.unknownContainer,
        `${call.containerId}/${call.ifName} does not hold ${ip} of prevResult`,
      );
    }
  }
}

function gc(config: IpamConfig, io: PluginIo): void {
  const valid = config.validAttachments;
  if (!valid) throw new CniError(CniCode.invalidConfig, 'GC needs cni.dev/valid-attachments');
  const keep = new Set(valid.map((a) => `${a.containerId}/${a.ifName}`));
  updateSync(storePaths(config.dataDir, config.networkName), (state) => {
    const now = io.now();
    const expired = expire(state, now);
    const released = collect(state, (a) => keep.has(`${a.containerId}/${a.ifName}`), config.minuteMs, now);
    return { changed: expired.length > 0 || released.length > 0, value: undefined };
  });
}

function status(config: IpamConfig, io: PluginIo): void {
  const paths = storePaths(config.dataDir, config.networkName);
  try {
    ensureStoreDir(paths);
    accessSync(paths.dir, constants.W_OK);
  } catch (err) {
    const why = isErrno(err) ? describeErrno(err) : String(err);
    throw new CniError(
      CniCode.notAvailable,
      `ipam.dataDir ${quote(config.dataDir)}: the store is not writable: ${why}`,
    );
  }
  const state = readState(paths);
  expire(state, io.now()); // counted as free: the next ADD expires them
  for (const set of config.rangeSets) {
    if (freeCount(state, set) <= 0n) throw new CniError(CniCode.notAvailable, `no free address left in ${set.key}`);
  }
}
