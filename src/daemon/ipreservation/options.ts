// The agent's IP-reservation flags. All off by default: `--ipam` runs the reservation controller, `--ipam-install`
// also installs the plugin wrapper (and, with --ipam-subnet, a conflist) into the node's CNI directories.
// The store's directory is resolved by ipamDataDir() for the agent and for `kruise-daemon ipam ls` alike.
import { DEFAULT_DATA_DIR } from '../../cni/config.js';

/** A bad IPAM flag (the agent's option parser turns it into its ConfigError: exit 2). */
export class IpamFlagError extends Error {
  override readonly name = 'IpamFlagError';
}

export const DEFAULT_CNI_BIN_DIR = '/opt/cni/bin';
export const DEFAULT_CNI_CONF_DIR = '/etc/cni/net.d';
export const DEFAULT_IPAM_NETWORK = 'kruise-ipam';
export const DEFAULT_IPAM_BRIDGE = 'cni0';
export const DEFAULT_GC_INTERVAL_MS = 60_000;
export const DEFAULT_GC_GRACE_MS = 120_000;

export type InstallMode = 'copy' | 'in-place';

export interface IpamOptions {
  install: boolean;
  /** copy: Node and the plugin go to <cni-bin-dir>/kruise-ipam.d (DaemonSet); in-place: the wrapper uses ours. */
  installMode: InstallMode;
  cniBinDir: string;
  cniConfDir: string;
  dataDir: string;
  /** Subnets of the conflist to install (one range set each); empty = install the plugin only. */
  subnets: string[];
  networkName: string;
  bridge: string;
  gcIntervalMs: number;
  gcGraceMs: number;
}

export const IPAM_FLAGS = {
  ipam: { type: 'boolean' },
  'ipam-install': { type: 'boolean' },
  'ipam-install-mode': { type: 'string' },
  'cni-bin-dir': { type: 'string' },
  'cni-conf-dir': { type: 'string' },
  'ipam-data-dir': { type: 'string' },
  'ipam-subnet': { type: 'string' },
  'ipam-network-name': { type: 'string' },
  'ipam-bridge': { type: 'string' },
} as const;

export const IPAM_USAGE = `  --ipam                  run the IP-reservation controller for the kruise-ipam CNI plugin (off by default)
  --ipam-install          also install the kruise-ipam plugin into --cni-bin-dir on start (implies --ipam)
  --ipam-install-mode M   copy (default: Node and the plugin are copied to <cni-bin-dir>/kruise-ipam.d, for an
                          agent in a container) or in-place (the wrapper runs this agent's own Node and files)
  --cni-bin-dir DIR       the node's CNI plugin directory (default ${DEFAULT_CNI_BIN_DIR})
  --cni-conf-dir DIR      the node's CNI config directory (default ${DEFAULT_CNI_CONF_DIR})
  --ipam-data-dir DIR     kruise-ipam's store (env IPAM_DATA_DIR); default ${DEFAULT_DATA_DIR}
  --ipam-subnet CIDR[,CIDR]  with --ipam-install: write 10-kruise-ipam.conflist (bridge + kruise-ipam, one range set each)
  --ipam-network-name N   network name of that conflist (default ${DEFAULT_IPAM_NETWORK})
  --ipam-bridge NAME      bridge of that conflist (default ${DEFAULT_IPAM_BRIDGE})`;

export interface IpamFlagValues {
  ipam?: boolean;
  'ipam-install'?: boolean;
  'ipam-install-mode'?: string;
  'cni-bin-dir'?: string;
  'cni-conf-dir'?: string;
  'ipam-data-dir'?: string;
  'ipam-subnet'?: string;
  'ipam-network-name'?: string;
  'ipam-bridge'?: string;
}

/** `what` is the flag (`--cni-bin-dir`) or variable (`IPAM_DATA_DIR`) the value came from. */
function absolute(what: string, value: string | undefined, fallback: string): string {
  if (value === undefined) return fallback;
  if (!value.startsWith('/')) throw new IpamFlagError(`${what}=${JSON.stringify(value)} must be an absolute path`);
  return value;
}

/**
 * kruise-ipam's store: --ipam-data-dir, else $IPAM_DATA_DIR, else the plugin's own default dataDir. One answer for
 * the agent and for `kruise-daemon ipam ls`, so the tool reads the store the agent serves.
 */
export function ipamDataDir(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  if (flag !== undefined) return absolute('--ipam-data-dir', flag, DEFAULT_DATA_DIR);
  const fromEnv = env.IPAM_DATA_DIR?.trim();
  return absolute('IPAM_DATA_DIR', fromEnv === '' ? undefined : fromEnv, DEFAULT_DATA_DIR);
}

/** The IPAM options, or undefined when neither --ipam nor --ipam-install is given. */
export function parseIpamFlags(values: IpamFlagValues, env: NodeJS.ProcessEnv = {}): IpamOptions | undefined {
  const install = values['ipam-install'] === true;
  if (!install && values.ipam !== true) {
    const stray = Object.keys(IPAM_FLAGS).find(
      (k) => k !== 'ipam' && k !== 'ipam-install' && values[k as keyof IpamFlagValues] !== undefined,
    );
    if (stray) throw new IpamFlagError(`--${stray} needs --ipam or --ipam-install`);
    return undefined;
  }
  const subnets = (values['ipam-subnet'] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const s of subnets) {
    if (!/^[0-9A-Fa-f.:]+\/\d{1,3}$/.test(s))
      throw new IpamFlagError(`--ipam-subnet: ${JSON.stringify(s)} is not a CIDR`);
  }
  if (subnets.length > 0 && !install) throw new IpamFlagError('--ipam-subnet needs --ipam-install');
  const networkName = values['ipam-network-name'] ?? DEFAULT_IPAM_NETWORK;
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(networkName)) {
    throw new IpamFlagError(`--ipam-network-name=${JSON.stringify(networkName)} is not a CNI network name`);
  }
  const bridge = values['ipam-bridge'] ?? DEFAULT_IPAM_BRIDGE;
  if (!/^[A-Za-z0-9_.-]{1,15}$/.test(bridge))
    throw new IpamFlagError(`--ipam-bridge=${JSON.stringify(bridge)} is not an interface name`);
  const installMode = values['ipam-install-mode'] ?? 'copy';
  if (installMode !== 'copy' && installMode !== 'in-place') {
    throw new IpamFlagError(`--ipam-install-mode=${JSON.stringify(installMode)}: expected copy or in-place`);
  }
  return {
    install,
    installMode,
    cniBinDir: absolute('--cni-bin-dir', values['cni-bin-dir'], DEFAULT_CNI_BIN_DIR),
    cniConfDir: absolute('--cni-conf-dir', values['cni-conf-dir'], DEFAULT_CNI_CONF_DIR),
    dataDir: ipamDataDir(values['ipam-data-dir'], env),
    subnets,
    networkName,
    bridge,
    gcIntervalMs: DEFAULT_GC_INTERVAL_MS,
    gcGraceMs: DEFAULT_GC_GRACE_MS,
  };
}
