// `kruise-daemon ipam ls [--data-dir DIR] [--json]`: the allocations and reservations of every network in the
// kruise-ipam store, read directly from disk (no lock needed: the state file is always whole).
import { readdirSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parseIp } from '../../cni/ip.js';
import type { Entry } from '../../cni/state.js';
import { readState, storePaths } from '../../cni/store.js';
import type { CommandIo } from '../commands.js';
import { DEFAULT_IPAM_DATA_DIR } from './options.js';

export const IPAM_COMMAND_USAGE = `Usage: kruise-daemon ipam ls [--data-dir DIR] [--json]

Lists the addresses the kruise-ipam CNI plugin holds for sandboxes and keeps reserved for pod names, per network.
  --data-dir DIR   the plugin's dataDir (default ${DEFAULT_IPAM_DATA_DIR})
  --json           one JSON document instead of a table`;

export interface ListedEntry {
  network: string;
  ip: string;
  state: 'held' | 'reserved';
  pod: string;
  podUid: string;
  sandbox: string;
  ifName: string;
  since: string;
  expires: string;
}

function listed(network: string, ip: string, e: Entry): ListedEntry {
  const pod = e.pod ? `${e.pod.namespace}/${e.pod.name}` : '';
  if (e.kind === 'held') {
    return {
      network,
      ip,
      state: 'held',
      pod,
      podUid: e.pod?.uid ?? '',
      sandbox: e.containerId,
      ifName: e.ifName,
      since: new Date(e.allocatedAt).toISOString(),
      expires: '',
    };
  }
  return {
    network,
    ip,
    state: 'reserved',
    pod,
    podUid: e.pod.uid ?? '',
    sandbox: e.lastContainerId,
    ifName: e.ifName,
    since: new Date(e.releasedAt).toISOString(),
    expires: new Date(e.expiresAt).toISOString(),
  };
}

export function listEntries(dataDir: string): ListedEntry[] {
  let networks: string[];
  try {
    networks = readdirSync(dataDir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const out: ListedEntry[] = [];
  for (const network of networks) {
    const state = readState(storePaths(dataDir, network));
    const ips = Object.keys(state.entries).sort(byAddress);
    for (const ip of ips) out.push(listed(network, ip, state.entries[ip]!));
  }
  return out;
}

function byAddress(a: string, b: string): number {
  const x = parseIp(a);
  const y = parseIp(b);
  if (!x || !y) return a < b ? -1 : 1;
  if (x.family !== y.family) return x.family - y.family;
  return x.value < y.value ? -1 : x.value > y.value ? 1 : 0;
}

export function formatTable(rows: readonly ListedEntry[]): string {
  const header = ['NETWORK', 'IP', 'STATE', 'POD', 'SANDBOX', 'SINCE', 'EXPIRES'];
  const cells = rows.map((r) => [
    r.network,
    r.ip,
    r.state,
    r.pod || '-',
    r.sandbox.slice(0, 13),
    r.since,
    r.expires || '-',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  return [header, ...cells]
    .map((line) =>
      line
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

export async function runIpamCommand(argv: string[], io: CommandIo): Promise<number> {
  let values: { 'data-dir'?: string; json?: boolean; help?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      options: { 'data-dir': { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    }));
  } catch (err) {
    io.stderr.write(`kruise-daemon ipam: ${err instanceof Error ? err.message : String(err)}\n${IPAM_COMMAND_USAGE}\n`);
    return 2;
  }
  if (values.help) {
    io.stdout.write(`${IPAM_COMMAND_USAGE}\n`);
    return 0;
  }
  if (positionals.length !== 1 || positionals[0] !== 'ls') {
    io.stderr.write(`kruise-daemon ipam: expected the subcommand ls\n${IPAM_COMMAND_USAGE}\n`);
    return 2;
  }
  const dataDir = values['data-dir'] ?? DEFAULT_IPAM_DATA_DIR;
  let rows: ListedEntry[];
  try {
    rows = listEntries(dataDir);
  } catch (err) {
    io.stderr.write(`kruise-daemon ipam ls: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
  io.stdout.write(values.json ? `${JSON.stringify({ dataDir, entries: rows }, null, 2)}\n` : `${formatTable(rows)}\n`);
  return 0;
}
