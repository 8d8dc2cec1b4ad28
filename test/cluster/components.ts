// The local cluster is this ordered list of components: up runs them in order (each one's variables are visible
// to the next through ctx.env) and writes <CLUSTER_DIR>/env; down runs them in reverse.
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ClusterComponent, ClusterContext } from './component.js';
import { readEnvFile, writeEnvFile } from './env-file.js';
import { realClusterComponents } from './k8s/components.js';
import { clusterPaths } from './paths.js';
import { hasStatus, type ComponentStatus } from './runtime/component-status.js';
import { containerd } from './runtime/containerd.js';
import { withDirLock } from './runtime/dir-lock.js';
import { ClusterError, errorMessage, PrerequisiteError } from './runtime/errors.js';
import { hostPackages } from './runtime/host-packages.js';
import { mountsUnder } from './runtime/mounts.js';
import { podNetwork } from './runtime/pod-network.js';
import { registries } from './runtime/registries.js';
import { testImages } from './runtime/test-images.js';
import { runtimeBinaries } from './k8s/binaries.js';
import {
  existingStack,
  recordStack,
  requestedStack,
  sameStack,
  stackName,
  stackVariables,
  type Stack,
} from './stack.js';

export const MAX_NODE_COUNT = 50;
const LOCK_TIMEOUT_MS = 15 * 60_000;

/**
 * What the local cluster is made of: `real` (kube-apiserver, kube-controller-manager, kube-scheduler, etcd and N real
 * kubelets with their own containerd, each in its own network and mount namespace: test/cluster/k8s) or `runtime`
 * (no Kubernetes: one containerd with the pod network, the registries and the test images, for the component tests
 * of the CRI client and the CNI plugin).
 */
export type ClusterKind = 'runtime' | 'real';

export function parseClusterKind(text: string): ClusterKind {
  if (text !== 'runtime' && text !== 'real')
    throw new Error(`cluster kind must be real or runtime, got ${JSON.stringify(text)}`);
  return text;
}

/** A recorded kind: 'lite' (the emulator and kubelet-lite on one containerd, both gone) is read as its runtime part. */
function recordedKind(text: string): ClusterKind {
  return text === 'lite' ? 'runtime' : parseClusterKind(text);
}

/** Nodes of a cluster when up is not told: a real one has two (to see scheduling and cross-node traffic). */
export function defaultNodeCount(kind: ClusterKind): number {
  return kind === 'real' ? 2 : 1;
}

/** Where up records the kind it starts (before its first component, so a down after a crash knows it too). */
function kindFile(dir: string): string {
  return join(dir, 'kind');
}

/** The kind of the cluster in `dir`: what its last up recorded (or its env file says), else CLUSTER_KIND, else real. */
export async function clusterKindOf(dir: string, env: NodeJS.ProcessEnv = process.env): Promise<ClusterKind> {
  const recorded = (await readFile(kindFile(dir), 'utf8').catch(() => undefined))?.trim();
  if (recorded) return recordedKind(recorded);
  const running = (await readEnvFile(clusterPaths(dir).envFile).catch(() => undefined))?.CLUSTER_KIND;
  if (running) return recordedKind(running);
  return parseClusterKind(env.CLUSTER_KIND ?? 'real');
}

/** The components of the local cluster, in start order. */
export function clusterComponents(kind: ClusterKind): ClusterComponent[] {
  if (kind === 'real') return realClusterComponents();
  return [hostPackages(), runtimeBinaries(), registries(), testImages(), podNetwork(), containerd()];
}

export interface ClusterRunOptions {
  dir: string;
  log: (message: string) => void;
  /** Defaults to clusterComponents() of the cluster's kind. */
  components?: ClusterComponent[];
  /** For up: the kind to start (default: the directory's recorded kind, else CLUSTER_KIND, else real). */
  kind?: ClusterKind | undefined;
}

export interface UpOptions extends ClusterRunOptions {
  /** The stack to start (default: CLUSTER_KUBERNETES / CLUSTER_RUNTIME, else versions.env's default cell). */
  stack?: Stack | undefined;
  /** Nodes of a real cluster (NODE_COUNT); default: the running cluster's, else defaultNodeCount(kind). */
  nodeCount?: number | undefined;
}

export interface DownOptions extends ClusterRunOptions {
  /** Also delete the cluster directory (images, registry data, containerd content, allocations). */
  purge?: boolean;
}

export function parseNodeCount(text: string): number {
  const count = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(count) || count < 1 || count > MAX_NODE_COUNT) {
    throw new Error(`--nodes must be a whole number from 1 to ${MAX_NODE_COUNT}, got ${JSON.stringify(text)}`);
  }
  return count;
}

function context(dir: string, env: Record<string, string>, log: (message: string) => void): ClusterContext {
  return { dir, env, log };
}

function checkVariables(component: string, vars: Record<string, string>): void {
  for (const [key, value] of Object.entries(vars)) {
    if (typeof value !== 'string') throw new ClusterError(`component ${component} returned a non-string ${key}`);
  }
}

