// OpenKruise's kruise-manager as a process on the host of the real local cluster (issue 18's agent-only setup: its
// controllers and webhooks, our agent in the nodes). Its API objects come from its own config/default, rendered from
// the module cache: all 18 CRDs, swapped in over ours of the same names and put back at stop, and its two webhook
// configurations. With WEBHOOK_HOST set (pkg/webhook/util/util.go) it writes its certificates to WEBHOOK_CERT_DIR
// (util/controller/webhook_controller.go: the FS cert writer when a host is set), and rewrites its webhooks
// (util/configuration/configuration.go convertClientConfig) and the CRDs' conversion webhooks (util/crd/crd.go) to
// https://WEBHOOK_HOST:WEBHOOK_PORT/<path>, so the API server reaches it on the host without a Service. Its
// certificate names the host's IP and localhost (util/generator/selfsigned.go), which its own readiness check dials.
//
// It runs with the cluster-admin kubeconfig by default: its ClusterRole (kruise-manager-role) would need its own
// ServiceAccount, binding and leader-election Role installed, and its rights are not what the suites test. Leader
// election is off (one replica; a lease left by a killed run would hold the next start for its duration).
//
// A crash leaves state behind: the process (its PID file), our CRDs replaced (the saved objects) and its webhook
// configurations (failurePolicy Fail on every pod creation). putBackAfterOpenKruiseManager() undoes all three once
// the process that started the manager is gone (its PID in owner-pid); the next start and useRealCluster() call it.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { K8sLayout } from '../k8s/layout.js';
import { kubectl, removeWebhookConfigurations, SYSTEM_NAMESPACE } from '../k8s/system.js';
import { freeAnyAddressPort, freeLoopbackPort } from '../runtime/allocations.js';
import { ClusterError } from '../runtime/errors.js';
import { isAlive, readPidFile, runningPid, stopProcess } from '../runtime/processes.js';
import { LoggedProcess, type Exit } from './logged-process.js';
import {
  renderOpenKruise,
  restoreSavedObjects,
  swapInObjects,
  type Manifest,
  type OpenKruiseBuild,
  type Restore,
} from './openkruise.js';

/** OpenKruise v1.9's config/crd/bases: every kind it serves. */
export const OPENKRUISE_CRD_COUNT = 18;

const MANAGER_DEPLOYMENT = 'kruise-controller-manager';
const MANAGER_CONTAINER = 'manager';

/** The objects the manager needs from its own install: its CRDs and its two (admission) webhook configurations. */
export interface ManagerApiObjects {
  crds: Manifest[];
  webhookConfigurations: Manifest[];
}

/** The manager's objects out of config/default as rendered (renderOpenKruise). */
export function managerApiObjects(rendered: readonly Manifest[]): ManagerApiObjects {
  const crds = rendered.filter((m) => m.kind === 'CustomResourceDefinition');
  if (crds.length !== OPENKRUISE_CRD_COUNT) {
    throw new ClusterError(`OpenKruise's config/default renders ${crds.length} CRDs, not ${OPENKRUISE_CRD_COUNT}`);
  }
  const webhookConfigurations = rendered.filter(
    (m) => m.kind === 'MutatingWebhookConfiguration' || m.kind === 'ValidatingWebhookConfiguration',
  );
  if (webhookConfigurations.length !== 2) {
    throw new ClusterError(
      `OpenKruise's config/default renders ${webhookConfigurations.length} webhook configurations`,
    );
  }
  return { crds, webhookConfigurations };
}

interface Container {
  name?: string;
  args?: string[];
}

/** The `--feature-gates` its own Deployment runs the manager with (AllAlpha=true,AllBeta=true,...). */
export function deploymentFeatureGates(rendered: readonly Manifest[]): string {
  const deployment = rendered.find((m) => m.kind === 'Deployment' && m.metadata?.name === MANAGER_DEPLOYMENT) as
    { spec?: { template?: { spec?: { containers?: Container[] } } } } | undefined;
  const container = deployment?.spec?.template?.spec?.containers?.find((c) => c.name === MANAGER_CONTAINER);
  const flag = container?.args?.find((arg) => arg.startsWith('--feature-gates='));
  if (!flag) throw new ClusterError(`OpenKruise's ${MANAGER_DEPLOYMENT} Deployment has no --feature-gates`);
  return flag.slice('--feature-gates='.length);
}

