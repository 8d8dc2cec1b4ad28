// Every address, name and path of one real local Kubernetes cluster (CLUSTER_KIND=real), derived from the cluster
// directory and its subnet octet X (allocations.json), so two clusters can run side by side:
//   node network  10.X.255.0/24 on the host bridge kd<id>k: the host (API server, etcd, registries) is 10.X.255.1,
//                 node i is 10.X.255.(10+i) in its own network namespace, reached through a veth on that bridge;
//   pods          10.X.i.0/24 on node i (a bridge cni0 inside the node's namespace; the host routes it to the node);
//   services      10.X.254.0/24 (the `kubernetes` Service is 10.X.254.1);
//   etcd          127.X.255.1 (loopback: only the host's processes, the API server, reach it; it has no TLS or auth).
// Inside a node's mount namespace the usual paths hold: /run/containerd/containerd.sock (CRI-O's cell:
// /run/crio/crio.sock, its storage in /var/lib/containers and /run/containers), /var/lib/kubelet, /etc/cni/net.d,
// /opt/cni/bin, /var/lib/cni, /var/log/pods; each is bind-mounted from the node's directory.
import { join } from 'node:path';
import { clusterPaths } from '../paths.js';
import { stackOf } from '../stack.js';

/** The CRI runtime a node runs: containerd (any version) or CRI-O. */
export type NodeRuntime = 'containerd' | 'cri-o';

export const MAX_REAL_NODES = 50;
export const API_SERVER_PORT = 6443;
export const KUBELET_PORT = 10250;

export interface NodeLayout {
  index: number;
  /** Node name (kd-node-<i>): the Node object, the kubelet's --hostname-override. */
  name: string;
  /** The node's address on the node network (kubelet's --node-ip; the API server reaches the kubelet there). */
  ip: string;
  podCidr: string;
  podGateway: string;
  /** Network namespace (/run/netns/<netns>). */
  netns: string;
  /** Host side of the node's veth (on the host bridge). */
  hostVeth: string;
  /** cgroupRoot of the node's kubelet (cgroupfs), below which all its pods live. */
  cgroupRoot: string;
  /** The node's own directory on the host: the sources of its bind mounts, its configs, PID files and logs. */
  dir: string;
  /** The cluster's directory (CLUSTER_DIR): its recorded stack names the binaries the node runs. */
  clusterDir: string;
  logDir: string;
  runDir: string;
  /** The CRI runtime the node runs (its stack's). */
  runtime: NodeRuntime;
  /** Host directory -> path inside the node's mount namespace. */
  binds: { source: string; target: string }[];
  /** Host paths of what the node's processes use (the same files as the in-node paths of `binds`). */
  hostPaths: {
    /** The CRI socket kubelet and the agent use: containerd's, or CRI-O's on its cell. */
    runtimeSocket: string;
    containerdSocket: string;
    containerdRoot: string;
    containerdState: string;
    kubeletRoot: string;
    cniConfDir: string;
    cniBinDir: string;
    cniStateDir: string;
  };
  /** Paths as seen inside the node. */
  inNode: {
    runtimeSocket: string;
    containerdSocket: string;
    kubeletRoot: string;
    cniConfDir: string;
    cniBinDir: string;
    cniStateDir: string;
    podLogDir: string;
  };
  containerdConfig: string;
  containerdCertsDir: string;
  /** CRI-O's files (its cell): crio.conf, registries.conf (+ an empty registries.conf.d), policy.json. */
  crio: { config: string; registriesConf: string; registriesConfDir: string; policy: string; runtimeWrapper: string };
  kubeletConfig: string;
  kubeletKubeconfig: string;
  kubeProxyConfig: string;
  /** The PID file of the node's holder process (PID of the mount namespace every node process joins). */
  holderPidFile: string;
}

export interface K8sLayout {
  dir: string;
  id: string;
  octet: number;
  hostBridge: string;
  hostIp: string;
  nodeNetworkCidr: string;
  /** All pod CIDRs together (10.X.0.0/17 holds 10.X.1.0/24 .. 10.X.50.0/24). */
  clusterCidr: string;
  serviceCidr: string;
  kubernetesServiceIp: string;
  apiServerUrl: string;
  /** etcd on a loopback address of this cluster's own (127.X.255.1): never on an address a node or pod reaches. */
  etcdIp: string;
  etcdClientUrl: string;
  etcdPeerUrl: string;
  k8sDir: string;
  pkiDir: string;
  etcdDataDir: string;
  logDir: string;
  runDir: string;
  adminKubeconfig: string;
  nodes: NodeLayout[];
}

export function nodeName(index: number): string {
  return `kd-node-${index}`;
}

