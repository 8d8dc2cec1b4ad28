// KWOK (sigs.k8s.io/kwok, versions.env's KWOK_VERSION) on the real local cluster: fake Nodes for the controller at
// scale. Its kwok binary is built by test/cluster/k8s/build.sh `kwok` into $KD_CACHE/bin/kwok-<version>/; its Stage
// files are read from the Go module cache (kustomize/stage/node/...), nothing of KWOK is kept in this repository.
// kwok manages only the Nodes with the label FAKE_NODE_LABEL (the real nodes keep their kubelets): the node-initialize
// stage makes each Ready, and kwok renews a Lease per node, so kube-controller-manager's node lifecycle keeps them
// Ready and untainted as for real kubelets.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { cacheDir, runBuild } from '../k8s/binaries.js';
import { pinned } from '../stack.js';
import { ClusterError } from '../runtime/errors.js';

/** The label kwok selects its Nodes by (`--manage-nodes-with-label-selector`). */
export const FAKE_NODE_LABEL = { key: 'type', value: 'kwok' } as const;

/**
 * Lease duration of the fake nodes. kwok renews a lease every quarter of it (30 s here, about 33 writes/s for 1,000
 * nodes), inside kube-controller-manager's node-monitor-grace-period (50 s); kubelet's own default, 40 s, would
 * renew every 10 s: 100 writes/s for 1,000 nodes on a 2-core machine, with nothing more to show.
 */
export const NODE_LEASE_SECONDS = 120;

export interface KwokBuild {
  version: string;
  binary: string;
  /** Stage files of the module: node-initialize (Ready at once) and node-heartbeat-with-lease (status every 10 min). */
  stages: string[];
}

export function kwokPaths(cache = cacheDir()): KwokBuild {
  const version = pinned('KWOK_VERSION');
  // build.sh sets GOMODCACHE=$KD_CACHE/go/mod; the module path has no upper-case letters to escape
  const stageDir = join(cache, 'go', 'mod', `sigs.k8s.io/kwok@${version}`, 'kustomize', 'stage', 'node');
  return {
    version,
    binary: join(cache, 'bin', `kwok-${version}`, 'kwok'),
    stages: [
      join(stageDir, 'fast', 'node-initialize.yaml'),
      join(stageDir, 'heartbeat-with-lease', 'node-heartbeat-with-lease.yaml'),
    ],
  };
}

/** kwok and its Stage files, built on first use (a few minutes on 2 cores; nothing when cached). */
export async function kwokBuild(log: (message: string) => void): Promise<KwokBuild> {
  const build = kwokPaths();
  const missing = (): string[] => [build.binary, ...build.stages].filter((path) => !existsSync(path));
  if (missing().length > 0) {
    log(`kwok: building kwok ${build.version} from Go modules into ${cacheDir()} (first run only)`);
    await runBuild((line) => log(`kwok: ${line}`), process.env, ['kwok']);
    if (missing().length > 0)
      throw new ClusterError(`build.sh succeeded but these are missing: ${missing().join(', ')}`);
  }
  return build;
}

/** kwok's command line: only the labelled Nodes, NODE_LEASE_SECONDS leases, the module's node Stages, no server. */
export function kwokArgs(build: KwokBuild, kubeconfig: string): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    `--manage-nodes-with-label-selector=${FAKE_NODE_LABEL.key}=${FAKE_NODE_LABEL.value}`,
    `--node-lease-duration-seconds=${NODE_LEASE_SECONDS}`,
    // no server for kubelet's API (logs, exec): nothing here asks a fake node for it
    '--server-address=',
    '--node-port=0',
    ...build.stages.map((file) => `--config=${file}`),
  ];
}

/** A kwok process with an admin kubeconfig, its output in a log file. */
export class KwokProcess {
  readonly exited: Promise<void>;
  private exitCode: number | null | undefined;

  private constructor(private readonly child: ChildProcess) {
    this.exited = new Promise((resolve) =>
      child.once('exit', (code) => {
        this.exitCode = code;
        resolve();
      }),
    );
  }

  static start(build: KwokBuild, kubeconfig: string, logFile: string): KwokProcess {
    mkdirSync(join(logFile, '..'), { recursive: true });
    const fd = openSync(logFile, 'a');
    try {
      const child = spawn(build.binary, kwokArgs(build, kubeconfig), {
        stdio: ['ignore', fd, fd],
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      });
      return new KwokProcess(child);
    } finally {
      closeSync(fd);
    }
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Throws if kwok has exited (a fake node would then stop being renewed). */
  assertRunning(): void {
    if (this.exitCode !== undefined) throw new Error(`kwok exited (code ${String(this.exitCode)})`);
  }

  async stop(deadlineMs = 10_000): Promise<void> {
    if (this.exitCode !== undefined) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), deadlineMs);
    try {
      await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}
