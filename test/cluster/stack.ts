// The stack a local cluster runs: a Kubernetes minor and a container runtime (`npm run cluster -- up --kubernetes 1.37
// --runtime containerd-2.4`, `npm run dev -- ...`, or CLUSTER_KUBERNETES / CLUSTER_RUNTIME). Every version is pinned
// in k8s/versions.env; the default is the newest cell there. `up` records the stack in <dir>/stack before its first
// component, so every component, `down` after a crash and the tests read the same one.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../src/util/repo-root.js';
import { ClusterError } from './runtime/errors.js';

export const KUBERNETES_MINORS = ['1.33', '1.35', '1.36', '1.37'] as const;
export type KubernetesMinor = (typeof KUBERNETES_MINORS)[number];

/** containerd-1.6 is Debian's containerd, runc and CNI plugins (the old cell); every other one is built here. */
export const RUNTIMES = ['containerd-2.4', 'containerd-2.2', 'containerd-1.6', 'cri-o'] as const;
export type RuntimeName = (typeof RUNTIMES)[number];

export interface Stack {
  kubernetes: KubernetesMinor;
  runtime: RuntimeName;
}

/** The cells a cluster can be: containerd 2.x under every minor, Debian's 1.6 only under 1.33, CRI-O 1.36 under 1.36. */
export function isKnownCell(stack: Stack): boolean {
  switch (stack.runtime) {
    case 'containerd-2.4':
    case 'containerd-2.2':
      return stack.kubernetes !== '1.33';
    case 'containerd-1.6':
      return stack.kubernetes === '1.33';
    case 'cri-o':
      return stack.kubernetes === '1.36';
  }
}

export const KNOWN_CELLS: readonly Stack[] = KUBERNETES_MINORS.flatMap((kubernetes) =>
  RUNTIMES.map((runtime) => ({ kubernetes, runtime })),
).filter(isKnownCell);

/**
 * The cells `npm run matrix` proves by default (about 40 minutes each on 2 cores): every current minor once on
 * containerd 2.x, both containerd minors among them, and CRI-O. The others stay runnable (`--cells`), unclaimed.
 */
export const MATRIX_CELLS: readonly Stack[] = KNOWN_CELLS.filter((cell) =>
  ['1.35/containerd-2.4', '1.36/containerd-2.2', '1.36/cri-o', '1.37/containerd-2.4'].includes(
    `${cell.kubernetes}/${cell.runtime}`,
  ),
);

export function stackName(stack: Stack): string {
  return `Kubernetes ${stack.kubernetes} on ${stack.runtime}`;
}

function versionsFile(): string {
  return join(packageRoot(), 'test', 'cluster', 'k8s', 'versions.env');
}

/** versions.env's text, read once per process (every binary path of every process spec is derived from it). */
let versionsText: string | undefined;

/** A value pinned in versions.env (`KEY=value`). */
export function pinned(key: string): string {
  const text = (versionsText ??= readFileSync(versionsFile(), 'utf8'));
  const match = new RegExp(`^${key}=([A-Za-z0-9.-]+)$`, 'm').exec(text);
  if (!match?.[1]) throw new ClusterError(`test/cluster/k8s/versions.env has no ${key}`);
  return match[1];
}

function knownCellsText(): string {
  return KNOWN_CELLS.map((cell) => `--kubernetes ${cell.kubernetes} --runtime ${cell.runtime}`).join('; ');
}

/** The stack named by a Kubernetes minor and a runtime (either may be left to the default); clear errors otherwise. */
export function parseStack(kubernetes: string | undefined, runtime: string | undefined): Stack {
  const fallback = defaultStack();
  const minor = kubernetes?.replace(/^v/, '').split('.').slice(0, 2).join('.') ?? fallback.kubernetes;
  if (!(KUBERNETES_MINORS as readonly string[]).includes(minor)) {
    throw new ClusterError(
      `unknown Kubernetes version ${JSON.stringify(kubernetes)}: the local cluster runs ${KUBERNETES_MINORS.join(', ')}`,
    );
  }
  const name =
    runtime ??
    (minor === '1.33' ? 'containerd-1.6' : minor === fallback.kubernetes ? fallback.runtime : 'containerd-2.4');
  if (!(RUNTIMES as readonly string[]).includes(name)) {
    throw new ClusterError(`unknown runtime ${JSON.stringify(runtime)}: the local cluster runs ${RUNTIMES.join(', ')}`);
  }
  const stack = { kubernetes: minor as KubernetesMinor, runtime: name as RuntimeName };
  if (!isKnownCell(stack)) {
    throw new ClusterError(
      `${stackName(stack)} is not a cell the local cluster runs; known cells: ${knownCellsText()}`,
    );
  }
  return stack;
}