export function k8sLayout(
  dir: string,
  octet: number,
  nodeCount: number,
  runtime: NodeRuntime = stackOf(dir).runtime === 'cri-o' ? 'cri-o' : 'containerd',
): K8sLayout {
  if (!Number.isInteger(nodeCount) || nodeCount < 1 || nodeCount > MAX_REAL_NODES) {
    throw new Error(`a real cluster has 1 to ${MAX_REAL_NODES} nodes, not ${nodeCount}`);
  }
  const paths = clusterPaths(dir);
  const id = paths.id;
  const k8sDir = join(dir, 'k8s');
  const hostIp = `10.${octet}.255.1`;
  const etcdIp = `127.${octet}.255.1`;
  const nodes: NodeLayout[] = [];
  for (let i = 1; i <= nodeCount; i++) {
    const name = nodeName(i);
    const nodeDir = join(dir, 'nodes', name);
    const containerdSocket = join(nodeDir, 'run', 'containerd', 'containerd.sock');
    const crioSocket = join(nodeDir, 'run', 'crio', 'crio.sock');
    const hostPaths = {
      runtimeSocket: runtime === 'cri-o' ? crioSocket : containerdSocket,
      containerdSocket,
      containerdRoot: join(nodeDir, 'var', 'lib', 'containerd'),
      containerdState: join(nodeDir, 'run', 'containerd'),
      kubeletRoot: join(nodeDir, 'var', 'lib', 'kubelet'),
      cniConfDir: join(nodeDir, 'etc', 'cni', 'net.d'),
      cniBinDir: join(nodeDir, 'opt', 'cni', 'bin'),
      cniStateDir: join(nodeDir, 'var', 'lib', 'cni'),
    };
    const binds = [
      { source: join(nodeDir, 'run', 'containerd'), target: '/run/containerd' },
      { source: hostPaths.containerdRoot, target: '/var/lib/containerd' },
      { source: hostPaths.kubeletRoot, target: '/var/lib/kubelet' },
      { source: hostPaths.cniConfDir, target: '/etc/cni/net.d' },
      { source: hostPaths.cniBinDir, target: '/opt/cni/bin' },
      { source: hostPaths.cniStateDir, target: '/var/lib/cni' },
      { source: join(nodeDir, 'var', 'log', 'pods'), target: '/var/log/pods' },
      { source: join(nodeDir, 'var', 'log', 'containers'), target: '/var/log/containers' },
      // CRI-O: its socket, exit files and attach sockets; containers/storage's root (images, layers) and runroot
      ...(runtime === 'cri-o'
        ? [
            { source: join(nodeDir, 'run', 'crio'), target: '/run/crio' },
            { source: join(nodeDir, 'var', 'lib', 'containers'), target: '/var/lib/containers' },
            { source: join(nodeDir, 'run', 'containers'), target: '/run/containers' },
          ]
        : []),
    ];
    nodes.push({
      index: i,
      name,
      ip: `10.${octet}.255.${10 + i}`,
      podCidr: `10.${octet}.${i}.0/24`,
      podGateway: `10.${octet}.${i}.1`,
      netns: `kd-${id}-${name}`,
      hostVeth: `kd${id}v${i}`,
      cgroupRoot: `/kd-${id}-${name}`,
      dir: nodeDir,
      clusterDir: dir,
      runtime,
      logDir: join(nodeDir, 'logs'),
      runDir: join(nodeDir, 'pids'),
      binds,
      hostPaths,
      inNode: {
        runtimeSocket: runtime === 'cri-o' ? '/run/crio/crio.sock' : '/run/containerd/containerd.sock',
        containerdSocket: '/run/containerd/containerd.sock',
        kubeletRoot: '/var/lib/kubelet',
        cniConfDir: '/etc/cni/net.d',
        cniBinDir: '/opt/cni/bin',
        cniStateDir: '/var/lib/cni',
        podLogDir: '/var/log/pods',
      },
      containerdConfig: join(nodeDir, 'containerd.toml'),
      containerdCertsDir: join(nodeDir, 'certs.d'),
      crio: {
        config: join(nodeDir, 'crio.conf'),
        registriesConf: join(nodeDir, 'registries.conf'),
        registriesConfDir: join(nodeDir, 'registries.conf.d'),
        policy: join(nodeDir, 'policy.json'),
        runtimeWrapper: join(nodeDir, 'runc-wrapper'),
      },
      kubeletConfig: join(nodeDir, 'kubelet-config.yaml'),
      kubeletKubeconfig: join(k8sDir, 'pki', `${name}.kubeconfig`),
      kubeProxyConfig: join(nodeDir, 'kube-proxy-config.yaml'),
      holderPidFile: join(nodeDir, 'pids', 'holder.pid'),
    });
  }
  return {
    dir,
    id,
    octet,
    hostBridge: `kd${id}k`,
    hostIp,
    nodeNetworkCidr: `10.${octet}.255.0/24`,
    clusterCidr: `10.${octet}.0.0/17`,
    serviceCidr: `10.${octet}.254.0/24`,
    kubernetesServiceIp: `10.${octet}.254.1`,
    apiServerUrl: `https://${hostIp}:${API_SERVER_PORT}`,
    etcdIp,
    etcdClientUrl: `http://${etcdIp}:2379`,
    etcdPeerUrl: `http://${etcdIp}:2380`,
    k8sDir,
    pkiDir: join(k8sDir, 'pki'),
    etcdDataDir: join(k8sDir, 'etcd'),
    logDir: paths.logDir,
    runDir: paths.runDir,
    adminKubeconfig: join(k8sDir, 'pki', 'admin.kubeconfig'),
    nodes,
  };
}
