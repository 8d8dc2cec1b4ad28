// The network configuration on stdin, host-local compatible: `ipam.ranges` (a list of range sets, each a list of
// {subnet, rangeStart?, rangeEnd?, gateway?} of one family), or the legacy single `ipam.subnet`; `ipam.routes`;
// `ipam.dataDir`. Pod annotations come in `runtimeConfig["io.kubernetes.cri.pod-annotations"]` when the conflist
// declares that capability. Every problem is a CniError: 6 for undecodable JSON, 7 for a config we cannot use,
// 1 for a cniVersion we do not speak.
import { CniCode, CniError, quote } from './errors.js';
import {
  bitsOf,
  contains,
  formatIp,
  formatNetwork,
  lastOf,
  parseCidr,
  parseIp,
  type IpAddress,
  type IpFamily,
  type IpNetwork,
} from './ip.js';
import { errorMessage } from '../util/error-message.js';
import { isRecord } from '../util/is-record.js';

export const SUPPORTED_VERSIONS = ['0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'] as const;
export const DEFAULT_DATA_DIR = '/var/lib/cni/kruise-ipam';
export const POD_ANNOTATIONS_CAPABILITY = 'io.kubernetes.cri.pod-annotations';
export const RESERVED_IP_DURATION_ANNOTATION = 'io.kubernetes.cri/reserved-ip-duration';
export const VALID_ATTACHMENTS_KEY = 'cni.dev/valid-attachments';
export const MINUTE_MS = 60_000;

export interface AddressRange {
  subnet: IpNetwork;
  start: bigint;
  end: bigint;
  gateway: IpAddress;
}

export interface RangeSet {
  family: IpFamily;
  ranges: AddressRange[];
  /** Stable name of the set in the store: its first subnet, e.g. `10.1.0.0/16`. */
  key: string;
}

export interface Route {
  dst: string;
  gw?: string;
}

export interface Attachment {
  containerId: string;
  ifName: string;
}

export interface IpamConfig {
  cniVersion: string;
  networkName: string;
  rangeSets: RangeSet[];
  routes: Route[];
  dataDir: string;
  podAnnotations: Record<string, string>;
  /** Length of a "minute" of reserved-ip-duration: 60 000 except in tests (ipam.testOnlyMinuteMs). */
  minuteMs: number;
  /** GC: the attachments the runtime still has. */
  validAttachments: Attachment[] | undefined;
  /** CHECK: the addresses of prevResult (canonical, without prefix). */
  prevIps: string[] | undefined;
}

const NETWORK_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
/** NAME_MAX: the network name is the store's directory under dataDir. */
export const MAX_NAME_BYTES = 255;
/**
 * PATH_MAX (4096 with its NUL) less the longest path the store makes under dataDir:
 * `/<name, 255>/lock.d/t.<pid, 7>.<ms, 13>.<n, 6>` is 294 bytes.
 */
export const MAX_DATA_DIR_BYTES = 3800;

function bad(message: string): CniError {
  return new CniError(CniCode.invalidConfig, message);
}

function optionalString(obj: Record<string, unknown>, key: string, where: string): string | undefined {
  const value = obj[key];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw bad(`${where}.${key} must be a string`);
  return value;
}

/** Decode stdin; also used to learn the cniVersion for an error body before the config is validated. */
export function decodeConfig(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new CniError(CniCode.decodeFailure, `the network configuration on stdin is not JSON: ${errorMessage(err)}`);
  }
  if (!isRecord(value)) throw new CniError(CniCode.decodeFailure, 'the network configuration is not a JSON object');
  return value;
}

function parseAddressIn(text: string | undefined, network: IpNetwork, where: string): IpAddress | undefined {
  if (text === undefined) return undefined;
  const ip = parseIp(text);
  if (!ip) throw bad(`${where}=${quote(text)} is not an IP address`);
  if (!contains(network, ip)) throw bad(`${where}=${text} is outside the subnet ${formatNetwork(network)}`);
  return ip;
}

function parseRange(raw: unknown, where: string): AddressRange {
  if (!isRecord(raw)) throw bad(`${where} must be an object with a subnet`);
  const subnetText = optionalString(raw, 'subnet', where);
  if (subnetText === undefined) throw bad(`${where}.subnet is required`);
  const cidr = parseCidr(subnetText);
  if (!cidr) throw bad(`${where}.subnet=${quote(subnetText)} is not a CIDR`);
  const subnet = cidr.network;
  if (bitsOf(subnet.family) - subnet.prefix < 2) throw bad(`${where}.subnet=${subnetText} is too small`);
  const first = subnet.base + 1n;
  const last = lastOf(subnet) - 1n; // host-local's default end (the broadcast address of IPv4 is never handed out)
  const start = parseAddressIn(optionalString(raw, 'rangeStart', where), subnet, `${where}.rangeStart`)?.value ?? first;
  const end = parseAddressIn(optionalString(raw, 'rangeEnd', where), subnet, `${where}.rangeEnd`)?.value ?? last;
  if (start > end) throw bad(`${where}: rangeStart is after rangeEnd`);
  const gateway = parseAddressIn(optionalString(raw, 'gateway', where), subnet, `${where}.gateway`) ?? {
    family: subnet.family,
    value: first,
  };
  return { subnet, start, end, gateway };
}