export function defaultStack(): Stack {
  return {
    kubernetes: pinned('DEFAULT_KUBERNETES') as KubernetesMinor,
    runtime: pinned('DEFAULT_RUNTIME') as RuntimeName,
  };
}

/** The stack CLUSTER_KUBERNETES and CLUSTER_RUNTIME ask for (each defaults as parseStack says). */
export function requestedStack(env: NodeJS.ProcessEnv = process.env): Stack {
  return parseStack(env.CLUSTER_KUBERNETES || undefined, env.CLUSTER_RUNTIME || undefined);
}

function stackFile(dir: string): string {
  return join(dir, 'stack');
}

/** What `up` recorded in `dir`, or undefined (never brought up, or brought up before stacks existed). */
export function recordedStack(dir: string): Stack | undefined {
  if (!existsSync(stackFile(dir))) return undefined;
  const parsed = JSON.parse(readFileSync(stackFile(dir), 'utf8')) as Partial<Stack>;
  return parseStack(parsed.kubernetes, parsed.runtime);
}

export function recordStack(dir: string, stack: Stack): void {
  writeFileSync(stackFile(dir), `${JSON.stringify(stack)}\n`);
}

/** Before stacks, every cluster ran Kubernetes 1.33 on Debian's containerd 1.6 (and `up` wrote <dir>/kind). */
const BEFORE_STACKS: Stack = { kubernetes: '1.33', runtime: 'containerd-1.6' };

/** The stack of the cluster in `dir`: what up recorded (1.33 on containerd-1.6 for a directory older than stacks),
 *  else what the environment asks for. */
export function stackOf(dir: string, env: NodeJS.ProcessEnv = process.env): Stack {
  return existingStack(dir) ?? requestedStack(env);
}

/** The stack whose state `dir` holds, if any. */
export function existingStack(dir: string): Stack | undefined {
  return recordedStack(dir) ?? (existsSync(join(dir, 'kind')) ? BEFORE_STACKS : undefined);
}

export function sameStack(a: Stack, b: Stack): boolean {
  return a.kubernetes === b.kubernetes && a.runtime === b.runtime;
}

/** The exact versions of a stack's parts, from versions.env. */
export interface StackVersions {
  kubernetes: string;
  etcd: string;
  crictl: string;
  /** containerd's (or CRI-O's) version; Debian's containerd says 'debian'. */
  runtime: string;
  runc: string;
  cniPlugins: string;
}

export function stackVersions(stack: Stack): StackVersions {
  const debian = stack.runtime === 'containerd-1.6';
  const runtimeKey =
    stack.runtime === 'cri-o'
      ? 'CRIO_1_36'
      : debian
        ? undefined
        : `CONTAINERD_${stack.runtime.slice(11).replace('.', '_')}`;
  return {
    kubernetes: pinned(`KUBERNETES_${stack.kubernetes.replace('.', '_')}`),
    etcd: pinned('ETCD_VERSION'),
    crictl: pinned('CRICTL_VERSION'),
    runtime: runtimeKey === undefined ? 'debian' : pinned(runtimeKey),
    runc: debian ? 'debian' : pinned('RUNC_VERSION'),
    cniPlugins: debian ? 'debian' : pinned('CNI_PLUGINS_VERSION'),
  };
}

/** CLUSTER_KUBERNETES and CLUSTER_RUNTIME, as up writes them into the env file. */
export function stackVariables(stack: Stack): Record<string, string> {
  return { CLUSTER_KUBERNETES: stack.kubernetes, CLUSTER_RUNTIME: stack.runtime };
}
