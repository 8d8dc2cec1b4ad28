// A real local cluster of a test's own, for tests that install deploy/'s workloads as a user would (helm install,
// kubectl apply -k) and uninstall them again: the shared test cluster (useRealCluster) already holds deploy/'s
// namespaces, ServiceAccounts and RBAC, which other tests' tokens are bound to. Nothing of deploy/ is applied here:
// only the cluster itself (2 nodes, pods on kruise-ipam, KRUISE_IMAGE in the registry). It is taken down and
// purged by stop(), and at the end of the run if the test did not get that far.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageRoot } from '../../src/util/repo-root.js';
import { errorMessage } from '../../src/util/error-message.js';
import { downCluster, upCluster } from '../cluster/components.js';
import { pluginWrapper, renderExamples } from '../cluster/dev-guide.js';
import { layoutFromContext } from '../cluster/k8s/context.js';
import type { K8sLayout, NodeLayout } from '../cluster/k8s/layout.js';
import { kubectl } from '../cluster/k8s/system.js';
import { validateClusterDir } from '../cluster/paths.js';
import { startDaemon, stopDaemon } from '../cluster/runtime/processes.js';
import { atRunEnd } from './fixtures.js';
import { waitFor } from './wait.js';
import { withEnv } from './with-env.js';
import { recordedCommand } from '../cluster/k8s/process.js';

const PLUGIN_ENTRY = fileURLToPath(new URL('../../src/cli/kubectl-kruise-node.js', import.meta.url));

export interface OwnCluster {
  dir: string;
  layout: K8sLayout;
  vars: Readonly<Record<string, string>>;
  /** `$REGISTRY/kruise-daemon:<tag>` split for helm's values. */
  image: { repository: string; tag: string };
  kubectl(args: string[], input?: string): { ok: boolean; out: string };
  /** Like kubectl(), but throws with kubectl's output when it fails. */
  must(args: string[], input?: string): string;
  stop(): Promise<void>;
}

/** Up a real cluster in `<repo>/.cluster-<name>` (2 nodes, kruise-ipam as the pods' IPAM, as `npm run dev`). */
export async function startOwnCluster(name: string): Promise<OwnCluster> {
  const dir = join(packageRoot(), `.cluster-${name}`);
  validateClusterDir(dir);
  const log = (message: string): void => void message; // its own logs/ hold the components' logs
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => (stopped ??= downCluster({ dir, log, purge: true }));
  atRunEnd(stop);
  let vars: Record<string, string>;
  try {
    vars = await withEnv({ CLUSTER_POD_IPAM: 'kruise-ipam' }, () =>
      upCluster({ dir, log, kind: 'real', nodeCount: 2 }),
    );
  } catch (err) {
    throw new Error(`cluster in ${dir} did not come up: ${errorMessage(err)}`, { cause: err });
  }
  const layout = await layoutFromContext({ dir, env: vars, log });
  if (!layout) throw new Error(`cluster in ${dir}: no layout after up`);
  const image = vars.KRUISE_IMAGE;
  if (!image) throw new Error(`cluster in ${dir}: no KRUISE_IMAGE in its env`);
  const colon = image.lastIndexOf(':');
  const must = (args: string[], input?: string): string => {
    const result = kubectl(layout, args, input);
    if (!result.ok) throw new Error(`kubectl ${args.join(' ')}: ${result.out}`);
    return result.out;
  };
  return {
    dir,
    layout,
    vars: Object.freeze({ ...vars }),
    image: { repository: image.slice(0, colon), tag: image.slice(colon + 1) },
    kubectl: (args, input) => kubectl(layout, args, input),
    must,
    stop,
  };
}

/**
 * What README's "Try it" block sources in place of `.cluster/dev.env` when the agents and the controller run as
 * pods: the cluster's variables, a kubectl cache, the plugin on PATH, $EXAMPLES filled in; no KRUISE_NODE_AGENTS
 * (the plugin finds the agents' pods itself). Returns the file's path.
 */
export function writeTryItEnv(cluster: OwnCluster): string {
  const base = join(cluster.dir, 'try-it');
  const bin = join(base, 'bin');
  mkdirSync(bin, { recursive: true });
  for (const name of ['kubectl-kruise_node', 'kubectl-kruise-node']) {
    writeFileSync(join(bin, name), pluginWrapper({ nodePath: process.execPath, pluginEntry: PLUGIN_ENTRY }));
    chmodSync(join(bin, name), 0o755);
  }
  const examples = renderExamples({
    clusterDir: base,
    examplesDir: join(packageRoot(), 'examples'),
    registry: cluster.vars.REGISTRY ?? '',
    firstNode: cluster.layout.nodes[0]?.name ?? '',
  } as Parameters<typeof renderExamples>[0]);
  const file = join(base, 'try-it.env');
  writeFileSync(
    file,
    [
      `. '${join(cluster.dir, 'env')}'`,
      `export KUBECACHEDIR='${join(base, 'kubectl-cache')}'`,
      `export PATH='${bin}':"$PATH"`,
      `export EXAMPLES='${examples}'`,
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  return file;
}

/**
 * Restart `node`'s kubelet with `extraArgs` after the cluster's own arguments (none: as the cluster runs it) and wait
 * until the new one serves /configz through the API server; returns its KubeletConfiguration. The command line the
 * cluster recorded is left as it was, so a later `up` restarts a kubelet running with extra arguments.
 */
export async function restartKubelet(
  cluster: Pick<OwnCluster, 'layout'>,
  node: NodeLayout,
  extraArgs: string[],
): Promise<Record<string, unknown>> {
  const pidFile = join(node.runDir, 'kubelet.pid');
  const { command, args, env } = recordedCommand(pidFile);
  await stopDaemon(pidFile, node.kubeletConfig, 10_000);
  await startDaemon({
    command,
    args: [...args, ...extraArgs],
    env,
    logFile: join(node.logDir, 'kubelet.log'),
    pidFile,
  });
  // the old kubelet is gone: /configz answers once the new one serves
  return waitFor(
    () => {
      const got = kubectl(cluster.layout, ['get', '--raw', `/api/v1/nodes/${node.name}/proxy/configz`]);
      return got.ok ? (JSON.parse(got.out) as { kubeletconfig: Record<string, unknown> }).kubeletconfig : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 250, message: `the restarted kubelet of ${node.name} to serve /configz` },
  );
}
