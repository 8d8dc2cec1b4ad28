// The compiled kruise-controller binary as a child process (e2e tests, the scale benchmark): its JSON logs, stderr,
// and stop/kill. Found relative to this file so any outDir works; run with this process's Node.
import { spawn, type ChildProcess } from 'node:child_process';
import { freeLoopbackPort } from '../../cluster/runtime/allocations.js';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../../support/wait.js';

export const KRUISE_CONTROLLER_BIN = fileURLToPath(new URL('../../../src/cli/kruise-controller.js', import.meta.url));

export type LogLine = Record<string, unknown> & { msg?: string; level?: string };

export interface ControllerProcessOptions {
  kubeconfig: string;
  /** Port of /healthz /readyz /metrics and of the webhooks (chosen free when absent). */
  statusPort: number;
  webhookPort: number;
  /** Port of the agents' pull-credentials listener (default 0: any free port, so replicas side by side never clash). */
  pullCredentialsPort?: number;
  certDir: string;
  extraArgs?: string[] | undefined;
  env?: Record<string, string>;
  /** Where it listens and the API server calls its webhooks (default 127.0.0.1; the host's node-network address on the real cluster). */
  host?: string;
  /** --webhook-client-ca: the CA of the API server's webhook client certificate (the real cluster's pki). */
  webhookClientCa?: string | undefined;
}

/** The Deployment's leader-election timings (deploy/: renewal every 2 s), for benchmarks that run it as deployed. */
export const DEPLOYMENT_LEASE_ARGS: readonly string[] = [
  '--lease-duration',
  '15s',
  '--renew-deadline',
  '10s',
  '--retry-period',
  '2s',
];

/** A free port on 127.0.0.1 (the kernel picks it). */
export const freePort = freeLoopbackPort;

export class ControllerProcess {
  readonly child: ChildProcess;
  readonly logs: LogLine[] = [];
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private done = false;

  constructor(readonly options: ControllerProcessOptions) {
    const host = options.host ?? '127.0.0.1';
    const args = [
      KRUISE_CONTROLLER_BIN,
      '--kubeconfig',
      options.kubeconfig,
      '--addr',
      `${host}:${options.statusPort}`,
      '--webhook-host',
      host,
      '--webhook-port',
      String(options.webhookPort),
      '--webhook-url-base',
      `https://${host}:${options.webhookPort}`,
      '--webhook-cert-dir',
      options.certDir,
      ...(options.webhookClientCa ? ['--webhook-client-ca', options.webhookClientCa] : []),
      '--pull-credentials-port',
      String(options.pullCredentialsPort ?? 0),
      '--lease-duration',
      '4s',
      '--renew-deadline',
      '3s',
      '--retry-period',
      '1s',
      ...(options.extraArgs ?? []),
    ];
    this.child = spawn(process.execPath, args, {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LOG_LEVEL: 'info', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let partial = '';
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      partial += chunk;
      const lines = partial.split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        if (!line.trim()) continue;
        try {
          this.logs.push(JSON.parse(line) as LogLine);
        } catch {
          this.stderr += `${line}\n`;
        }
      }
    });
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.done = true;
        resolve({ code, signal });
      });
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  get hasExited(): boolean {
    return this.done;
  }

  /** https URL of the pull-credentials listener (needs options.pullCredentialsPort). */
  get pullCredentialsUrl(): string {
    if (!this.options.pullCredentialsPort)
      throw new Error('this controller was started without a fixed pull-credentials port');
    return `https://${this.options.host ?? '127.0.0.1'}:${this.options.pullCredentialsPort}`;
  }

  get statusUrl(): string {
    return `http://${this.options.host ?? '127.0.0.1'}:${this.options.statusPort}`;
  }

  findLog(msg: RegExp): LogLine | undefined {
    return this.logs.find((l) => typeof l.msg === 'string' && msg.test(l.msg));
  }

  /** Wait until /readyz answers 200 (webhooks serving and configured). */
  async ready(timeoutMs = 30_000): Promise<void> {
    await waitFor(
      async () => {
        if (this.done) throw new Error(`kruise-controller exited: ${this.stderr}`);
        const res = await fetch(`${this.statusUrl}/readyz`);
        return res.status === 200;
      },
      { timeoutMs, intervalMs: 100, message: 'kruise-controller to be ready' },
    );
  }

  async leading(timeoutMs = 30_000): Promise<void> {
    await waitFor(() => this.findLog(/^caches synced/), { timeoutMs, message: 'kruise-controller to lead' });
  }

  async metrics(): Promise<string> {
    return await (await fetch(`${this.statusUrl}/metrics`)).text();
  }

  /** Reconciles one controller (e.g. `imagepulljob`) has done, whatever their result. */
  async reconciles(controller: string): Promise<number> {
    const text = await this.metrics();
    let sum = 0;
    for (const m of text.matchAll(/^kruise_controller_reconciles_total\{([^}]*)\} (\d+)$/gm)) {
      if (m[1]!.includes(`controller="${controller}"`)) sum += Number(m[2]);
    }
    return sum;
  }

  /**
   * Resolves once `controller` has done no reconcile for `quietMs`: no event it reacts to is on its way, so what
   * brings it back next is whatever the test does (or the one watch the test is about).
   */
  async settled(controller: string, quietMs = 500): Promise<void> {
    let seen = -1;
    await waitFor(
      async () => {
        const now = await this.reconciles(controller);
        const quiet = now === seen;
        seen = now;
        return quiet;
      },
      { intervalMs: quietMs, message: `the ${controller} controller to settle` },
    );
  }

  async stop(deadlineMs = 15_000): Promise<void> {
    if (this.done) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), deadlineMs);
    await this.exited;
    clearTimeout(timer);
  }

  async kill(): Promise<void> {
    if (this.done) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }
}
