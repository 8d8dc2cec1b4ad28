// Component "pod-network": what containerd's CNI integration needs, per cluster. A plugin directory of symlinks
// to Debian's plugins in /usr/lib/cni (other plugins, such as the project's IPAM plugin, may be added beside them),
// a conf dir with a default bridge + host-local conflist, and the Linux bridge created with the gateway address so
// the host reaches pods. The bridge plugin runs with isGateway=false and ipMasq=false: no iptables rules, no
// ip_forward change. The subnet 10.X.0.0/16 is derived from the cluster id, moved on if a host route overlaps it,
// and kept in allocations.json. CLUSTER_POD_IPAM=kruise-ipam puts the project's kruise-ipam behind the bridge instead
// of host-local (same ranges; the plugin, bundled, is installed into the plugin directory).
import { mkdir, readdir, readlink, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { installPluginBundled } from '../../../src/daemon/ipreservation/install.js';
import type { ClusterContext } from '../component.js';
import type { ComponentStatus, ComponentWithStatus } from './component-status.js';
import { clusterPaths, type ClusterPaths } from '../paths.js';
import { readAllocations, saveAllocations } from './allocations.js';
import { ClusterError } from './errors.js';
import { run, runChecked } from './exec.js';
import { writeIfChanged } from './files.js';
import { binaryPathsOf } from '../k8s/binaries.js';

const LIBCNI_RESULTS_DIR = '/var/lib/cni/results';
const OCTET_MIN = 100;
const OCTET_MAX = 249;

export interface PodSubnet {
  octet: number;
  cidr: string;
  gateway: string;
  rangeStart: string;
  rangeEnd: string;
}

export function podSubnet(octet: number): PodSubnet {
  return {
    octet,
    cidr: `10.${octet}.0.0/16`,
    gateway: `10.${octet}.0.1`,
    rangeStart: `10.${octet}.0.2`,
    rangeEnd: `10.${octet}.255.254`,
  };
}

/** [first, last] address of an IPv4 CIDR (or a single address) as unsigned 32-bit numbers. */
export function ipv4Range(cidr: string): [number, number] | undefined {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?:\/(\d{1,2}))?$/.exec(cidr);
  if (!match) return undefined;
  const octets = match.slice(1, 5).map(Number);
  if (octets.some((o) => o > 255)) return undefined;
  const bits = match[5] === undefined ? 32 : Number(match[5]);
  if (bits > 32) return undefined;
  const address = ((octets[0]! << 24) | (octets[1]! << 16) | (octets[2]! << 8) | octets[3]!) >>> 0;
  const size = 2 ** (32 - bits);
  const first = Math.floor(address / size) * size;
  return [first, first + size - 1];
}

/** Host IPv4 routes (destination CIDRs) that overlap `cidr`, not counting routes through `ownBridge`. */
export async function overlappingRoutes(cidr: string, ownBridge: string): Promise<string[]> {
  const wanted = ipv4Range(cidr);
  if (!wanted) throw new ClusterError(`not an IPv4 CIDR: ${cidr}`);
  const routes = JSON.parse(await runChecked('ip', ['-j', '-4', 'route', 'show'])) as { dst?: string; dev?: string }[];
  return routes
    .filter((route) => route.dev !== ownBridge && route.dst !== undefined && route.dst !== 'default')
    .filter((route) => {
      const range = ipv4Range(route.dst!);
      return range !== undefined && range[0] <= wanted[1] && wanted[0] <= range[1];
    })
    .map((route) => `${route.dst!} dev ${route.dev ?? '?'}`);
}

