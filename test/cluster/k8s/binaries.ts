// Component "k8s-binaries": the real cluster's Go-built programs (Kubernetes, etcd, crictl, the node holder),
// built by build.sh from the Go module proxy into a cache outside the repository keyed by version. A warm cache
// builds nothing; a cold one takes 5 to 10 minutes on 2 cores and says so, with each step's progress on the way.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readlink, rm, symlink } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { packageRoot } from '../../../src/util/repo-root.js';
import type { ClusterComponent, ClusterContext } from '../component.js';
import { ClusterError, errorMessage } from '../runtime/errors.js';
import { KNOWN_CELLS, pinned, stackName, stackOf, stackVersions, type Stack, type StackVersions } from '../stack.js';

export interface K8sBinaries {
  stack: Stack;
  versions: StackVersions;
  kubeBinDir: string;
  etcd: string;
  crictl: string;
  /** The node holder (our own few lines of Go: waits for a signal, reaps orphans). */
  holder: string;
  runtime: RuntimeBinaries;
}

/** The container runtime's programs: built here, or Debian's for the containerd-1.6 cell. */
export interface RuntimeBinaries {
  containerd: string;
  /** containerd's directory: its runc shim is found on PATH, so the runtime's PATH starts here. */
  containerdDir: string;
  ctr: string;
  runc: string;
  cniPluginDir: string;
  /** CRI-O's cell: crio and pinns built here, conmon Debian's (undefined on every containerd cell). */
  crio?: CrioBinaries;
}

export interface CrioBinaries {
  crio: string;
  pinns: string;
  conmon: string;
}

/** Debian's conmon (package conmon): CRI-O's container monitor. */
export const DEBIAN_CONMON = '/usr/bin/conmon';

function sourceDir(): string {
  return join(packageRoot(), 'test', 'cluster', 'k8s');
}

/** KD_CACHE, else $XDG_CACHE_HOME/kruise-daemon, else ~/.cache/kruise-daemon (as build.sh computes it). */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.KD_CACHE ?? join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'kruise-daemon');
}

export function runtimeBinaryPaths(stack: Stack, cache = cacheDir()): RuntimeBinaries {
  const versions = stackVersions(stack);
  if (stack.runtime === 'containerd-1.6') {
    return {
      containerd: '/usr/bin/containerd',
      containerdDir: '/usr/bin',
      ctr: '/usr/bin/ctr',
      runc: '/usr/sbin/runc',
      cniPluginDir: '/usr/lib/cni',
    };
  }
  const runc = join(cache, 'bin', `runc-${versions.runc}`, 'runc');
  const cniPluginDir = join(cache, 'bin', `cni-plugins-${versions.cniPlugins}`);
  if (stack.runtime === 'cri-o') {
    // no containerd on this cell: its fields name nothing that is run (the runtime kind refuses cri-o)
    const crioDir = join(cache, 'bin', `crio-${versions.runtime}`);
    return {
      containerd: '',
      containerdDir: '',
      ctr: '',
      runc,
      cniPluginDir,
      crio: { crio: join(crioDir, 'crio'), pinns: join(crioDir, 'pinns'), conmon: DEBIAN_CONMON },
    };
  }
  const containerdDir = join(cache, 'bin', `containerd-${versions.runtime}`);
  return {
    containerd: join(containerdDir, 'containerd'),
    containerdDir,
    ctr: join(containerdDir, 'ctr'),
    runc,
    cniPluginDir,
  };
}

export function binaryPaths(stack: Stack, cache = cacheDir()): K8sBinaries {
  const versions = stackVersions(stack);
  const holderSum = createHash('sha256')
    .update(readFileSync(join(sourceDir(), 'holder', 'main.go')))
    .digest('hex')
    .slice(0, 12);
  return {
    stack,
    versions,
    kubeBinDir: join(cache, 'bin', `kubernetes-${versions.kubernetes}`),
    etcd: join(cache, 'bin', `etcd-${versions.etcd}`, 'etcd'),
    crictl: join(cache, 'bin', `crictl-${versions.crictl}`, 'crictl'),
    holder: join(cache, 'bin', `holder-${holderSum}`, 'holder'),
    runtime: runtimeBinaryPaths(stack, cache),
  };
}

/** The runtime part of containerd's configuration for the cluster in `dir`: its runc and containerd's major version. */
export function containerdRuntime(dir: string): { runc: string; major: 1 | 2 } {
  const binaries = binaryPathsOf(dir);
  return { runc: binaries.runtime.runc, major: binaries.stack.runtime === 'containerd-1.6' ? 1 : 2 };
}