/** Bring the cluster up (idempotent) and write <dir>/env; returns the variables written. */
export async function upCluster(options: UpOptions): Promise<Record<string, string>> {
  const paths = clusterPaths(options.dir);
  await mkdir(paths.runDir, { recursive: true });
  await mkdir(paths.logDir, { recursive: true });
  if (!existsSync(paths.marker)) {
    await writeFile(paths.marker, 'A kruise-daemon local cluster (test infrastructure): see test/cluster/README.md\n');
  }
  return withDirLock(`${paths.runDir}/lock`, LOCK_TIMEOUT_MS, async () => {
    const previous = await readEnvFile(paths.envFile).catch(() => undefined);
    const current = await clusterKindOf(paths.dir);
    if (options.kind !== undefined && previous !== undefined && options.kind !== current) {
      throw new ClusterError(
        `${paths.dir} holds a ${current} cluster: bring it down first to start a ${options.kind} one`,
      );
    }
    const kind = options.kind ?? current;
    if (kind === 'runtime' && options.nodeCount !== undefined && options.nodeCount !== 1)
      throw new ClusterError(`a runtime cluster has no nodes to count (--nodes is for a real cluster)`);
    const nodeCount =
      options.nodeCount ?? (previous?.NODE_COUNT ? parseNodeCount(previous.NODE_COUNT) : defaultNodeCount(kind));
    if (kind !== current) {
      // another kind was here and did not finish its up (no env file): clean up what it may have left first
      const old = context(paths.dir, { CLUSTER_DIR: paths.dir }, options.log);
      for (const component of [...clusterComponents(current)].reverse())
        await component.down(old).catch(() => undefined);
    }
    const stack = options.stack ?? requestedStack();
    const held = existingStack(paths.dir);
    if (held !== undefined && !sameStack(held, stack)) {
      throw new ClusterError(
        `${paths.dir} holds a cluster of ${stackName(held)}: to start ${stackName(stack)} there, remove it first ` +
          `(CLUSTER_DIR=${paths.dir} npm run cluster -- down --purge), or use another CLUSTER_DIR`,
      );
    }
    if (kind === 'runtime' && stack.runtime === 'cri-o') {
      throw new ClusterError(
        `the runtime kind runs one containerd on this machine; ${stackName(stack)} is a real-cluster cell ` +
          `(up --kind real --kubernetes 1.36 --runtime cri-o)`,
      );
    }
    recordStack(paths.dir, stack);
    await writeFile(kindFile(paths.dir), `${kind}\n`);
    const env: Record<string, string> = {
      CLUSTER_DIR: paths.dir,
      CLUSTER_KIND: kind,
      NODE_COUNT: String(nodeCount),
      ...stackVariables(stack),
    };
    const ctx = context(paths.dir, env, options.log);
    for (const component of options.components ?? clusterComponents(kind)) {
      const started = Date.now();
      let vars: Record<string, string>;
      try {
        vars = await component.up(ctx);
      } catch (err) {
        if (err instanceof PrerequisiteError) throw err;
        throw new ClusterError(`up: component ${component.name} failed: ${errorMessage(err)}`, { cause: err });
      }
      checkVariables(component.name, vars);
      Object.assign(env, vars);
      options.log(`${component.name}: ready (${Date.now() - started} ms)`);
    }
    await writeEnvFile(
      paths.envFile,
      env,
      `kruise-daemon local cluster (test infrastructure). Use: source ${paths.envFile}\nWritten by 'up'; removed by 'down'.`,
    );
    return env;
  });
}

/** Stop everything up started (reverse order); succeeds when nothing runs. Errors are collected, then thrown. */
export async function downCluster(options: DownOptions): Promise<void> {
  const paths = clusterPaths(options.dir);
  if (!existsSync(paths.dir)) return;
  if (!existsSync(paths.marker)) {
    throw new ClusterError(`${paths.dir} was not made by this tooling (no ${paths.marker}); not touching it`);
  }
  await mkdir(paths.runDir, { recursive: true });
  await withDirLock(`${paths.runDir}/lock`, LOCK_TIMEOUT_MS, async () => {
    const env = (await readEnvFile(paths.envFile).catch(() => undefined)) ?? { CLUSTER_DIR: paths.dir };
    const ctx = context(paths.dir, env, options.log);
    const failures: string[] = [];
    const kind = await clusterKindOf(paths.dir);
    for (const component of [...(options.components ?? clusterComponents(kind))].reverse()) {
      try {
        await component.down(ctx);
      } catch (err) {
        failures.push(`${component.name}: ${errorMessage(err)}`);
      }
    }
    await rm(paths.envFile, { force: true });
    if (failures.length > 0) throw new ClusterError(`down: ${failures.join('; ')}`);
  });
  if (options.purge) {
    const mounts = await mountsUnder(paths.dir);
    if (mounts.length > 0) {
      throw new ClusterError(`not purging ${paths.dir}: still mounted below it: ${mounts.join(', ')}`);
    }
    await rm(paths.dir, { recursive: true, force: true });
    options.log(`purged ${paths.dir}`);
  }
}

/** Health of every component that reports it, plus whether the env file is there. */
export async function clusterStatus(options: ClusterRunOptions): Promise<ComponentStatus[]> {
  const paths = clusterPaths(options.dir);
  const env = (await readEnvFile(paths.envFile).catch(() => undefined)) ?? { CLUSTER_DIR: paths.dir };
  const ctx = context(paths.dir, env, options.log);
  const statuses: ComponentStatus[] = [{ name: 'env', healthy: existsSync(paths.envFile), detail: paths.envFile }];
  for (const component of options.components ?? clusterComponents(await clusterKindOf(paths.dir))) {
    if (hasStatus(component)) statuses.push(...(await component.status(ctx)));
  }
  return statuses;
}

/** Is the cluster in `dir` fully up (env file written and every component with a status healthy)? */
export async function isClusterUp(options: ClusterRunOptions): Promise<boolean> {
  if (!existsSync(clusterPaths(options.dir).envFile)) return false;
  return (await clusterStatus(options)).every((status) => status.healthy);
}
