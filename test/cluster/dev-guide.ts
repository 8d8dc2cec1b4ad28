// What `npm run dev` leaves for the user's other shell: `$CLUSTER_DIR/dev.env` (the cluster's variables, a fresh
// kubectl cache, the kubectl plugin on PATH, the agents' metrics URLs; refused once dev is gone) and
// `$CLUSTER_DIR/bin/kubectl-kruise-node`, and the guide it prints. Everything dev writes is inside the cluster
// directory (the controller's webhook key and the kubectl cache in a private `dev/`) and is removed at teardown.
// Pure text builders plus the file writes and removals.
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where `npm run dev` writes, all inside the cluster directory. */
export interface DevPaths {
  envFile: string;
  /** The kubectl plugin under both names. */
  binDir: string;
  /** examples/ filled in for this cluster. */
  examplesDir: string;
  /** Mode 0700: what only dev and its processes read. */
  stateDir: string;
  kubectlCacheDir: string;
  /** The controller's webhook CA and serving certificate, with their private keys. */
  webhookCertDir: string;
}

export function devPaths(clusterDir: string): DevPaths {
  const stateDir = join(clusterDir, 'dev');
  return {
    envFile: join(clusterDir, 'dev.env'),
    binDir: join(clusterDir, 'bin'),
    examplesDir: join(clusterDir, 'examples'),
    stateDir,
    kubectlCacheDir: join(stateDir, 'kubectl-cache'),
    webhookCertDir: join(stateDir, 'webhook-certs'),
  };
}

/** Remove everything dev writes (at teardown; and before a start, what a dev that died left). */
export function removeDevFiles(clusterDir: string): void {
  const paths = devPaths(clusterDir);
  for (const path of [paths.envFile, paths.binDir, paths.examplesDir, paths.stateDir]) {
    rmSync(path, { recursive: true, force: true });
  }
}

/** A fresh start: no leftovers, and an empty private state directory. */
export function prepareDevFiles(clusterDir: string): DevPaths {
  removeDevFiles(clusterDir);
  const paths = devPaths(clusterDir);
  mkdirSync(paths.stateDir, { recursive: true, mode: 0o700 });
  chmodSync(paths.stateDir, 0o700);
  return paths;
}

export interface DevSetup {
  clusterDir: string;
  nodes: string[];
  /** node → http://<node address>:PORT (the agent's /healthz, /readyz, /metrics) */
  agentUrls: Map<string, string>;
  controllerUrl: string | undefined;
  /** The dev process: dev.env works only while a process of this pid has `script` in its command line. */
  owner: { pid: number; script: string };
  /** The compiled plugin entry and the Node to run it with. */
  pluginEntry: string;
  nodePath: string;
  podIpam: string;
  /** examples/ of the repository, and the values of its placeholders for this cluster. */
  examplesDir: string;
  registry: string;
  firstNode: string;
  /**
   * `npm run dev -- --in-cluster`: the agents are deploy/'s DaemonSet and the controller its Deployment (no host
   * process): `ips` finds the agents through the API server (no KRUISE_NODE_AGENTS).
   */
  inCluster?: boolean;
}

/** An example with `${REGISTRY}` and `${NODE_NAME}` filled in (what `envsubst '$REGISTRY $NODE_NAME'` does). */
export function fillExample(text: string, values: { registry: string; node: string }): string {
  return text.replace(/\$\{(REGISTRY|NODE_NAME)\}/g, (_, name: string) =>
    name === 'REGISTRY' ? values.registry : values.node,
  );
}