export interface ManagerPorts {
  metrics: number;
  health: number;
  pprof: number;
  webhook: number;
}

/** kruise-manager's command line: every port on loopback but the webhook's (env), no leader election. */
export function managerArgs(options: {
  ports: ManagerPorts;
  featureGates: string;
  /** Its protection logger's directory (default /log, which must not be made on the host). */
  protectionLogPath: string;
  extraArgs?: readonly string[];
}): string[] {
  const { ports } = options;
  return [
    `--metrics-addr=127.0.0.1:${ports.metrics}`,
    `--health-probe-addr=127.0.0.1:${ports.health}`,
    `--pprof-addr=127.0.0.1:${ports.pprof}`,
    '--enable-leader-election=false',
    `--feature-gates=${options.featureGates}`,
    `--protection-log-path=${options.protectionLogPath}`,
    ...(options.extraArgs ?? []),
  ];
}

/** Its environment: the kubeconfig, and where its webhook server listens and is registered (pkg/webhook/util). */
export function managerEnv(options: {
  kubeconfig: string;
  webhookHost: string;
  webhookPort: number;
  certDir: string;
}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    KUBECONFIG: options.kubeconfig,
    POD_NAMESPACE: SYSTEM_NAMESPACE,
    WEBHOOK_HOST: options.webhookHost,
    WEBHOOK_PORT: String(options.webhookPort),
    WEBHOOK_CERT_DIR: options.certDir,
  };
}

/** Where a manager's state is kept under the cluster's directory (its PID, the objects it replaced, certificates). */
function stateDir(layout: K8sLayout): string {
  return join(layout.k8sDir, 'openkruise-manager');
}

function stateFiles(layout: K8sLayout): {
  pid: string;
  owner: string;
  saved: string;
  certs: string;
  protectionLog: string;
} {
  const dir = stateDir(layout);
  return {
    pid: join(dir, 'pid'),
    owner: join(dir, 'owner-pid'),
    saved: join(dir, 'replaced-objects.json'),
    certs: join(dir, 'certs'),
    protectionLog: join(dir, 'protection-log'),
  };
}

/**
 * What a manager that was not stopped (a crash of the run that started it) leaves: the process stopped, its webhook
 * configurations removed, our objects it replaced put back. Does nothing when there is nothing left, nor while the
 * process that started the manager still runs (another run on the same cluster: its manager is not left over).
 */
export async function putBackAfterOpenKruiseManager(layout: K8sLayout): Promise<void> {
  const files = stateFiles(layout);
  const owner = await readPidFile(files.owner);
  if (owner !== undefined && owner !== process.pid && isAlive(owner)) return;
  const pid = await runningPid(files.pid, stateDir(layout));
  if (pid !== undefined) await stopProcess(pid, stateDir(layout));
  rmSync(files.pid, { force: true });
  if (restoreSavedObjects(layout, files.saved)) removeWebhookConfigurations(layout);
  rmSync(files.owner, { force: true });
}

export interface OpenKruiseManagerOptions {
  build: OpenKruiseBuild;
  layout: K8sLayout;
  /** Default: the cluster-admin kubeconfig (see the top of this file). */
  kubeconfig?: string;
  /** Default: the Deployment's own (config/default's manager args). */
  featureGates?: string;
  /** More flags, e.g. --nodeimage-creation-delay=1s, -v=4. */
  extraArgs?: readonly string[];
  /** klog's output (default: <cluster logs>/openkruise-manager.log). */
  logFile?: string;
}

export type { Exit };

export class OpenKruiseManagerProcess extends LoggedProcess {
  readonly ports: ManagerPorts;
  private readonly layout: K8sLayout;
  private readonly restore: Restore;

