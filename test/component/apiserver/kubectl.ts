// Runs the real kubectl (/usr/bin/kubectl, a version dispatcher) against an emulator or a real kube-apiserver, with a
// private kubeconfig and a fresh cache directory per instance (kubectl caches discovery and /version for hours).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeKubeconfig } from '../../cluster/apiserver/index.js';

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export class Kubectl {
  private constructor(
    readonly dir: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  static async forServer(url: string): Promise<Kubectl> {
    const dir = await mkdtemp(join(tmpdir(), 'kubectl-emu-'));
    const kubeconfig = join(dir, 'kubeconfig');
    await writeKubeconfig(kubeconfig, url);
    return Kubectl.inDir(dir, kubeconfig);
  }

  /** With a kubeconfig that exists (a real cluster's); the cache is fresh all the same. */
  static async forKubeconfig(kubeconfig: string): Promise<Kubectl> {
    return Kubectl.inDir(await mkdtemp(join(tmpdir(), 'kubectl-')), kubeconfig);
  }

  private static inDir(dir: string, kubeconfig: string): Kubectl {
    return new Kubectl(dir, { ...process.env, KUBECONFIG: kubeconfig, KUBECACHEDIR: join(dir, 'cache'), HOME: dir });
  }

  run(args: string[], stdin?: string): Promise<KubectlResult> {
    return new Promise((resolve, reject) => {
      const child = execFile('kubectl', args, { env: this.env, timeout: 60_000 }, (err, stdout, stderr) => {
        if ((err as NodeJS.ErrnoException | null)?.code === 'ENOENT') {
          reject(new Error('kubectl is not on PATH: these tests need the real kubectl (1.32 dispatcher)'));
          return;
        }
        const code = err
          ? typeof (err as { code?: unknown }).code === 'number'
            ? (err as { code: number }).code
            : 1
          : 0;
        resolve({ code, stdout, stderr });
      });
      if (stdin !== undefined) child.stdin?.end(stdin);
    });
  }

  /** Like run, but fails the test with kubectl's stderr when it does not exit 0. */
  async ok(args: string[], stdin?: string): Promise<string> {
    const r = await this.run(args, stdin);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${r.code}: ${r.stderr}${r.stdout}`);
    return r.stdout;
  }

  /** A long-running kubectl (get -w); its stdout accumulates in `output()`. */
  spawn(args: string[]): { child: ChildProcess; output: () => string } {
    const child = spawn('kubectl', args, { env: this.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    return { child, output: () => out };
  }

  async cleanup(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}
