// Component "k8s-binaries": the real cluster's Go-built programs (Kubernetes, etcd, crictl, the node holder),
// built by build.sh from the Go module proxy into a cache outside the repository keyed by version. A warm cache
// builds nothing; a cold one takes 5 to 10 minutes on 2 cores and says so, with each step's progress on the way.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { packageRoot } from '../../../src/util/repo-root.js';
import type { ClusterComponent, ClusterContext } from '../component.js';
import { ClusterError } from '../runtime/errors.js';

export interface K8sVersions {
  kubernetes: string;
  etcd: string;
  crictl: string;
}

export interface K8sBinaries {
  versions: K8sVersions;
  kubeBinDir: string;
  etcd: string;
  crictl: string;
  /** The node holder (our own few lines of Go: waits for a signal, reaps orphans). */
  holder: string;
}

function sourceDir(): string {
  return join(packageRoot(), 'test', 'cluster', 'k8s');
}

/** KD_CACHE, else $XDG_CACHE_HOME/kruise-daemon, else ~/.cache/kruise-daemon (as build.sh computes it). */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.KD_CACHE ?? join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'kruise-daemon');
}

/** A version pinned in versions.env (`KEY=v1.2.3`). */
export function pinnedVersion(key: string): string {
  const text = readFileSync(join(sourceDir(), 'versions.env'), 'utf8');
  const match = new RegExp(`^${key}=(v[0-9.]+)$`, 'm').exec(text);
  if (!match?.[1]) throw new ClusterError(`versions.env has no ${key}`);
  return match[1];
}

export function pinnedVersions(): K8sVersions {
  return {
    kubernetes: pinnedVersion('KUBERNETES_VERSION'),
    etcd: pinnedVersion('ETCD_VERSION'),
    crictl: pinnedVersion('CRICTL_VERSION'),
  };
}

export function binaryPaths(cache = cacheDir()): K8sBinaries {
  const versions = pinnedVersions();
  const holderSum = createHash('sha256')
    .update(readFileSync(join(sourceDir(), 'holder', 'main.go')))
    .digest('hex')
    .slice(0, 12);
  return {
    versions,
    kubeBinDir: join(cache, 'bin', `kubernetes-${versions.kubernetes}`),
    etcd: join(cache, 'bin', `etcd-${versions.etcd}`, 'etcd'),
    crictl: join(cache, 'bin', `crictl-${versions.crictl}`, 'crictl'),
    holder: join(cache, 'bin', `holder-${holderSum}`, 'holder'),
  };
}

const KUBE_BINARIES = ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kube-proxy', 'kubelet'];

export function missingBinaries(binaries: K8sBinaries): string[] {
  const wanted = [
    ...KUBE_BINARIES.map((name) => join(binaries.kubeBinDir, name)),
    binaries.etcd,
    binaries.crictl,
    binaries.holder,
  ];
  return wanted.filter((path) => !existsSync(path));
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

/** helm at versions.env's HELM_VERSION: $KD_CACHE/bin/helm-<version>/helm (the chart's tests use it). */
export function helmPath(cache = cacheDir()): string {
  return join(cache, 'bin', `helm-${pinnedVersion('HELM_VERSION')}`, 'helm');
}

/** The helm binary, built by build.sh on first use (about 2 minutes; nothing when cached). */
export async function helmBinary(log: (message: string) => void): Promise<string> {
  const path = helmPath();
  if (!existsSync(path)) {
    log(`helm: building ${path} from Go modules (first run only)`);
    await runBuild(log, process.env, ['helm']);
    if (!existsSync(path)) throw new ClusterError(`build.sh succeeded but ${path} is missing`);
  }
  return path;
}

export function k8sBinaries(): ClusterComponent {
  return {
    name: 'k8s-binaries',
    async up(ctx: ClusterContext) {
      const binaries = binaryPaths();
      if (missingBinaries(binaries).length > 0) {
        ctx.log(
          `k8s-binaries: building Kubernetes ${binaries.versions.kubernetes}, etcd ${binaries.versions.etcd} and ` +
            `crictl ${binaries.versions.crictl} from Go modules into ${cacheDir()} (first run only)`,
        );
        await runBuild((line) => ctx.log(`k8s-binaries: ${line}`));
        const still = missingBinaries(binaries);
        if (still.length > 0) throw new ClusterError(`build.sh succeeded but these are missing: ${still.join(', ')}`);
      }
      return {
        KUBERNETES_VERSION: binaries.versions.kubernetes,
        KUBE_BIN_DIR: binaries.kubeBinDir,
        CRICTL: binaries.crictl,
      };
    },
    async down() {
      // the cache outlives clusters on purpose
    },
  };
}
