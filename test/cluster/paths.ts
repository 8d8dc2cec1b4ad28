// Every path and name of one local cluster instance, derived from its directory (CLUSTER_DIR), so two clusters
// can run side by side on one machine: private containerd root/state/sockets, own registry data, own CNI dirs,
// own bridge name, own pod subnet and pod cgroup parent.
import { createHash } from 'node:crypto';
import { isAbsolute, join, resolve } from 'node:path';
import { packageRoot } from '../../src/util/repo-root.js';

/** Characters allowed in CLUSTER_DIR: the path goes unquoted into TOML/YAML/JSON configs and shell lines. */
const SAFE_DIR = /^\/[A-Za-z0-9._/-]*$/;
/** Longest socket path a unix socket address can hold (108 bytes minus a margin). */
const MAX_SOCKET_PATH = 100;

export interface RegistryPaths {
  dir: string;
  /** Config, data and PID file of the open registry. */
  openConfig: string;
  openData: string;
  openPidFile: string;
  /** Config, data, PID file and htpasswd file of the registry with basic auth. */
  authConfig: string;
  authData: string;
  authPidFile: string;
  htpasswd: string;
  /** Generated user/password of the auth registry (mode 0600). */
  credentials: string;
  /** Credentials in the containers-auth.json format, for skopeo (mode 0600). */
  skopeoAuthFile: string;
}

export interface ContainerdPaths {
  dir: string;
  config: string;
  root: string;
  state: string;
  opt: string;
  certsDir: string;
  socket: string;
  ttrpcSocket: string;
  pidFile: string;
  runcRoot: string;
  log: string;
}

export interface CniPaths {
  /** One directory of plugin executables (symlinks to /usr/lib/cni/* plus any project plugin). */
  binDir: string;
  confDir: string;
  /** Parent of the IPAM data directories (host-local uses <stateDir>/host-local). */
  stateDir: string;
  defaultConflist: string;
}

export interface ClusterPaths {
  dir: string;
  /** 8 hex digits of sha256(dir): the instance id behind every derived name. */
  id: string;
  /** Marks a directory created by this tooling (purge deletes only such a directory). */
  marker: string;
  envFile: string;
  /** Ports and subnet chosen on the first up, reused afterwards. */
  allocationsFile: string;
  runDir: string;
  logDir: string;
  registry: RegistryPaths;
  imagesDir: string;
  containerd: ContainerdPaths;
  cni: CniPaths;
  /** Linux bridge of the pod network (<= 15 characters). */
  bridge: string;
  /** CNI network name. */
  networkName: string;
  /** Second octet of the pod subnet 10.X.0.0/16 tried first (100..249; never 88, which the reference lab uses). */
  preferredSubnetOctet: number;
  /** cgroup parent for pods of this cluster (cgroupfs path); down removes everything below it. */
  podCgroupParent: string;
  /** Where pod/container logs go (LinuxPodSandboxConfig.log_directory = <podLogDir>/<namespace>_<name>_<uid>). */
  podLogDir: string;
}

/** CLUSTER_DIR from the environment (made absolute), else <repo>/.cluster. */
export function resolveClusterDir(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.CLUSTER_DIR?.trim();
  const dir = fromEnv ? resolve(fromEnv) : join(packageRoot(), '.cluster');
  validateClusterDir(dir);
  return dir;
}

export function validateClusterDir(dir: string): void {
  if (!isAbsolute(dir) || !SAFE_DIR.test(dir)) {
    throw new Error(`CLUSTER_DIR must be an absolute path of letters, digits, '.', '_', '-' and '/': got ${dir}`);
  }
  if (dir === '/' || dir.split('/').filter(Boolean).length < 2) {
    throw new Error(`CLUSTER_DIR must be a dedicated directory at least two levels deep, not ${dir}`);
  }
}

export function clusterId(dir: string): string {
  return createHash('sha256').update(dir).digest('hex').slice(0, 8);
}

export function clusterPaths(dir: string): ClusterPaths {
  validateClusterDir(dir);
  const id = clusterId(dir);
  const runDir = join(dir, 'run');
  const registryDir = join(dir, 'registry');
  const containerdDir = join(dir, 'containerd');
  const cniDir = join(dir, 'cni');
  const socket = join(runDir, 'containerd.sock');
  if (Buffer.byteLength(`${socket}.ttrpc`) > MAX_SOCKET_PATH) {
    throw new Error(
      `CLUSTER_DIR ${dir} is too long: the containerd socket path must stay under ${MAX_SOCKET_PATH} bytes`,
    );
  }
  return {
    dir,
    id,
    marker: join(dir, '.kruise-daemon-cluster'),
    envFile: join(dir, 'env'),
    allocationsFile: join(dir, 'allocations.json'),
    runDir,
    logDir: join(dir, 'logs'),
    registry: {
      dir: registryDir,
      openConfig: join(registryDir, 'open.yml'),
      openData: join(registryDir, 'open-data'),
      openPidFile: join(runDir, 'registry.pid'),
      authConfig: join(registryDir, 'auth.yml'),
      authData: join(registryDir, 'auth-data'),
      authPidFile: join(runDir, 'registry-auth.pid'),
      htpasswd: join(registryDir, 'htpasswd'),
      credentials: join(registryDir, 'credentials.json'),
      skopeoAuthFile: join(registryDir, 'skopeo-auth.json'),
    },
    imagesDir: join(dir, 'images'),
    containerd: {
      dir: containerdDir,
      config: join(containerdDir, 'config.toml'),
      root: join(containerdDir, 'root'),
      state: join(containerdDir, 'state'),
      opt: join(containerdDir, 'opt'),
      certsDir: join(containerdDir, 'certs.d'),
      socket,
      ttrpcSocket: `${socket}.ttrpc`,
      pidFile: join(runDir, 'containerd.pid'),
      runcRoot: join(runDir, 'runc'),
      log: join(dir, 'logs', 'containerd.log'),
    },
    cni: {
      binDir: join(cniDir, 'bin'),
      confDir: join(cniDir, 'net.d'),
      stateDir: join(cniDir, 'state'),
      defaultConflist: join(cniDir, 'net.d', '50-default.conflist'),
    },
    bridge: `kd${id}`,
    networkName: `kd-${id}`,
    preferredSubnetOctet: 100 + (Number.parseInt(id, 16) % 150),
    podCgroupParent: `/kd-${id}`,
    podLogDir: join(dir, 'pod-logs'),
  };
}
