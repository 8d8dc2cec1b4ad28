// IPv4/IPv6 addresses as bigints: parse, format (IPv6 in RFC 5952 form), CIDR arithmetic. Tiny on purpose: the
// plugin runs once per CNI call, so it imports nothing (not even node:net).

export type IpFamily = 4 | 6;

export interface IpAddress {
  family: IpFamily;
  value: bigint;
}

export interface IpNetwork {
  family: IpFamily;
  /** The network address (host bits zero). */
  base: bigint;
  prefix: number;
}

const BITS: Record<IpFamily, number> = { 4: 32, 6: 128 };

export function bitsOf(family: IpFamily): number {
  return BITS[family];
}

function parseIpv4(text: string): bigint | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0n;
  for (const part of parts) {
    if (!/^(0|[1-9]\d{0,2})$/.test(part)) return undefined;
    const n = Number(part);
    if (n > 255) return undefined;
    value = (value << 8n) | BigInt(n);
  }
  return value;
}

function parseIpv6(text: string): bigint | undefined {
  if (!/^[0-9A-Fa-f:.]+$/.test(text)) return undefined;
  let head = text;
  let tailV4: bigint | undefined;
  const lastColon = text.lastIndexOf(':');
  if (text.includes('.')) {
    tailV4 = parseIpv4(text.slice(lastColon + 1));
    if (tailV4 === undefined) return undefined;
    head = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const halves = head.split('::');
  if (halves.length > 2) return undefined;
  const groupsOf = (s: string): string[] | undefined => {
    if (s === '') return [];
    const groups = s.split(':');
    return groups.every((g) => /^[0-9A-Fa-f]{1,4}$/.test(g)) ? groups : undefined;
  };
  const left = groupsOf(halves[0]!);
  const right = halves.length === 2 ? groupsOf(halves[1]!) : [];
  if (!left || !right) return undefined;
  let groups: string[];
  if (halves.length === 2) {
    const missing = 8 - left.length - right.length;
    if (missing < 1) return undefined;
    groups = [...left, ...Array<string>(missing).fill('0'), ...right];
  } else {
    groups = left;
  }
  if (groups.length !== 8) return undefined;
  let value = 0n;
  for (const g of groups) value = (value << 16n) | BigInt(parseInt(g, 16));
  if (tailV4 !== undefined) value = (value & ~0xffffffffn) | tailV4;
  return value;
}

/** Parse an IPv4 or IPv6 address (no prefix, no zone). */
export function parseIp(text: string): IpAddress | undefined {
  if (typeof text !== 'string') return undefined;
  if (text.includes(':')) {
    const value = parseIpv6(text);
    return value === undefined ? undefined : { family: 6, value };
  }
  const value = parseIpv4(text);
  return value === undefined ? undefined : { family: 4, value };
}

export function formatIp(ip: IpAddress): string {
  if (ip.family === 4) {
    const v = ip.value;
    return [24n, 16n, 8n, 0n].map((s) => String((v >> s) & 0xffn)).join('.');
  }
  const groups: number[] = [];
  for (let i = 7; i >= 0; i--) groups.push(Number((ip.value >> BigInt(i * 16)) & 0xffffn));
  // RFC 5952: compress the longest run (>= 2) of zero groups, the first one on a tie
  let bestStart = -1;
  let bestLength = 0;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength && j - i >= 2) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}

/** The canonical text of an address, or undefined when it is not one. */
export function canonicalIp(text: string): string | undefined {
  const ip = parseIp(text);
  return ip ? formatIp(ip) : undefined;
}

/** Parse `addr/prefix`; the address may have host bits set (`address` keeps them, `network.base` clears them). */
export function parseCidr(text: string): { address: IpAddress; network: IpNetwork } | undefined {
  if (typeof text !== 'string') return undefined;
  const slash = text.indexOf('/');
  if (slash < 0) return undefined;
  const address = parseIp(text.slice(0, slash));
  const prefixText = text.slice(slash + 1);
  if (!address || !/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = Number(prefixText);
  if (prefix > BITS[address.family]) return undefined;
  return { address, network: { family: address.family, base: address.value & maskOf(address.family, prefix), prefix } };
}

export function maskOf(family: IpFamily, prefix: number): bigint {
  const bits = BigInt(BITS[family]);
  const all = (1n << bits) - 1n;
  return all ^ ((1n << (bits - BigInt(prefix))) - 1n);
}

export function lastOf(network: IpNetwork): bigint {
  return network.base | ((1n << BigInt(BITS[network.family] - network.prefix)) - 1n);
}

export function contains(network: IpNetwork, ip: IpAddress): boolean {
  return ip.family === network.family && ip.value >= network.base && ip.value <= lastOf(network);
}

export function formatNetwork(network: IpNetwork): string {
  return `${formatIp({ family: network.family, value: network.base })}/${network.prefix}`;
}