  private constructor(child: ChildProcess, layout: K8sLayout, logFile: string, ports: ManagerPorts, restore: Restore) {
    super(child, logFile);
    this.layout = layout;
    this.ports = ports;
    this.restore = restore;
  }

  /**
   * Its CRDs swapped in, its webhook configurations created (it only updates them), the process spawned. Not
   * waiting for it to be ready: see ready().
   */
  static async start(options: OpenKruiseManagerOptions): Promise<OpenKruiseManagerProcess> {
    const { layout, build } = options;
    await putBackAfterOpenKruiseManager(layout);
    const owner = await readPidFile(stateFiles(layout).owner);
    if (owner !== undefined && owner !== process.pid && isAlive(owner)) {
      throw new ClusterError(`an OpenKruise manager of process ${owner} runs on this cluster: one at a time`);
    }
    const rendered = renderOpenKruise(layout, build, 'default');
    const objects = managerApiObjects(rendered);
    const files = stateFiles(layout);
    mkdirSync(files.certs, { recursive: true });
    writeFileSync(files.owner, `${process.pid}\n`);
    mkdirSync(files.protectionLog, { recursive: true });
    const ports: ManagerPorts = {
      metrics: await freeLoopbackPort(),
      health: await freeLoopbackPort(),
      pprof: await freeLoopbackPort(),
      webhook: await freeAnyAddressPort(), // its webhook server listens on every address (main.go:212)
    };
    const logFile = options.logFile ?? join(layout.logDir, 'openkruise-manager.log');
    mkdirSync(join(logFile, '..'), { recursive: true });

    const restore = swapInObjects(layout, objects.crds, files.saved);
    try {
      removeWebhookConfigurations(layout); // ours, of a controller of ours that died: same names
      for (const configuration of objects.webhookConfigurations) {
        const created = kubectl(layout, ['create', '-f', '-'], JSON.stringify(configuration));
        if (!created.ok) throw new ClusterError(`creating ${configuration.kind ?? ''}: ${created.out}`);
      }
      const args = managerArgs({
        ports,
        featureGates: options.featureGates ?? deploymentFeatureGates(rendered),
        protectionLogPath: files.protectionLog,
        ...(options.extraArgs ? { extraArgs: options.extraArgs } : {}),
      });
      const env = managerEnv({
        kubeconfig: options.kubeconfig ?? layout.adminKubeconfig,
        webhookHost: layout.hostIp,
        webhookPort: ports.webhook,
        certDir: files.certs,
      });
      const fd = openSync(logFile, 'a');
      try {
        const child = spawn(build.manager, args, { env, stdio: ['ignore', fd, fd] });
        if (child.pid !== undefined) writeFileSync(files.pid, `${child.pid}\n`);
        return new OpenKruiseManagerProcess(child, layout, logFile, ports, restore);
      } finally {
        closeSync(fd);
      }
    } catch (err) {
      removeWebhookConfigurations(layout);
      restore();
      throw err;
    }
  }

  /**
   * True once /readyz answers 200: its webhook controller wrote the certificates, webhooks and CRD conversion
   * (webhook-ready) and its webhook server answers; its controllers are set up right after (main.go). Throws if the
   * process has exited.
   */
  async ready(): Promise<boolean> {
    this.assertRunning('kruise-manager');
    try {
      const res = await fetch(`http://127.0.0.1:${this.ports.health}/readyz`, { signal: AbortSignal.timeout(2000) });
      return res.status === 200;
    } catch {
      return false;
    }
  }

  /**
   * SIGTERM (SIGKILL after the deadline), then its webhook configurations removed (failurePolicy Fail: left in place
   * they would refuse every pod creation) and our CRDs put back.
   */
  async stop(deadlineMs = 15_000): Promise<Exit> {
    const exit = await this.terminate(deadlineMs);
    const files = stateFiles(this.layout);
    rmSync(files.pid, { force: true });
    removeWebhookConfigurations(this.layout);
    this.restore();
    rmSync(files.owner, { force: true });
    return exit;
  }
}
