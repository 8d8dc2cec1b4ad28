// Component "nodes" (real cluster): N real Kubernetes nodes on this machine. Each node is
//   - a network namespace with a veth on the host bridge (the node's address), IPv4 forwarding on;
//   - a mount namespace, held open by a small holder process, with its own /run (tmpfs), private overlays on /etc,
//     /opt and /var, and the node's directories bind-mounted on the usual paths (/run/containerd, /var/lib/kubelet,
//     /etc/cni/net.d, /opt/cni/bin, /var/lib/cni, ...), so nothing of a node shows on the host's own paths;
//   - its own container runtime (containerd, or CRI-O with conmon on its cell), kubelet and kube-proxy (iptables
//     mode), all started inside both namespaces
//     with `nsenter -t <holder> -m -n` (never `ip netns exec`: it remounts /sys without the cgroup hierarchies);
//   - its own pod CIDR on a CNI bridge inside its namespace (bridge + host-local, or the project's kruise-ipam with
//     CLUSTER_POD_IPAM=kruise-ipam), its own kubelet cgroupRoot.
// down stops kubelet and kube-proxy, removes every pod through CRI (so CNI releases the addresses), stops
// the runtime, kills whatever is left in the node's mount namespace (shims, conmons) and cgroups, and deletes the
// namespace (its mounts go with it: they never propagate to the host).
import { existsSync } from 'node:fs';
import { appendFile, mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { installPluginBundled } from '../../../src/daemon/ipreservation/install.js';
import type { ClusterContext } from '../component.js';
import { removeCgroupTree } from '../runtime/cgroups.js';
import type { ComponentStatus, ComponentWithStatus } from '../runtime/component-status.js';
import { containerdConfig, registryHostsToml } from '../runtime/containerd-config.js';
import { crioConfig, crioRegistriesConf, crioSignaturePolicy, runcWrapperScript } from '../runtime/crio-config.js';
import { criVersion } from '../runtime/cri-probe.js';
import { ClusterError, errorMessage } from '../runtime/errors.js';
import { run, runChecked } from '../runtime/exec.js';
import { readTextIfExists, writeIfChanged } from '../runtime/files.js';
import { chmod } from 'node:fs/promises';
import { linkCniPlugins, podIpamFromEnv, type PodIpam } from '../runtime/pod-network.js';
import { commandLine, isAlive, runningPid, signal } from '../runtime/processes.js';
import { waitUntil } from '../runtime/wait-until.js';
import { apiGetJson } from './api-client.js';
import { binaryPathsOf, containerdRuntime } from './binaries.js';
import { layoutFromContext, nodeDirsOnDisk } from './context.js';
import { FEATURE_GATES } from './feature-gates.js';
import { k8sLayout, KUBELET_PORT, type K8sLayout, type NodeLayout } from './layout.js';
import { kubeconfigPath } from './pki.js';
import { ensureProcess, stopOwnProcess, waitForProcess, type ProcessSpec } from './process.js';
import { linkExists } from './host-network.js';

const NODE_READY_TIMEOUT_MS = 90_000;
/** Top-level host directories a node sees through a private overlay (its own writes stay in its directory). */
const OVERLAID_DIRS = ['etc', 'opt', 'var'];
const CGROUP_V1_CONTROLLERS = ['cpu', 'cpuacct', 'cpuset', 'memory', 'devices', 'freezer', 'blkio', 'pids', 'systemd'];

// ---- configs ----

/** The name of every node's pod network (its conflist; kruise-ipam keeps its store under it). */
export const POD_NETWORK_NAME = 'kd-pods';

export function nodeConflist(node: NodeLayout, ipam: PodIpam): string {
  const range = { subnet: node.podCidr, gateway: node.podGateway };
  // the pod's default route goes through the bridge (the node), which routes on to the host and other nodes
  const routes = [{ dst: '0.0.0.0/0' }];
  const ipamBlock =
    ipam === 'kruise-ipam'
      ? { type: 'kruise-ipam', ranges: [[range]], routes, dataDir: join(node.inNode.cniStateDir, 'kruise-ipam') }
      : { type: 'host-local', ranges: [[range]], routes, dataDir: join(node.inNode.cniStateDir, 'networks') };
  const conflist = {
    cniVersion: '1.0.0',
    name: POD_NETWORK_NAME,
    plugins: [
      {
        type: 'bridge',
        bridge: 'cni0',
        isGateway: true,
        ipMasq: false,
        hairpinMode: true,
        ...(ipam === 'kruise-ipam' ? { capabilities: { 'io.kubernetes.cri.pod-annotations': true } } : {}),
        ipam: ipamBlock,
      },
    ],
  };
  return `${JSON.stringify(conflist, null, 2)}\n`;
}

function nodeContainerdConfig(layout: K8sLayout, node: NodeLayout, env: Record<string, string>): string {
  const sandboxImage = env.SANDBOX_IMAGE;
  if (!sandboxImage) throw new ClusterError('nodes need SANDBOX_IMAGE from the test-images component');
  return containerdConfig(
    {
      root: '/var/lib/containerd',
      state: '/run/containerd',
      socket: node.inNode.containerdSocket,
      ttrpcSocket: `${node.inNode.containerdSocket}.ttrpc`,
      opt: '/var/lib/containerd/opt',
      runcRoot: '/run/containerd/runc',
      certsDir: node.containerdCertsDir,
    },
    `${layout.id} node ${node.name}`,
    {
      sandboxImage,
      cniBinDir: node.inNode.cniBinDir,
      cniConfDir: node.inNode.cniConfDir,
      registries: registriesOf(env),
      ...containerdRuntime(node.clusterDir),
    },
  );
}

function nodeCrioConfig(layout: K8sLayout, node: NodeLayout, env: Record<string, string>): string {
  const sandboxImage = env.SANDBOX_IMAGE;
  if (!sandboxImage) throw new ClusterError('nodes need SANDBOX_IMAGE from the test-images component');
  const crio = crioBinaries(node);
  return crioConfig({
    owner: `real cluster ${layout.id} node ${node.name}`,
    sandboxImage,
    runtimePath: node.crio.runtimeWrapper,
    conmon: crio.conmon,
    pinns: crio.pinns,
    cniBinDir: node.inNode.cniBinDir,
    cniConfDir: node.inNode.cniConfDir,
    signaturePolicy: node.crio.policy,
    conmonPath: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  });
}

function crioBinaries(node: NodeLayout): NonNullable<ReturnType<typeof binaryPathsOf>['runtime']['crio']> {
  const crio = binaryPathsOf(node.clusterDir).runtime.crio;
  if (!crio) throw new ClusterError(`${node.name}: the cluster's stack runs no CRI-O`);
  return crio;
}

function registriesOf(env: Record<string, string>): string[] {
  return [env.REGISTRY, env.AUTH_REGISTRY].filter((r): r is string => r !== undefined && r !== '');
}

/**
 * The nodes' kubelets collect images only when the disk is really full (it is the host's, shared with other work);
 * agents on these nodes are told the same thresholds (agentImageGcArgs), as an admin would set them.
 */
export const KUBELET_IMAGE_GC_PERCENT = { high: 99, low: 98 } as const;

/** The agent's flags naming the nodes' kubelet image GC thresholds. */
export function agentImageGcArgs(): string[] {
  return [
    `--image-gc-high-threshold-percent=${KUBELET_IMAGE_GC_PERCENT.high}`,
    `--image-gc-low-threshold-percent=${KUBELET_IMAGE_GC_PERCENT.low}`,
  ];
}

export function kubeletConfig(layout: K8sLayout, node: NodeLayout): string {
  return `# Generated by test/cluster (kruise-daemon real cluster ${layout.id}, node ${node.name})
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
cgroupRoot: ${node.cgroupRoot}
# these machines mount cgroup v1 only
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://${node.inNode.runtimeSocket}
address: ${node.ip}
port: ${KUBELET_PORT}
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: ${join(layout.pkiDir, 'ca.crt')}}
authorization:
  mode: Webhook
tlsCertFile: ${join(layout.pkiDir, `${node.name}-serving.crt`)}
tlsPrivateKeyFile: ${join(layout.pkiDir, `${node.name}-serving.key`)}
clusterDomain: cluster.local
clusterDNS: []
resolvConf: /etc/resolv.conf
podCIDR: ${node.podCidr}
maxPods: 110
# the disk is large but shared with other work: evict only when it is really full
evictionHard:
  memory.available: "100Mi"
  nodefs.available: "1%"
  imagefs.available: "1%"
  nodefs.inodesFree: "1%"
imageGCHighThresholdPercent: ${KUBELET_IMAGE_GC_PERCENT.high}
imageGCLowThresholdPercent: ${KUBELET_IMAGE_GC_PERCENT.low}
enforceNodeAllocatable: ["pods"]
serializeImagePulls: false
featureGates: {${FEATURE_GATES.map((gate) => gate.replace('=', ': ')).join(', ')}}
`;
}

export function kubeProxyConfig(layout: K8sLayout, node: NodeLayout): string {
  return `# Generated by test/cluster (kruise-daemon real cluster ${layout.id}, node ${node.name})
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
hostnameOverride: ${node.name}
clusterCIDR: ${layout.clusterCidr}
clientConnection:
  kubeconfig: ${kubeconfigPath(layout, 'kube-proxy')}
bindAddress: ${node.ip}
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
conntrack:
  # leave the machine-wide nf_conntrack_max alone
  maxPerCore: 0
`;
}

// ---- processes ----

function nsenter(holderPid: number): string[] {
  return ['-t', String(holderPid), '--mount', '--net', '--'];
}

/**
 * The node's mount namespace, built by the holder's shell before it execs the holder: a fresh tmpfs on /run, a
 * private overlay (writes go to the node's directory) on /etc, /opt and /var, then the node's directories bound on the
 * usual paths. Nothing is created or changed on the host's own /etc, /opt, /var or /run.
 */
export function mountScript(node: NodeLayout, imageFsMiB = imageFsSizeMiB()): string {
  const lines = ['set -e', 'mount -t tmpfs -o mode=0755 tmpfs /run'];
  for (const top of OVERLAID_DIRS) {
    const base = join(node.dir, 'overlay', top);
    lines.push(
      `mkdir -p '${base}/upper' '${base}/work'`,
      `mount -t overlay overlay -o 'lowerdir=/${top},upperdir=${base}/upper,workdir=${base}/work' /${top}`,
    );
  }
  for (const bind of node.binds)
    lines.push(`mkdir -p '${bind.target}'`, `mount --bind '${bind.source}' '${bind.target}'`);
  if (imageFsMiB !== undefined) {
    // a small image filesystem of the node's own: its runtime's store on a tmpfs of that size, seen by the runtime
    // and by kubelet (imagefs), gone with the node's mount namespace (its images with it)
    lines.push(`mount -t tmpfs -o size=${imageFsMiB}m,mode=0711 tmpfs '${runtimeStore(node)}'`);
  }
  lines.push('exec "$0" "$1"');
  return lines.join('\n');
}

/** Where the node's runtime keeps its images (inside the node). */
function runtimeStore(node: NodeLayout): string {
  return node.runtime === 'cri-o' ? '/var/lib/containers' : '/var/lib/containerd';
}

/** CLUSTER_IMAGE_FS_MIB: every node's image filesystem a tmpfs of that many MiB (tests of a full disk); unset: none. */
export function imageFsSizeMiB(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const text = env.CLUSTER_IMAGE_FS_MIB;
  if (text === undefined || text === '') return undefined;
  const mib = Number(text);
  if (!/^\d+$/.test(text) || mib < 64 || mib > 1024 * 1024) {
    throw new ClusterError(
      `CLUSTER_IMAGE_FS_MIB must be a whole number of MiB from 64 to 1048576, got ${JSON.stringify(text)}`,
    );
  }
  return mib;
}

function holderSpec(node: NodeLayout): ProcessSpec {
  return {
    name: `${node.name}/holder`,
    command: 'nsenter',
    args: [
      `--net=/run/netns/${node.netns}`,
      '--',
      'unshare',
      '--mount',
      '--propagation',
      'private',
      '--',
      'sh',
      '-c',
      mountScript(node),
      binaryPathsOf(node.clusterDir).holder,
      node.dir,
    ],
    marker: node.dir,
    pidFile: node.holderPidFile,
    logFile: join(node.logDir, 'holder.log'),
  };
}

function containerdSpec(node: NodeLayout, holderPid: number): ProcessSpec {
  return {
    name: `${node.name}/containerd`,
    command: 'nsenter',
    args: [...nsenter(holderPid), binaryPathsOf(node.clusterDir).runtime.containerd, '--config', node.containerdConfig],
    // containerd finds its runc shim on PATH
    env: { PATH: `${binaryPathsOf(node.clusterDir).runtime.containerdDir}:${process.env.PATH ?? '/usr/bin:/bin'}` },
    marker: node.containerdConfig,
    pidFile: join(node.runDir, 'containerd.pid'),
    logFile: join(node.logDir, 'containerd.log'),
    stopGraceMs: 10_000,
  };
}

function crioSpec(node: NodeLayout, holderPid: number): ProcessSpec {
  return {
    name: `${node.name}/crio`,
    command: 'nsenter',
    args: [
      ...nsenter(holderPid),
      crioBinaries(node).crio,
      '--config',
      node.crio.config,
      // an empty drop-in directory and registries.conf.d of the node's: nothing of the host's /etc is read
      '--config-dir',
      `${node.crio.config}.d`,
      '--registries-conf',
      node.crio.registriesConf,
      '--registries-conf-dir',
      node.crio.registriesConfDir,
    ],
    marker: node.crio.config,
    pidFile: join(node.runDir, 'crio.pid'),
    logFile: join(node.logDir, 'crio.log'),
    stopGraceMs: 10_000,
  };
}

/** The node's runtime process as the cluster runs it: its name, PID file, log and marker (its own config file). */
export function nodeRuntimeProcess(node: NodeLayout): Pick<ProcessSpec, 'name' | 'pidFile' | 'logFile' | 'marker'> {
  const { name, pidFile, logFile, marker } = runtimeSpec(node, 0);
  return { name, pidFile, logFile, marker };
}

/** The node's container runtime: containerd, or CRI-O on its cell. */
function runtimeSpec(node: NodeLayout, holderPid: number): ProcessSpec {
  return node.runtime === 'cri-o' ? crioSpec(node, holderPid) : containerdSpec(node, holderPid);
}

function kubeletSpec(node: NodeLayout, holderPid: number): ProcessSpec {
  return {
    name: `${node.name}/kubelet`,
    command: 'nsenter',
    args: [
      ...nsenter(holderPid),
      join(binaryPathsOf(node.clusterDir).kubeBinDir, 'kubelet'),
      `--config=${node.kubeletConfig}`,
      `--kubeconfig=${node.kubeletKubeconfig}`,
      `--hostname-override=${node.name}`,
      `--node-ip=${node.ip}`,
      '-v=1',
    ],
    marker: node.kubeletConfig,
    pidFile: join(node.runDir, 'kubelet.pid'),
    logFile: join(node.logDir, 'kubelet.log'),
  };
}

function kubeProxySpec(node: NodeLayout, holderPid: number): ProcessSpec {
  return {
    name: `${node.name}/kube-proxy`,
    command: 'nsenter',
    args: [
      ...nsenter(holderPid),
      join(binaryPathsOf(node.clusterDir).kubeBinDir, 'kube-proxy'),
      `--config=${node.kubeProxyConfig}`,
      '-v=1',
    ],
    marker: node.kubeProxyConfig,
    pidFile: join(node.runDir, 'kube-proxy.pid'),
    logFile: join(node.logDir, 'kube-proxy.log'),
  };
}

// ---- network namespace and mounts ----

async function ensureNetns(layout: K8sLayout, node: NodeLayout): Promise<void> {
  if (!existsSync(`/run/netns/${node.netns}`)) await runChecked('ip', ['netns', 'add', node.netns]);
  if (!(await linkExists(node.hostVeth))) {
    await runChecked('ip', ['link', 'add', node.hostVeth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', node.netns]);
  }
  await runChecked('ip', ['link', 'set', node.hostVeth, 'master', layout.hostBridge, 'up']);
  const inNs = (args: string[]): Promise<string> => runChecked('ip', ['-n', node.netns, ...args]);
  await inNs(['addr', 'replace', `${node.ip}/24`, 'dev', 'eth0']);
  await inNs(['link', 'set', 'eth0', 'up']);
  await inNs(['link', 'set', 'lo', 'up']);
  await inNs(['route', 'replace', 'default', 'via', layout.hostIp]);
  // per-namespace sysctl: written by a process inside the namespace
  await runChecked('nsenter', [
    `--net=/run/netns/${node.netns}`,
    '--',
    'sh',
    '-c',
    'echo 1 > /proc/sys/net/ipv4/ip_forward',
  ]);
}

async function ensureCgroupRoot(node: NodeLayout): Promise<void> {
  for (const controller of CGROUP_V1_CONTROLLERS) {
    const base = join('/sys/fs/cgroup', controller);
    if (!existsSync(base)) continue;
    const dir = join(base, node.cgroupRoot);
    await mkdir(dir, { recursive: true });
    if (controller === 'cpuset') {
      for (const file of ['cpuset.cpus', 'cpuset.mems']) {
        const current = (await readFile(join(dir, file), 'utf8')).trim();
        if (current === '') await appendFile(join(dir, file), (await readFile(join(base, file), 'utf8')).trim());
      }
    }
  }
}

/** Mount-namespace inode of a process ("mnt:[4026531840]"), or undefined when it is gone. */
function mountNamespace(pid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/mnt`);
  } catch {
    return undefined;
  }
}

/** Every process (but `except`) that shares `pid`'s mount namespace. */
function processesInMountNamespace(pid: number, except: number[]): number[] {
  const ns = mountNamespace(pid);
  if (ns === undefined || ns === mountNamespace(process.pid)) return [];
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const other = Number(entry);
    if (except.includes(other) || !isAlive(other)) continue;
    if (mountNamespace(other) === ns) found.push(other);
  }
  return found;
}

/**
 * Every process whose mount namespace holds the node's overlay mounts (`upperdir=<node dir>/overlay/...`): the node's
 * mount namespace when its holder is gone, e.g. a shim that containerd was starting when everything was killed
 * (it has no shim.pid yet).
 */
function processesWithNodeMounts(node: NodeLayout): number[] {
  const marker = `upperdir=${join(node.dir, 'overlay')}/`;
  const own = mountNamespace(process.pid);
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid || mountNamespace(pid) === own) continue;
    try {
      if (readFileSync(`/proc/${pid}/mountinfo`, 'utf8').includes(marker)) found.push(pid);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/**
 * PIDs of the containerd shims of a node, from the shim.pid files in its task bundles: found even after a crash left
 * shims behind in a mount namespace whose holder is gone (the state directory is the node's own).
 */
async function shimPids(node: NodeLayout): Promise<number[]> {
  const base = join(node.hostPaths.containerdState, 'io.containerd.runtime.v2.task');
  const pids: number[] = [];
  for (const namespace of await readdir(base).catch(() => [])) {
    for (const id of await readdir(join(base, namespace)).catch(() => [])) {
      const pid = Number.parseInt(
        (await readTextIfExists(join(base, namespace, id, 'shim.pid')).catch(() => undefined)) ?? '',
        10,
      );
      if (
        Number.isSafeInteger(pid) &&
        pid > 1 &&
        isAlive(pid) &&
        commandLine(pid).some((arg) => arg.includes('containerd-shim')) &&
        commandLine(pid).includes(id)
      ) {
        pids.push(pid);
      }
    }
  }
  return pids;
}

// ---- one node up/down ----

async function upNode(ctx: ClusterContext, layout: K8sLayout, node: NodeLayout): Promise<void> {
  for (const dir of [node.logDir, node.runDir]) await mkdir(dir, { recursive: true });
  await ensureNetns(layout, node);
  for (const bind of node.binds) await mkdir(bind.source, { recursive: true });
  await ensureCgroupRoot(node);

  await linkCniPlugins(binaryPathsOf(node.clusterDir).runtime.cniPluginDir, node.hostPaths.cniBinDir);
  const ipam = podIpamFromEnv();
  // CLUSTER_IPAM_PLUGIN=agent (npm run dev -- --in-cluster): the conflist names kruise-ipam, but the plugin is left
  // to the agent's DaemonSet (deploy/overlays/ip-retention copies it onto the node); until then no pod gets an address
  if (ipam === 'kruise-ipam' && process.env.CLUSTER_IPAM_PLUGIN !== 'agent') {
    installPluginBundled(node.hostPaths.cniBinDir, { copyNode: false });
  }
  await writeIfChanged(join(node.hostPaths.cniConfDir, '10-kd-pods.conflist'), nodeConflist(node, ipam));
  if (node.runtime === 'cri-o') {
    const owner = `real cluster ${layout.id} node ${node.name}`;
    for (const dir of [`${node.crio.config}.d`, node.crio.registriesConfDir]) await mkdir(dir, { recursive: true });
    await writeIfChanged(node.crio.registriesConf, crioRegistriesConf(owner, registriesOf(ctx.env)));
    await writeIfChanged(node.crio.policy, crioSignaturePolicy());
    await writeIfChanged(
      node.crio.runtimeWrapper,
      runcWrapperScript(owner, binaryPathsOf(node.clusterDir).runtime.runc),
    );
    await chmod(node.crio.runtimeWrapper, 0o755);
    await writeIfChanged(node.crio.config, nodeCrioConfig(layout, node, ctx.env));
  } else {
    for (const registry of registriesOf(ctx.env)) {
      await writeIfChanged(join(node.containerdCertsDir, registry, 'hosts.toml'), registryHostsToml(registry));
    }
    await writeIfChanged(node.containerdConfig, nodeContainerdConfig(layout, node, ctx.env));
  }
  await writeIfChanged(node.kubeletConfig, kubeletConfig(layout, node));
  await writeIfChanged(node.kubeProxyConfig, kubeProxyConfig(layout, node));

  const holder = holderSpec(node);
  const holderState = await ensureProcess(holder, ctx.log);
  await waitForProcess(holder, holderState.pid, 'its mount namespace to be ready', () =>
    readTextIfExists(`/proc/${holderState.pid}/cmdline`).then(
      (cmdline) => cmdline?.startsWith(binaryPathsOf(node.clusterDir).holder) === true,
    ),
  );
  const pid = holderState.pid;

  const runtime = runtimeSpec(node, pid);
  const runtimeState = await ensureProcess(runtime, ctx.log);
  await waitForProcess(runtime, runtimeState.pid, `CRI on ${node.hostPaths.runtimeSocket}`, async () => {
    await criVersion(node.hostPaths.runtimeSocket, 1_000);
    return true;
  });

  for (const spec of [kubeletSpec(node, pid), kubeProxySpec(node, pid)]) await ensureProcess(spec, ctx.log);
}

async function waitNodeReady(layout: K8sLayout, node: NodeLayout): Promise<void> {
  const kubelet = kubeletSpec(node, 0);
  const pid = await runningPid(kubelet.pidFile, kubelet.marker);
  if (pid === undefined) throw new ClusterError(`${node.name}: kubelet is not running (log: ${kubelet.logFile})`);
  await waitForProcess(
    kubelet,
    pid,
    'the Node to be Ready',
    async () => {
      const object = await apiGetJson<{ status?: { conditions?: { type: string; status: string }[] } }>(
        layout,
        `/api/v1/nodes/${node.name}`,
      );
      return object.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
    },
    NODE_READY_TIMEOUT_MS,
  );
}

async function downNode(ctx: ClusterContext, node: NodeLayout): Promise<void> {
  const holder = holderSpec(node);
  const holderPid = await runningPid(holder.pidFile, holder.marker);
  const anyPid = holderPid ?? 0;
  await stopOwnProcess(kubeletSpec(node, anyPid), ctx.log);
  await stopOwnProcess(kubeProxySpec(node, anyPid), ctx.log);
  const runtime = runtimeSpec(node, anyPid);
  if ((await runningPid(runtime.pidFile, runtime.marker)) !== undefined) {
    const removed = await run(
      binaryPathsOf(node.clusterDir).crictl,
      ['--runtime-endpoint', `unix://${node.hostPaths.runtimeSocket}`, '--timeout', '30s', 'rmp', '--force', '--all'],
      { timeoutMs: 90_000 },
    );
    if (removed.code !== 0) ctx.log(`${node.name}: crictl rmp -fa: ${(removed.stderr || removed.stdout).trim()}`);
  }
  await stopOwnProcess(runtime, ctx.log);
  {
    const shims = await shimPids(node);
    for (const pid of shims) signal(pid, 'SIGKILL');
    if (shims.length > 0) {
      ctx.log(`${node.name}: killed ${shims.length} shim(s) left running`);
      await waitUntil(() => shims.every((pid) => !isAlive(pid)), { timeoutMs: 10_000, what: 'the shims to exit' });
    }
  }
  {
    // the holder gone (killed with the rest), its namespace is found by the node's overlay mounts in it
    const left =
      holderPid !== undefined ? processesInMountNamespace(holderPid, [holderPid]) : processesWithNodeMounts(node);
    for (const pid of left) signal(pid, 'SIGKILL');
    if (left.length > 0) {
      ctx.log(`${node.name}: killed ${left.length} process(es) left in its mount namespace (shims, conmons)`);
      await waitUntil(() => left.every((pid) => !isAlive(pid)), { timeoutMs: 10_000, what: 'them to exit' });
    }
  }
  await stopOwnProcess(holder, ctx.log);
  const leftCgroups = await removeCgroupTree(node.cgroupRoot);
  if (leftCgroups.length > 0) ctx.log(`${node.name}: cgroups left behind: ${leftCgroups.join(', ')}`);
  if (existsSync(`/run/netns/${node.netns}`)) await runChecked('ip', ['netns', 'del', node.netns]);
  // deleting the namespace deletes the veth with its peer (asynchronously): delete it only if it is still there
  const veth = await run('ip', ['link', 'del', node.hostVeth]);
  // gone between the namespace's deletion and this call: `Cannot find device`, or `RTNETLINK answers: No such device`
  // when the kernel removes it while `ip` deletes it (seen on a loaded machine)
  if (veth.code !== 0 && !/Cannot find device|No such device/.test(veth.stderr)) {
    throw new ClusterError(`ip link del ${node.hostVeth}: ${veth.stderr.trim()}`);
  }
  // pods are gone: their state must not leak into the next up (address leases, kubelet's pod directories)
  await rm(join(node.hostPaths.cniStateDir, 'networks'), { recursive: true, force: true });
  await rm(node.hostPaths.kubeletRoot, { recursive: true, force: true });
  await rm(node.hostPaths.containerdState, { recursive: true, force: true });
  // CRI-O's run state (exit files, attach sockets, containers/storage's runroot); its images stay for the next up
  await rm(join(node.dir, 'run', 'crio'), { recursive: true, force: true });
  await rm(join(node.dir, 'run', 'containers'), { recursive: true, force: true });
  await rm(join(node.dir, 'overlay'), { recursive: true, force: true });
}

export function nodes(): ComponentWithStatus {
  return {
    name: 'nodes',
    async up(ctx: ClusterContext) {
      const layout = await layoutFromContext(ctx);
      if (!layout) throw new ClusterError('nodes need the host-network component first');
      // nodes of an earlier, larger up go first
      const onDisk = await nodeDirsOnDisk(ctx.dir);
      if (onDisk > layout.nodes.length) {
        for (const node of k8sLayout(ctx.dir, layout.octet, onDisk).nodes.slice(layout.nodes.length)) {
          await downNode(ctx, node);
          await rm(node.dir, { recursive: true, force: true });
        }
      }
      for (const node of layout.nodes) {
        try {
          await upNode(ctx, layout, node);
        } catch (err) {
          throw new ClusterError(`node ${node.name}: ${errorMessage(err)}`, { cause: err });
        }
      }
      for (const node of layout.nodes) await waitNodeReady(layout, node);
      return {
        NODE_NAMES: layout.nodes.map((n) => n.name).join(','),
        NODE_NAME: layout.nodes[0]!.name,
        ...Object.fromEntries(
          layout.nodes.flatMap((n) => [
            [`NODE_${n.index}_IP`, n.ip],
            [`NODE_${n.index}_RUNTIME_SOCKET`, n.hostPaths.runtimeSocket],
            [`NODE_${n.index}_NETNS`, n.netns],
          ]),
        ),
        RUNTIME_SOCKET: layout.nodes[0]!.hostPaths.runtimeSocket,
        // kruise-ipam's store of the first node, as the host sees it (`kruise-daemon ipam ls` reads it)
        ...(podIpamFromEnv() === 'kruise-ipam'
          ? { IPAM_DATA_DIR: join(layout.nodes[0]!.hostPaths.cniStateDir, 'kruise-ipam') }
          : {}),
      };
    },
    async down(ctx: ClusterContext) {
      const layout = await layoutFromContext(ctx, { allNodesOnDisk: true });
      if (!layout) return;
      const failures: string[] = [];
      for (const node of layout.nodes) {
        await downNode(ctx, node).catch((err: unknown) => failures.push(`${node.name}: ${errorMessage(err)}`));
      }
      if (failures.length > 0) throw new ClusterError(failures.join('; '));
    },
    async status(ctx: ClusterContext): Promise<ComponentStatus[]> {
      const layout = await layoutFromContext(ctx);
      if (!layout) return [{ name: 'nodes', healthy: false, detail: 'not set up' }];
      const statuses: ComponentStatus[] = [];
      for (const node of layout.nodes) {
        const holderPid = await runningPid(node.holderPidFile, node.dir);
        for (const spec of [runtimeSpec(node, 0), kubeletSpec(node, 0), kubeProxySpec(node, 0)]) {
          const pid = await runningPid(spec.pidFile, spec.marker);
          statuses.push({
            name: spec.name,
            healthy: pid !== undefined && holderPid !== undefined,
            detail: pid === undefined ? 'not running' : `PID ${pid} (log ${spec.logFile})`,
          });
        }
      }
      return statuses;
    },
  };
}