/** The binaries of the cluster in `dir` (its recorded stack, else the requested one). */
export function binaryPathsOf(dir: string): K8sBinaries {
  return binaryPaths(stackOf(dir));
}

const KUBE_BINARIES = [
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'kube-proxy',
  'kubelet',
  'kubectl',
];

/** build.sh's components for a stack's runtime (none for Debian's containerd: host-packages installs it). */
function runtimeComponents(stack: Stack): string[] {
  if (stack.runtime === 'containerd-1.6') return [];
  return [stack.runtime === 'cri-o' ? 'crio' : 'containerd', 'runc', 'cni-plugins'];
}

function runtimeFiles(binaries: K8sBinaries): string[] {
  if (binaries.stack.runtime === 'containerd-1.6') return [];
  const r = binaries.runtime;
  // conmon is Debian's: host-packages installs it
  if (r.crio) return [r.crio.crio, r.crio.pinns, r.runc, join(r.cniPluginDir, 'bridge')];
  return [
    r.containerd,
    join(r.containerdDir, 'containerd-shim-runc-v2'),
    r.ctr,
    r.runc,
    join(r.cniPluginDir, 'bridge'),
  ];
}

export function missingBinaries(binaries: K8sBinaries, what: 'cluster' | 'runtime' = 'cluster'): string[] {
  const wanted =
    what === 'runtime'
      ? runtimeFiles(binaries)
      : [
          ...KUBE_BINARIES.map((name) => join(binaries.kubeBinDir, name)),
          binaries.etcd,
          binaries.crictl,
          binaries.holder,
          ...runtimeFiles(binaries),
        ];
  return wanted.filter((path) => !existsSync(path));
}

/** The environment build.sh needs for a stack's versions. */
function buildEnv(stack: Stack): Record<string, string> {
  const versions = stackVersions(stack);
  return {
    KUBERNETES_VERSION: versions.kubernetes,
    ...(stack.runtime.startsWith('containerd-2') ? { CONTAINERD_VERSION: versions.runtime } : {}),
    ...(stack.runtime === 'cri-o' ? { CRIO_VERSION: versions.runtime } : {}),
  };
}

/**
 * Run build.sh (its default components, or those named), passing each progress line to `log`; fails with the
 * script's last lines.
 */
export function runBuild(
  log: (message: string) => void,
  env: NodeJS.ProcessEnv = process.env,
  components: readonly string[] = [],
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [join(sourceDir(), 'build.sh'), ...components], {
      env: { ...env, KD_CACHE: cacheDir(env) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const tail: string[] = [];
    const onData = (chunk: Buffer): void => {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line.trim() === '') continue;
        log(line);
        tail.push(line);
        if (tail.length > 30) tail.shift();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', (err) => reject(new ClusterError(`cannot run build.sh: ${err.message}`)));
    child.on('close', (code) => {
      if (code === 0) resolve();
      else reject(new ClusterError(`build.sh exited ${String(code)}:\n${tail.slice(-12).join('\n')}`));
    });
  });
}

/** The helm majors the chart is tested with: helm 3 (versions.env's HELM_VERSION) and helm 4 (HELM4_VERSION). */
export const HELM_MAJORS = [3, 4] as const;
export type HelmMajor = (typeof HELM_MAJORS)[number];

/** versions.env's pinned version of a helm major. */
export function helmVersion(major: HelmMajor): string {
  return pinned(major === 3 ? 'HELM_VERSION' : 'HELM4_VERSION');
}

/** helm of `major` at its pinned version: $KD_CACHE/bin/helm-<version>/helm (the chart's tests use it). */
export function helmPath(major: HelmMajor, cache = cacheDir()): string {
  return join(cache, 'bin', `helm-${helmVersion(major)}`, 'helm');
}

/** The helm binary of `major`, built by build.sh on first use (about 2 minutes; nothing when cached). */
export async function helmBinary(major: HelmMajor, log: (message: string) => void): Promise<string> {
  const path = helmPath(major);
  if (!existsSync(path)) {
    log(`helm ${helmVersion(major)}: building ${path} from Go modules (first run only)`);
    await runBuild(log, process.env, [major === 3 ? 'helm' : 'helm4']);
    if (!existsSync(path)) throw new ClusterError(`build.sh succeeded but ${path} is missing`);
  }
  return path;
}

/** Build what the cluster in ctx.dir needs (its recorded stack); with progress, and nothing when all is cached. */
async function ensureBuilt(ctx: ClusterContext, what: 'cluster' | 'runtime'): Promise<K8sBinaries> {
  return await ensureStackBuilt(stackOf(ctx.dir), what, ctx.log);
}

