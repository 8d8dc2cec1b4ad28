// `kruise-daemon ipam ls [--ipam-data-dir DIR] [--json]`: the allocations and reservations of every network in the
// kruise-ipam store, read directly from disk (no lock needed: the state file is always whole). The store is the
// agent's: the same flag, the same IPAM_DATA_DIR and the same default (ipamDataDir in options.ts).
import { readdirSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { DEFAULT_DATA_DIR } from '../../cni/config.js';
import { parseIp } from '../../cni/ip.js';
import type { Entry } from '../../cni/state.js';
import { readState, storePaths } from '../../cni/store.js';
import { errorMessage } from '../../util/error-message.js';
import { parseArgsProblem } from '../../util/parse-args-problem.js';
import type { CommandIo } from '../command-io.js';
import { IpamFlagError, ipamDataDir } from './options.js';

export const IPAM_COMMAND_USAGE = `Usage: kruise-daemon ipam ls [--ipam-data-dir DIR] [--json]

Lists the addresses the kruise-ipam CNI plugin holds for sandboxes and keeps reserved for pod names, per network.
  --ipam-data-dir DIR  the store, as the agent's flag (env IPAM_DATA_DIR); default ${DEFAULT_DATA_DIR}
  --json               one JSON document instead of a table`;

const LS_FLAGS = {
  'ipam-data-dir': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

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

/** Every entry of every network under dataDir; undefined when there is no such directory. */
export function listEntries(dataDir: string): ListedEntry[] | undefined {
  let networks: string[];
  try {
    networks = readdirSync(dataDir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
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

// eslint-disable-next-line @typescript-eslint/require-await -- the command table takes async runners; this one needs no await yet
export async function runIpamCommand(argv: string[], io: CommandIo): Promise<number> {
  let values: { 'ipam-data-dir'?: string; json?: boolean; help?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({ args: argv, options: LS_FLAGS, allowPositionals: true, strict: true }));
  } catch (err) {
    const flags = Object.keys(LS_FLAGS).map((f) => `--${f}`);
    io.stderr.write(
      `kruise-daemon ipam: ${parseArgsProblem(err)} (its flags: ${flags.join(', ')})\n${IPAM_COMMAND_USAGE}\n`,
    );
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
  let dataDir: string;
  try {
    dataDir = ipamDataDir(values['ipam-data-dir'], io.env);
  } catch (err) {
    if (!(err instanceof IpamFlagError)) throw err;
    io.stderr.write(`kruise-daemon ipam ls: ${err.message}\n`);
    return 2;
  }
  let rows: ListedEntry[] | undefined;
  try {
    rows = listEntries(dataDir);
  } catch (err) {
    io.stderr.write(`kruise-daemon ipam ls: ${errorMessage(err)}\n`);
    return 1;
  }
  if (rows === undefined) {
    io.stderr.write(
      `kruise-daemon ipam ls: no kruise-ipam store at ${dataDir} (the directory of the agent's --ipam-data-dir; ` +
        `name it with --ipam-data-dir DIR or IPAM_DATA_DIR)\n`,
    );
    return 1;
  }
  io.stdout.write(values.json ? `${JSON.stringify({ dataDir, entries: rows }, null, 2)}\n` : `${formatTable(rows)}\n`);
  return 0;
}
