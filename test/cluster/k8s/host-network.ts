// Component "host-network" (real cluster): the node network on the host. A bridge kd<id>k with the host's address
// 10.X.255.1/24 (the API server, etcd and the registries listen there), a route to each node's pod CIDR through
// that node's address, IPv4 forwarding on, and iptables FORWARD rules that accept the cluster's traffic (tagged with
// a comment naming the cluster, so down removes exactly those). down removes the bridge (its routes go with it),
// the rules, and turns forwarding back off if it was off before.
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ClusterContext } from '../component.js';
import { clusterPaths } from '../paths.js';
import type { ComponentStatus, ComponentWithStatus } from '../runtime/component-status.js';
import { run, runChecked } from '../runtime/exec.js';
import { readTextIfExists, writeAtomic } from '../runtime/files.js';
import { chooseSubnetOctet } from '../runtime/pod-network.js';
import { k8sLayout, type K8sLayout } from './layout.js';
import { layoutFromContext } from './context.js';

const IP_FORWARD = '/proc/sys/net/ipv4/ip_forward';

export async function linkExists(name: string): Promise<boolean> {
  return (await run('ip', ['link', 'show', 'dev', name])).code === 0;
}

function ruleComment(layout: K8sLayout): string {
  return `kruise-daemon test cluster ${layout.id}`;
}

function forwardRules(layout: K8sLayout): string[][] {
  const cidr = `10.${layout.octet}.0.0/16`;
  const comment = ['-m', 'comment', '--comment', ruleComment(layout)];
  return [
    ['FORWARD', '-s', cidr, ...comment, '-j', 'ACCEPT'],
    ['FORWARD', '-d', cidr, ...comment, '-j', 'ACCEPT'],
  ];
}

async function ensureRule(rule: string[]): Promise<void> {
  if ((await run('iptables', ['-w', '5', '-C', ...rule])).code === 0) return;
  await runChecked('iptables', ['-w', '5', '-I', ...rule]);
}

async function removeRule(rule: string[]): Promise<void> {
  while ((await run('iptables', ['-w', '5', '-C', ...rule])).code === 0) {
    await runChecked('iptables', ['-w', '5', '-D', ...rule]);
  }
}

async function ensureBridge(layout: K8sLayout): Promise<void> {
  const name = layout.hostBridge;
  if (!(await linkExists(name))) await runChecked('ip', ['link', 'add', name, 'type', 'bridge']);
  const wanted = `${layout.hostIp}/24`;
  const info = JSON.parse(await runChecked('ip', ['-j', '-4', 'addr', 'show', 'dev', name])) as {
    addr_info?: { local?: string; prefixlen?: number }[];
  }[];
  const addresses = (info[0]?.addr_info ?? []).map((a) => `${a.local ?? ''}/${a.prefixlen ?? ''}`);
  if (addresses.length !== 1 || addresses[0] !== wanted) {
    await runChecked('ip', ['-4', 'addr', 'flush', 'dev', name]);
    await runChecked('ip', ['addr', 'add', wanted, 'dev', name]);
  }
  await runChecked('ip', ['link', 'set', name, 'up']);
  for (const node of layout.nodes) {
    await runChecked('ip', ['route', 'replace', node.podCidr, 'via', node.ip, 'dev', name]);
  }
}

/** Turn IPv4 forwarding on, remembering (once) what it was so down can restore it. */
async function enableForwarding(stateFile: string): Promise<void> {
  const current = (await readTextIfExists(IP_FORWARD))?.trim();
  if ((await readTextIfExists(stateFile)) === undefined) await writeAtomic(stateFile, `${current ?? '0'}\n`);
  if (current !== '1') await writeFile(IP_FORWARD, '1\n');
}

export function hostNetwork(): ComponentWithStatus {
  return {
    name: 'host-network',
    async up(ctx: ClusterContext) {
      const paths = clusterPaths(ctx.dir);
      const octet = await chooseSubnetOctet(paths, `kd${paths.id}k`);
      const layout = k8sLayout(ctx.dir, octet, Number(ctx.env.NODE_COUNT ?? '1'));
      await ensureBridge(layout);
      await enableForwarding(join(layout.k8sDir, 'ip-forward-before'));
      for (const rule of forwardRules(layout)) await ensureRule(rule);
      return {
        CLUSTER_SUBNET_OCTET: String(octet),
        REGISTRY_HOST: layout.hostIp,
        HOST_IP: layout.hostIp,
        NODE_NETWORK: layout.nodeNetworkCidr,
        SERVICE_CIDR: layout.serviceCidr,
        CLUSTER_CIDR: layout.clusterCidr,
      };
    },
    async down(ctx: ClusterContext) {
      const layout = await layoutFromContext(ctx);
      if (!layout) return;
      if (await linkExists(layout.hostBridge)) {
        await runChecked('ip', ['link', 'del', layout.hostBridge]);
        ctx.log(`host-network: deleted bridge ${layout.hostBridge}`);
      }
      for (const rule of forwardRules(layout)) await removeRule(rule);
      const stateFile = join(layout.k8sDir, 'ip-forward-before');
      const before = (await readTextIfExists(stateFile))?.trim();
      if (before === '0') await writeFile(IP_FORWARD, '0\n').catch(() => undefined);
      await rm(stateFile, { force: true });
    },
    async status(ctx: ClusterContext): Promise<ComponentStatus[]> {
      const layout = await layoutFromContext(ctx);
      const present = layout !== undefined && (await linkExists(layout.hostBridge));
      return [
        {
          name: 'host-network',
          healthy: present,
          detail: layout
            ? `bridge ${layout.hostBridge} ${present ? 'up' : 'absent'}, host ${layout.hostIp}`
            : 'not set up',
        },
      ];
    },
  };
}