function overlaps(a: AddressRange, b: AddressRange): boolean {
  return a.subnet.family === b.subnet.family && a.start <= b.end && b.start <= a.end;
}

function parseRangeSets(ipam: Record<string, unknown>): RangeSet[] {
  let rawSets: unknown[];
  if (ipam.ranges !== undefined) {
    if (!Array.isArray(ipam.ranges) || ipam.ranges.length === 0) throw bad('ipam.ranges must be a non-empty list');
    if (ipam.subnet !== undefined) throw bad('ipam: give either ranges or the legacy subnet, not both');
    rawSets = ipam.ranges as unknown[];
  } else if (ipam.subnet !== undefined) {
    rawSets = [[ipam]]; // legacy single range: subnet, rangeStart, rangeEnd, gateway at the ipam level
  } else {
    throw bad('ipam needs ranges (or a subnet)');
  }
  const sets: RangeSet[] = rawSets.map((rawSet, i) => {
    if (!Array.isArray(rawSet) || rawSet.length === 0) throw bad(`ipam.ranges[${i}] must be a non-empty list`);
    const ranges = (rawSet as unknown[]).map((r, j) => parseRange(r, `ipam.ranges[${i}][${j}]`));
    const family = ranges[0]!.subnet.family;
    if (ranges.some((r) => r.subnet.family !== family)) throw bad(`ipam.ranges[${i}] mixes IPv4 and IPv6`);
    return { family, ranges, key: formatNetwork(ranges[0]!.subnet) };
  });
  const all = sets.flatMap((s) => s.ranges);
  for (let a = 0; a < all.length; a++) {
    for (let b = a + 1; b < all.length; b++) {
      if (overlaps(all[a]!, all[b]!)) {
        throw bad(
          `ipam.ranges overlap: ${formatIp({ family: all[a]!.subnet.family, value: all[a]!.start })}.. and ${formatIp({ family: all[b]!.subnet.family, value: all[b]!.start })}..`,
        );
      }
    }
  }
  if (new Set(sets.map((s) => s.key)).size !== sets.length) throw bad('ipam.ranges: two range sets start alike');
  return sets;
}

function parseRoutes(raw: unknown): Route[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw bad('ipam.routes must be a list');
  return raw.map((r: unknown, i) => {
    if (!isRecord(r)) throw bad(`ipam.routes[${i}] must be an object`);
    const dst = optionalString(r, 'dst', `ipam.routes[${i}]`);
    if (dst === undefined || !parseCidr(dst)) throw bad(`ipam.routes[${i}].dst must be a CIDR`);
    const gw = optionalString(r, 'gw', `ipam.routes[${i}]`);
    if (gw !== undefined && !parseIp(gw)) throw bad(`ipam.routes[${i}].gw is not an IP address`);
    return gw === undefined ? { dst } : { dst, gw };
  });
}

function parsePodAnnotations(conf: Record<string, unknown>): Record<string, string> {
  const runtimeConfig = conf.runtimeConfig;
  if (!isRecord(runtimeConfig)) return {};
  const annotations = runtimeConfig[POD_ANNOTATIONS_CAPABILITY];
  if (!isRecord(annotations)) return {};
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(annotations)) if (typeof v === 'string') out[k] = v;
  return out;
}

function parseAttachments(conf: Record<string, unknown>): Attachment[] | undefined {
  const raw = conf[VALID_ATTACHMENTS_KEY];
  if (raw === undefined) return undefined;
  if (!Array.isArray(raw)) throw bad(`${VALID_ATTACHMENTS_KEY} must be a list`);
  return raw.map((a: unknown, i) => {
    if (!isRecord(a) || typeof a.containerID !== 'string' || typeof a.ifname !== 'string') {
      throw bad(`${VALID_ATTACHMENTS_KEY}[${i}] must be {containerID, ifname}`);
    }
    return { containerId: a.containerID, ifName: a.ifname };
  });
}