/** Copies of examples/*.yaml with this cluster's registry and first node: `kubectl apply -f $EXAMPLES/<file>`. */
export function renderExamples(setup: DevSetup): string {
  const out = devPaths(setup.clusterDir).examplesDir;
  mkdirSync(out, { recursive: true });
  for (const file of readdirSync(setup.examplesDir).filter((f) => f.endsWith('.yaml'))) {
    const text = readFileSync(join(setup.examplesDir, file), 'utf8');
    writeFileSync(join(out, file), fillExample(text, { registry: setup.registry, node: setup.firstNode }));
  }
  return out;
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** `--agent` values for `kubectl kruise-node ips`: NODE=URL,NODE=URL. */
export function agentList(setup: Pick<DevSetup, 'agentUrls'>): string {
  return [...setup.agentUrls].map(([node, url]) => `${node}=${url}`).join(',');
}

/** Lines that stop the sourcing (status 1, and a message) unless dev still runs: a dev that died left dev.env. */
function staleGuard(envFile: string, owner: DevSetup['owner']): string[] {
  const stale = `${envFile} is stale: npm run dev (pid ${owner.pid}) is no longer running; start it again`;
  return [
    `if ! grep -qaF -- ${shellQuote(owner.script)} /proc/${owner.pid}/cmdline 2>/dev/null; then`,
    `  echo ${shellQuote(stale)} >&2`,
    '  return 1 2>/dev/null || exit 1',
    'fi',
  ];
}

export function devEnvFile(setup: DevSetup): string {
  const paths = devPaths(setup.clusterDir);
  return [
    '# written by `npm run dev`: source it in another shell while dev runs (its Ctrl-C removes this file)',
    ...staleGuard(paths.envFile, setup.owner),
    `. ${shellQuote(join(setup.clusterDir, 'env'))}`,
    `export KUBECACHEDIR=${shellQuote(paths.kubectlCacheDir)}`,
    // the plugin, then the cluster's own kubectl (KUBECTL_DIR, from the cluster's env: its Kubernetes version)
    `export PATH=${shellQuote(paths.binDir)}:"\${KUBECTL_DIR:+$KUBECTL_DIR:}$PATH"`,
    ...(setup.inCluster ? [] : [`export KRUISE_NODE_AGENTS=${shellQuote(agentList(setup))}`]),
    `export EXAMPLES=${shellQuote(paths.examplesDir)}`,
    ...(setup.controllerUrl ? [`export KRUISE_CONTROLLER_URL=${shellQuote(setup.controllerUrl)}`] : []),
    '',
  ].join('\n');
}

export function pluginWrapper(setup: Pick<DevSetup, 'nodePath' | 'pluginEntry'>): string {
  return `#!/bin/sh\nexec ${shellQuote(setup.nodePath)} ${shellQuote(setup.pluginEntry)} "$@"\n`;
}

/** Write dev.env, bin/kubectl-kruise-node and the filled examples; returns the path of dev.env. */
export function writeDevFiles(setup: DevSetup): string {
  renderExamples(setup);
  const bin = devPaths(setup.clusterDir).binDir;
  mkdirSync(bin, { recursive: true });
  // kubectl maps `kubectl kruise-node` to kubectl-kruise_node (a dash in the file name separates sub-commands:
  // kubectl-kruise-node answers `kubectl kruise node`); both names, so both spellings work.
  for (const name of ['kubectl-kruise_node', 'kubectl-kruise-node']) {
    const plugin = join(bin, name);
    writeFileSync(plugin, pluginWrapper(setup));
    chmodSync(plugin, 0o755);
  }
  const envFile = devPaths(setup.clusterDir).envFile;
  writeFileSync(envFile, devEnvFile(setup), { mode: 0o600 });
  return envFile;
}

export function devGuide(setup: DevSetup, envFile: string): string {
  const n = setup.nodes.length;
  const agents = [...setup.agentUrls].map(([node, url]) => `    ${node}  ${url}/metrics`);
  return [
    '',
    `The local cluster is up: ${n} node${n === 1 ? '' : 's'} (${setup.nodes.join(', ')}), one kruise-daemon each,`,
    setup.inCluster
      ? `installed in the cluster (kubectl apply -k ${setup.clusterDir}/in-cluster: DaemonSet kruise-daemon, Deployment kruise-controller), pod IPAM ${setup.podIpam}.`
      : `${setup.controllerUrl ? 'kruise-controller with its webhooks' : 'no kruise-controller (not built)'}, pod IPAM ${setup.podIpam}.`,
    '',
    'In another shell, from this directory:',
    `  source ${envFile}   # KUBECONFIG, REGISTRY, NODE_NAME, EXAMPLES, the kubectl plugin on PATH`,
    '  kubectl get nodes',
    '  kubectl kruise-node pull $REGISTRY/test/busybox:2.0      # an image pulled on every node',
    '  kubectl kruise-node nodeimages',
    '  kubectl apply -f $EXAMPLES/crr-pod.yaml                  # examples/ filled for this cluster',
    '  kubectl kruise-node recreate crr-demo -c app             # a container recreated in place',
    '  kubectl apply -f $EXAMPLES/launch-priority-pod.yaml      # a launch order enforced',
    '  kubectl apply -f $EXAMPLES/statefulset-ip-retention.yaml # StatefulSet pods keeping their node and IP',
    setup.inCluster
      ? '  kubectl kruise-node ips                                  # the agents, through the API server'
      : '  kubectl kruise-node ips                                  # the agents: $KRUISE_NODE_AGENTS',
    'README.md ("Try it") walks through all four features; examples/ has the manifests.',
    '',
    "Agents' health and metrics:",
    ...agents,
    ...(setup.controllerUrl ? [`Controller: ${setup.controllerUrl}/metrics`] : []),
    'Ctrl-C stops everything and tears the cluster down.',
    '',
  ].join('\n');
}