/**
 * Build a stack's programs (all of a real cluster's, or only its runtime's) into the cache: with progress, and
 * nothing when all is cached. `npm test` calls it before the first test (test/support/prepare-run.ts), so no test's
 * hook carries a first run's build.
 */
export async function ensureStackBuilt(
  stack: Stack,
  what: 'cluster' | 'runtime',
  log: (message: string) => void,
): Promise<K8sBinaries> {
  const binaries = binaryPaths(stack);
  const missing = missingBinaries(binaries, what);
  if (missing.length > 0) {
    const components =
      what === 'runtime'
        ? runtimeComponents(binaries.stack)
        : ['holder', 'crictl', 'etcd', 'kubernetes', ...runtimeComponents(binaries.stack)];
    const component = what === 'runtime' ? 'runtime-binaries' : 'k8s-binaries';
    log(
      `${component}: building ${components.join(', ')} of ` +
        `${stackName(binaries.stack)} from Go modules into ${cacheDir()} (first run only; 5 to 15 minutes on 2 cores)`,
    );
    const env = buildEnv(binaries.stack);
    try {
      await runBuild((line) => log(`${component}: ${line}`), { ...process.env, ...env }, components);
    } catch (err) {
      // build.sh's message names the component, its version, the command and the last lines of its log
      throw new ClusterError(
        `building ${stackName(binaries.stack)} failed (${Object.entries(env)
          .map(([k, v]) => `${k}=${v}`)
          .join(' ')} bash test/cluster/k8s/build.sh ${components.join(' ')}): ${errorMessage(err)}\n` +
          `the cells the local cluster runs (what each proves: docs/compatibility.md): ${KNOWN_CELLS.map(stackName).join('; ')}`,
        { cause: err },
      );
    }
    const still = missingBinaries(binaries, what);
    if (still.length > 0) throw new ClusterError(`build.sh succeeded but these are missing: ${still.join(', ')}`);
  }
  return binaries;
}

function runtimeVariables(binaries: K8sBinaries): Record<string, string> {
  const crio = binaries.runtime.crio;
  if (crio) {
    return { CRIO_BINARY: crio.crio, RUNC: binaries.runtime.runc, RUNTIME_VERSION: binaries.versions.runtime };
  }
  return {
    CONTAINERD_BINARY: binaries.runtime.containerd,
    CTR: binaries.runtime.ctr,
    RUNC: binaries.runtime.runc,
    RUNTIME_VERSION: binaries.versions.runtime,
  };
}

/** Put the cluster's kubectl (env KUBECTL_DIR, from k8s-binaries) first on this process's PATH, once. */
export function putKubectlOnPath(env: Record<string, string | undefined>): void {
  const dir = env.KUBECTL_DIR;
  if (!dir) return;
  const path = process.env.PATH ?? '/usr/bin:/bin';
  if (path.split(':')[0] !== dir) process.env.PATH = `${dir}:${path}`;
}

/** Component "k8s-binaries": Kubernetes, etcd, crictl, the holder and the stack's runtime. */
export function k8sBinaries(): ClusterComponent {
  return {
    name: 'k8s-binaries',
    async up(ctx: ClusterContext) {
      const binaries = await ensureBuilt(ctx, 'cluster');
      // a directory holding only the cluster's kubectl, to put first on PATH (the machine's kubectl may be older)
      const kubectlDir = join(ctx.dir, 'k8s', 'kubectl-bin');
      await mkdir(kubectlDir, { recursive: true });
      const link = join(kubectlDir, 'kubectl');
      const target = join(binaries.kubeBinDir, 'kubectl');
      if ((await readlink(link).catch(() => undefined)) !== target) {
        await rm(link, { force: true });
        await symlink(target, link);
      }
      return {
        KUBERNETES_VERSION: binaries.versions.kubernetes,
        KUBE_BIN_DIR: binaries.kubeBinDir,
        KUBECTL_DIR: kubectlDir,
        CRICTL: binaries.crictl,
        ...runtimeVariables(binaries),
      };
    },
    async down() {
      // the cache outlives clusters on purpose
    },
  };
}

/** Component "runtime-binaries" (the runtime kind): only the stack's container runtime. */
export function runtimeBinaries(): ClusterComponent {
  return {
    name: 'runtime-binaries',
    async up(ctx: ClusterContext) {
      return runtimeVariables(await ensureBuilt(ctx, 'runtime'));
    },
    async down() {
      // the cache outlives clusters on purpose
    },
  };
}
