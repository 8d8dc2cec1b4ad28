// The ADD result in the form the config's cniVersion asks for: 1.x `{ips: [{address, gateway}]}`; 0.3.x/0.4.0
// add `version: "4"|"6"` to every address.
import type { IpamConfig } from './config.js';
import { formatIp, parseIp } from './ip.js';
import type { Assigned } from './allocator.js';

export interface IpResult {
  version?: '4' | '6';
  address: string;
  gateway?: string;
}

export interface IpamResult {
  cniVersion: string;
  ips: IpResult[];
  routes: Array<{ dst: string; gw?: string }>;
  dns: Record<string, never>;
}

export function isLegacyVersion(version: string): boolean {
  return version.startsWith('0.');
}

export function buildResult(config: IpamConfig, assigned: readonly Assigned[]): IpamResult {
  const legacy = isLegacyVersion(config.cniVersion);
  const ips: IpResult[] = [];
  for (const a of assigned) {
    const set = config.rangeSets.find((s) => s.key === a.set);
    const ip = parseIp(a.ip);
    if (!set || !ip) continue;
    const range = set.ranges.find((r) => ip.value >= r.start && ip.value <= r.end) ?? set.ranges[0]!;
    const gw = range.gateway;
    const entry: IpResult = {
      address: `${a.ip}/${range.subnet.prefix}`,
      gateway: formatIp(gw),
    };
    ips.push(legacy ? { version: ip.family === 4 ? '4' : '6', ...entry } : entry);
  }
  return { cniVersion: config.cniVersion, ips, routes: config.routes, dns: {} };
}