function parsePrevIps(conf: Record<string, unknown>): string[] | undefined {
  const prev = conf.prevResult;
  if (prev === undefined) return undefined;
  if (!isRecord(prev) || (prev.ips !== undefined && !Array.isArray(prev.ips))) throw bad('prevResult is malformed');
  return ((prev.ips as unknown[] | undefined) ?? []).map((entry, i) => {
    const address = isRecord(entry) ? entry.address : undefined;
    const cidr = typeof address === 'string' ? parseCidr(address) : undefined;
    if (!cidr) throw bad(`prevResult.ips[${i}].address is not a CIDR`);
    return formatIp(cidr.address);
  });
}

/** The cniVersion of a decoded config, if it is a string (errors are answered in it). */
export function versionOf(conf: Record<string, unknown>): string {
  return typeof conf.cniVersion === 'string' && conf.cniVersion !== '' ? conf.cniVersion : '1.0.0';
}

export function checkVersion(version: string): void {
  if (!(SUPPORTED_VERSIONS as readonly string[]).includes(version)) {
    throw new CniError(
      CniCode.incompatibleVersion,
      `cniVersion ${quote(version)} is not supported`,
      `supported: ${SUPPORTED_VERSIONS.join(', ')}`,
    );
  }
}

function parseDataDir(ipam: Record<string, unknown>): string {
  const dataDir = optionalString(ipam, 'dataDir', 'ipam') ?? DEFAULT_DATA_DIR;
  const where = `ipam.dataDir=${quote(dataDir)}`;
  if (!dataDir.startsWith('/')) throw bad(`${where}: must be an absolute path`);
  if (dataDir.includes('\0')) throw bad(`${where}: contains a NUL byte`);
  const bytes = Buffer.byteLength(dataDir);
  if (bytes > MAX_DATA_DIR_BYTES) {
    throw bad(
      `${where}: ${bytes} bytes, at most ${MAX_DATA_DIR_BYTES} (the store's paths under it stay below PATH_MAX)`,
    );
  }
  const long = dataDir.split('/').find((part) => Buffer.byteLength(part) > MAX_NAME_BYTES);
  if (long !== undefined) throw bad(`${where}: the component ${quote(long)} is longer than ${MAX_NAME_BYTES} bytes`);
  return dataDir;
}

/** Validate a decoded network configuration for an IPAM call. */
export function parseIpamConfig(conf: Record<string, unknown>): IpamConfig {
  if (typeof conf.cniVersion !== 'string') throw bad('cniVersion is required');
  checkVersion(conf.cniVersion);
  const networkName = conf.name;
  if (typeof networkName !== 'string' || !NETWORK_NAME.test(networkName)) {
    throw bad(`name=${quote(networkName)}: a network name is [A-Za-z0-9][A-Za-z0-9_.-]*`);
  }
  if (networkName.length > MAX_NAME_BYTES) {
    throw bad(
      `name=${quote(networkName)}: at most ${MAX_NAME_BYTES} characters (it names the store's directory under ipam.dataDir)`,
    );
  }
  const ipam = conf.ipam;
  if (!isRecord(ipam)) throw bad('ipam is required');
  const dataDir = parseDataDir(ipam);
  let minuteMs = MINUTE_MS;
  if (ipam.testOnlyMinuteMs !== undefined) {
    const v = ipam.testOnlyMinuteMs;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > MINUTE_MS) {
      throw bad('ipam.testOnlyMinuteMs must be an integer from 1 to 60000');
    }
    minuteMs = v;
  }
  return {
    cniVersion: conf.cniVersion,
    networkName,
    rangeSets: parseRangeSets(ipam),
    routes: parseRoutes(ipam.routes),
    dataDir,
    podAnnotations: parsePodAnnotations(conf),
    minuteMs,
    validAttachments: parseAttachments(conf),
    prevIps: parsePrevIps(conf),
  };
}

export type DurationReading =
  { kind: 'absent' } | { kind: 'none' } | { kind: 'minutes'; minutes: number } | { kind: 'invalid'; value: string };

/** At most a year: a larger value is surely a mistake. */
export const MAX_RESERVED_MINUTES = 525_600;

/** Read `io.kubernetes.cri/reserved-ip-duration`: absent; "0" = none; a positive integer of minutes; else invalid. */
export function reservedDuration(annotations: Record<string, string>): DurationReading {
  const value = annotations[RESERVED_IP_DURATION_ANNOTATION];
  if (value === undefined) return { kind: 'absent' };
  const trimmed = value.trim();
  if (!/^\d{1,7}$/.test(trimmed)) return { kind: 'invalid', value };
  const minutes = Number(trimmed);
  if (minutes === 0) return { kind: 'none' };
  if (minutes > MAX_RESERVED_MINUTES) return { kind: 'invalid', value };
  return { kind: 'minutes', minutes };
}