/** The cluster's subnet octet X (10.X.0.0/16): the stored one, else the first whose /16 no host route overlaps. */
export async function chooseSubnetOctet(paths: ClusterPaths, ownBridge: string): Promise<number> {
  const stored = (await readAllocations(paths.allocationsFile)).subnetOctet;
  const first = stored ?? paths.preferredSubnetOctet;
  const span = OCTET_MAX - OCTET_MIN + 1;
  for (let i = 0; i < span; i++) {
    const octet = i === 0 ? first : OCTET_MIN + ((first - OCTET_MIN + i + span) % span);
    if (octet === 88) continue;
    const conflicts = await overlappingRoutes(podSubnet(octet).cidr, ownBridge);
    if (conflicts.length === 0) {
      if (octet !== stored) await saveAllocations(paths.allocationsFile, { subnetOctet: octet });
      return octet;
    }
  }
  throw new ClusterError(`no free pod subnet 10.${OCTET_MIN}-${OCTET_MAX}.0.0/16: host routes overlap them all`);
}

async function chooseSubnet(paths: ClusterPaths): Promise<PodSubnet> {
  return podSubnet(await chooseSubnetOctet(paths, paths.bridge));
}

/**
 * Symlink every plugin of the stack's CNI plugin directory (built here, or Debian's /usr/lib/cni for the old cell)
 * into binDir; entries added there by others are left alone.
 */
export async function linkCniPlugins(pluginDir: string, binDir: string): Promise<void> {
  await mkdir(binDir, { recursive: true });
  let plugins: string[];
  try {
    plugins = await readdir(pluginDir);
  } catch {
    throw new ClusterError(`${pluginDir} is missing: the CNI plugins were not built (or installed)`);
  }
  for (const plugin of plugins) {
    const target = join(pluginDir, plugin);
    const link = join(binDir, plugin);
    const current = await readlink(link).catch(() => undefined);
    if (current === target) continue;
    await rm(link, { force: true });
    await symlink(target, link);
  }
}

/** The pod network's IPAM plugin: host-local (default) or the project's kruise-ipam (CLUSTER_POD_IPAM=kruise-ipam). */
export type PodIpam = 'host-local' | 'kruise-ipam';

export function podIpamFromEnv(env: NodeJS.ProcessEnv = process.env): PodIpam {
  const value = env.CLUSTER_POD_IPAM ?? 'host-local';
  if (value !== 'host-local' && value !== 'kruise-ipam') {
    throw new ClusterError(`CLUSTER_POD_IPAM=${JSON.stringify(value)}: expected host-local or kruise-ipam`);
  }
  return value;
}

/** kruise-ipam's store: the conflist's dataDir, exported as IPAM_DATA_DIR for the agent and `kruise-daemon ipam ls`. */
export function kruiseIpamDataDir(paths: ClusterPaths): string {
  return join(paths.cni.stateDir, 'kruise-ipam');
}

/** kruise-ipam's ipam block (same ranges as host-local's) behind the bridge, with the pod-annotations capability. */
function kruiseIpamPlugin(paths: ClusterPaths, subnet: PodSubnet): Record<string, unknown> {
  return {
    capabilities: { 'io.kubernetes.cri.pod-annotations': true },
    ipam: {
      type: 'kruise-ipam',
      ranges: [
        [{ subnet: subnet.cidr, rangeStart: subnet.rangeStart, rangeEnd: subnet.rangeEnd, gateway: subnet.gateway }],
      ],
      dataDir: kruiseIpamDataDir(paths),
    },
  };
}

export function defaultConflist(paths: ClusterPaths, subnet: PodSubnet, ipam: PodIpam = 'host-local'): string {
  const conflist = {
    cniVersion: '1.0.0',
    name: paths.networkName,
    plugins: [
      {
        type: 'bridge',
        bridge: paths.bridge,
        isGateway: false,
        ipMasq: false,
        hairpinMode: true,
        ipam: {
          type: 'host-local',
          ranges: [
            [
              {
                subnet: subnet.cidr,
                rangeStart: subnet.rangeStart,
                rangeEnd: subnet.rangeEnd,
                gateway: subnet.gateway,
              },
            ],
          ],
          dataDir: join(paths.cni.stateDir, 'host-local'),
        },
        ...(ipam === 'kruise-ipam' ? kruiseIpamPlugin(paths, subnet) : {}),
      },
    ],
  };
  return `${JSON.stringify(conflist, null, 2)}\n`;
}

