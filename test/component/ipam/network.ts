// Test helpers: the kruise-ipam plugin installed into the local cluster's CNI bin dir, a conflist (bridge +
// kruise-ipam with the pod-annotations capability) that sorts before the default one, and sandboxes through CRI.
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseCidr, parseIp, formatIp } from '../../../src/cni/ip.js';
import type { CriClient, PodSandboxConfig } from '../../../src/cri/index.js';
import { installConflist, installPluginBundled } from '../../../src/daemon/ipreservation/install.js';
import { removeCgroupTree } from '../../cluster/runtime/cgroups.js';
import type { ClusterEnv } from '../../support/cluster.js';
import { waitFor } from '../../support/wait.js';

export const TEST_CONFLIST = '05-kruise-ipam-test.conflist';
export const NAMESPACE = 'ipam-test';

export interface TestNetwork {
  name: string;
  dataDir: string;
  first: string;
  last: string;
  /** A plain function: `ips.every(net.contains)`. */
  contains: (ip: string) => boolean;
}

/** Addresses `from`..`to` (offsets) of the cluster's pod subnet, away from host-local's (which starts at .0.2). */
export function rangeOf(cluster: ClusterEnv, fromOffset: number, count: number): { first: string; last: string } {
  const base = parseCidr(cluster.podSubnet)!.network.base;
  const at = (o: number) => formatIp({ family: 4, value: base + BigInt(o) });
  return { first: at(fromOffset), last: at(fromOffset + count - 1) };
}

/** Install the plugin (bundled, on this Node) into the cluster's CNI bin dir; returns the script it runs. */
export function installTestPlugin(cluster: ClusterEnv): string {
  const outcome = installPluginBundled(cluster.cniBinDir, { copyNode: false });
  if (!outcome.bundled) throw new Error('the plugin could not be bundled');
  return outcome.entry;
}

export function removeTestConflist(cluster: ClusterEnv): void {
  rmSync(join(cluster.cniConfDir, TEST_CONFLIST), { force: true });
}

export class Sandboxes {
  readonly created = new Map<string, string>(); // sandbox id -> uid

  constructor(
    private readonly client: CriClient,
    private readonly cluster: ClusterEnv,
  ) {}

  config(name: string, annotations: Record<string, string> = {}, uid = randomUUID()): PodSandboxConfig {
    return {
      metadata: { name, namespace: NAMESPACE, uid, attempt: 0 },
      hostname: name,
      labels: {
        'io.kubernetes.pod.name': name,
        'io.kubernetes.pod.namespace': NAMESPACE,
        'kruise-daemon.test/ipam': 'true',
      },
      annotations,
      linux: {
        cgroup_parent: `${this.cluster.podCgroupParent}/pod${uid}`,
        security_context: { namespace_options: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' } },
      },
    };
  }

  /** Run a sandbox; resolves with its id and IP. */
  async run(name: string, annotations: Record<string, string> = {}): Promise<{ id: string; ip: string }> {
    const uid = randomUUID();
    const config = this.config(name, annotations, uid);
    const { pod_sandbox_id: id } = await this.client.runPodSandbox({ config }, { timeoutMs: 60_000 });
    this.created.set(id, uid);
    const { status } = await this.client.podSandboxStatus({ pod_sandbox_id: id });
    return { id, ip: status?.network?.ip ?? '' };
  }

  /** Stop (first DEL, with netns) and remove (second DEL, without) like kubelet. */
  async remove(id: string): Promise<void> {
    await this.client.stopPodSandbox({ pod_sandbox_id: id });
    await this.client.removePodSandbox({ pod_sandbox_id: id });
    const uid = this.created.get(id);
    this.created.delete(id);
    if (uid) await removeCgroupTree(`${this.cluster.podCgroupParent}/pod${uid}`).catch(() => undefined);
  }

  async removeAll(): Promise<void> {
    for (const id of [...this.created.keys()]) await this.remove(id).catch(() => undefined);
  }
}

/**
 * Switch containerd to a kruise-ipam network with addresses first..last of the pod subnet, and wait until it uses
 * it: a probe sandbox gets an address in the range (containerd reloads conflists on change, in ~20 ms).
 */
export async function useNetwork(
  cluster: ClusterEnv,
  sandboxes: Sandboxes,
  name: string,
  range: { first: string; last: string },
  testOnlyMinuteMs?: number,
): Promise<TestNetwork> {
  const dataDir = join(cluster.cniStateDir, 'kruise-ipam-test');
  rmSync(join(dataDir, name), { recursive: true, force: true });
  // one range set: addresses first..last of the cluster's pod subnet, its gateway
  const subnet = cluster.podSubnet;
  installConflist(
    cluster.cniConfDir,
    {
      networkName: name,
      bridge: cluster.podBridge,
      subnets: [],
      dataDir,
      bridgeExtra: { isGateway: false, ipMasq: false },
      ipamExtra: {
        ranges: [[{ subnet, rangeStart: range.first, rangeEnd: range.last, gateway: cluster.podGateway }]],
        ...(testOnlyMinuteMs ? { testOnlyMinuteMs } : {}),
      },
    },
    TEST_CONFLIST,
  );
  const lo = parseIp(range.first)!.value;
  const hi = parseIp(range.last)!.value;
  const contains = (ip: string) => {
    const v = parseIp(ip)?.value;
    return v !== undefined && v >= lo && v <= hi;
  };
  await waitFor(
    async () => {
      const probe = await sandboxes.run('probe');
      await sandboxes.remove(probe.id);
      return contains(probe.ip);
    },
    { timeoutMs: 20_000, intervalMs: 20, message: `containerd to use the ${name} network` },
  );
  return { name, dataDir, ...range, contains };
}
