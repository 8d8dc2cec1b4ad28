// The runtime cluster for the component tests of the CRI client and the CNI plugin: one containerd with the pod
// network, the registries and the test images, no Kubernetes (tests of behaviour in a cluster use the real one:
// test/support/real-cluster.ts). useCluster() brings it up once per process through the same components as
// `npm run cluster -- up --kind runtime`, in RUNTIME_CLUSTER_DIR (default <repo>/.cluster-runtime). If this run
// started it, it is stopped at the end of the run (atRunEnd, also on failure); one already up is left running.
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { downCluster, isClusterUp, upCluster } from '../cluster/components.js';
import { packageRoot } from '../../src/util/repo-root.js';
import { clusterPaths, validateClusterDir } from '../cluster/paths.js';
import { restartContainerd as restartClusterContainerd } from '../cluster/runtime/containerd.js';
import { atRunEnd } from './fixtures.js';
import { errorMessage } from '../../src/util/error-message.js';

export interface ClusterImages {
  /** $REGISTRY/test/pause:3.9, the sandbox image. */
  pause: string;
  /** $REGISTRY/test/busybox:1.0 and :2.0 (different /VERSION, different digests). */
  busybox1: string;
  busybox2: string;
  /** $AUTH_REGISTRY/test/busybox:1.0 (needs authUser/authPassword; same image id as busybox1). */
  authBusybox1: string;
}

export interface ClusterEnv {
  /** CLUSTER_DIR. */
  dir: string;
  nodeCount: number;
  /** containerd's CRI unix socket (path, no scheme). */
  runtimeSocket: string;
  /** host:port of the open registry and of the one with basic auth. */
  registry: string;
  authRegistry: string;
  authUser: string;
  authPassword: string;
  cniBinDir: string;
  cniConfDir: string;
  /** Parent of IPAM data directories (host-local keeps its leases in <cniStateDir>/host-local). */
  cniStateDir: string;
  cniNetworkName: string;
  podSubnet: string;
  podGateway: string;
  podBridge: string;
  /** cgroup parent to give pod sandboxes (LinuxPodSandboxConfig.cgroup_parent), e.g. `${podCgroupParent}/pod<uid>`. */
  podCgroupParent: string;
  /** Parent directory for pod log directories (LinuxPodSandboxConfig.log_directory). */
  podLogDir: string;
  sandboxImage: string;
  containerdPidFile: string;
  containerdConfig: string;
  containerdLog: string;
  images: ClusterImages;
  /** Every variable of <dir>/env. */
  vars: Readonly<Record<string, string>>;
}

/** Typed view of the env file's variables; a missing variable is an error naming it. */
export function toClusterEnv(vars: Record<string, string>): ClusterEnv {
  const need = (key: string): string => {
    const value = vars[key];
    if (value === undefined || value === '') throw new Error(`cluster env lacks ${key}`);
    return value;
  };
  return {
    dir: need('CLUSTER_DIR'),
    nodeCount: Number(need('NODE_COUNT')),
    runtimeSocket: need('RUNTIME_SOCKET'),
    registry: need('REGISTRY'),
    authRegistry: need('AUTH_REGISTRY'),
    authUser: need('AUTH_USER'),
    authPassword: need('AUTH_PASSWORD'),
    cniBinDir: need('CNI_BIN_DIR'),
    cniConfDir: need('CNI_CONF_DIR'),
    cniStateDir: need('CNI_STATE_DIR'),
    cniNetworkName: need('CNI_NETWORK_NAME'),
    podSubnet: need('POD_SUBNET'),
    podGateway: need('POD_GATEWAY'),
    podBridge: need('POD_BRIDGE'),
    podCgroupParent: need('POD_CGROUP_PARENT'),
    podLogDir: need('POD_LOG_DIR'),
    sandboxImage: need('SANDBOX_IMAGE'),
    containerdPidFile: need('CONTAINERD_PID_FILE'),
    containerdConfig: need('CONTAINERD_CONFIG'),
    containerdLog: need('CONTAINERD_LOG'),
    images: {
      pause: need('SANDBOX_IMAGE'),
      busybox1: need('TEST_IMAGE_BUSYBOX_1'),
      busybox2: need('TEST_IMAGE_BUSYBOX_2'),
      authBusybox1: need('TEST_IMAGE_AUTH_BUSYBOX_1'),
    },
    vars: Object.freeze({ ...vars }),
  };
}

/** Progress of an in-process up/down goes to <dir>/logs/cluster.log, not into the test report. */
function fileLog(dir: string): (message: string) => void {
  const logDir = join(dir, 'logs');
  return (message: string) => {
    try {
      mkdirSync(logDir, { recursive: true });
      appendFileSync(join(logDir, 'cluster.log'), `${new Date().toISOString()} [pid ${process.pid}] ${message}\n`);
    } catch {
      // logging must never fail a test
    }
  };
}

let memo: Promise<ClusterEnv> | undefined;

/** The local cluster, up. Memoised per process: every test file may call it. */
export function useCluster(): Promise<ClusterEnv> {
  memo ??= startOnce().catch((err: unknown) => {
    memo = undefined; // let a later call try again (and report its own error)
    throw err;
  });
  return memo;
}

export function runtimeClusterDir(env: NodeJS.ProcessEnv = process.env): string {
  const dir = env.RUNTIME_CLUSTER_DIR ?? join(packageRoot(), '.cluster-runtime');
  validateClusterDir(dir);
  return dir;
}

async function startOnce(): Promise<ClusterEnv> {
  const dir = runtimeClusterDir();
  const log = fileLog(dir);
  const wasUp = await isClusterUp({ dir, log }).catch(() => false);
  if (!wasUp) {
    // registered before up, so a half-started cluster is stopped too
    atRunEnd(() => downCluster({ dir, log }));
  }
  try {
    return toClusterEnv(await upCluster({ dir, log, kind: 'runtime' }));
  } catch (err) {
    const message = errorMessage(err);
    throw new Error(
      `local cluster in ${dir} did not come up: ${message} (progress log: ${join(dir, 'logs', 'cluster.log')})`,
      {
        cause: err,
      },
    );
  }
}

/** Stop containerd and start it again with the same config; resolves when CRI answers. Returns the new PID. */
export async function restartContainerd(env: Pick<ClusterEnv, 'dir'>): Promise<number> {
  const { pid } = await restartClusterContainerd(clusterPaths(env.dir).dir);
  return pid;
}