async function linkExists(name: string): Promise<boolean> {
  return (await run('ip', ['link', 'show', 'dev', name])).code === 0;
}

/** Create the bridge if needed, give it exactly the gateway address, bring it up. */
async function ensureBridge(name: string, subnet: PodSubnet): Promise<void> {
  if (!(await linkExists(name))) await runChecked('ip', ['link', 'add', name, 'type', 'bridge']);
  const info = JSON.parse(await runChecked('ip', ['-j', '-4', 'addr', 'show', 'dev', name])) as {
    addr_info?: { local?: string; prefixlen?: number }[];
  }[];
  const addresses = (info[0]?.addr_info ?? []).map((a) => `${a.local ?? ''}/${a.prefixlen ?? ''}`);
  const wanted = `${subnet.gateway}/16`;
  if (addresses.length !== 1 || addresses[0] !== wanted) {
    await runChecked('ip', ['-4', 'addr', 'flush', 'dev', name]);
    await runChecked('ip', ['addr', 'add', wanted, 'dev', name]);
  }
  await runChecked('ip', ['link', 'set', name, 'up']);
}

export function podNetwork(): ComponentWithStatus {
  return {
    name: 'pod-network',
    async up(ctx: ClusterContext) {
      const paths = clusterPaths(ctx.dir);
      await linkCniPlugins(binaryPathsOf(ctx.dir).runtime.cniPluginDir, paths.cni.binDir);
      await mkdir(paths.cni.confDir, { recursive: true });
      await mkdir(paths.cni.stateDir, { recursive: true });
      const subnet = await chooseSubnet(paths);
      await ensureBridge(paths.bridge, subnet);
      const ipam = podIpamFromEnv();
      if (ipam === 'kruise-ipam') installPluginBundled(paths.cni.binDir, { copyNode: false });
      await writeIfChanged(paths.cni.defaultConflist, defaultConflist(paths, subnet, ipam));
      return {
        CNI_BIN_DIR: paths.cni.binDir,
        CNI_CONF_DIR: paths.cni.confDir,
        CNI_STATE_DIR: paths.cni.stateDir,
        CNI_NETWORK_NAME: paths.networkName,
        POD_SUBNET: subnet.cidr,
        POD_GATEWAY: subnet.gateway,
        POD_BRIDGE: paths.bridge,
        POD_IPAM: ipam,
        ...(ipam === 'kruise-ipam' ? { IPAM_DATA_DIR: kruiseIpamDataDir(paths) } : {}),
      };
    },
    async down(ctx: ClusterContext) {
      const paths = clusterPaths(ctx.dir);
      if (await linkExists(paths.bridge)) {
        await runChecked('ip', ['link', 'del', paths.bridge]);
        ctx.log(`pod-network: deleted bridge ${paths.bridge}`);
      }
      // every pod is gone once containerd is down: drop host-local's leases so none leak into the next up
      await rm(join(paths.cni.stateDir, 'host-local'), { recursive: true, force: true });
      await rm(kruiseIpamDataDir(paths), { recursive: true, force: true });
      // libcni caches each ADD result in /var/lib/cni/results/<network>-<container>-<ifname> (shared by all runtimes)
      for (const entry of await readdir(LIBCNI_RESULTS_DIR).catch(() => [])) {
        if (entry.startsWith(`${paths.networkName}-`)) await rm(join(LIBCNI_RESULTS_DIR, entry), { force: true });
      }
    },
    async status(ctx: ClusterContext): Promise<ComponentStatus[]> {
      const paths = clusterPaths(ctx.dir);
      const present = await linkExists(paths.bridge);
      const octet = (await readAllocations(paths.allocationsFile)).subnetOctet;
      const subnet = octet === undefined ? 'no subnet chosen yet' : podSubnet(octet).cidr;
      return [
        {
          name: 'pod-network',
          healthy: present,
          detail: `bridge ${paths.bridge} ${present ? 'up' : 'absent'}, ${subnet}`,
        },
      ];
    },
  };
}
