// One pod's sync, as kubelet's SyncPod / SyncTerminatingPod do it (kuberuntime_manager.go#SyncPod,
// #computePodActions; kuberuntime_container.go#startContainer, #killContainer; kubelet.go#SyncTerminatingPod):
// sandbox, init containers one by one, then regular containers in spec order; restart decisions, crash backoff,
// liveness kills, hash changes; status to the status subresource; graceful termination and the final delete.
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { CriClient } from '../../../src/cri/index.js';
import { CoreResources, isNotFound, patchStatus, type KubeClient } from '../../../src/kube/index.js';
import { removeCgroupTree } from '../runtime/cgroups.js';
import { containerConfig, ContainerConfigError } from './container-config.js';
import type { CrashBackoff } from './crash-backoff.js';
import { EnvError, makeEnvironment, type ConfigSource } from './env.js';
import { containerHash } from './hash.js';
import { ensureImage, ImageError } from './images.js';
import {
  CONTAINER_HASH_ANNOTATION,
  POD_TERMINATION_GRACE_PERIOD_ANNOTATION,
  PRE_STOP_HANDLER_ANNOTATION,
  restartCountOf,
} from './labels.js';
import type { ProbeManager, RunningContainer } from './probes.js';
import {
  nanosToMs,
  readPodRuntime,
  sandboxView,
  type InstanceView,
  type PodRuntimeView,
  type SandboxView,
} from './runtime-view.js';
import { podCgroupParent, podLogDirectory, sandboxConfig } from './sandbox-config.js';
import type { NodeSettings } from './settings.js';
import { generatePodStatus, type WaitingReason } from './status.js';
import { addTerminationMessages } from './termination-message.js';
import { podDescription, type Container, type LifecycleHandler, type Pod } from './types.js';
import { podDirectory, setUpVolumes, terminationMessageFile, VolumeError } from './volumes.js';

/** kuberuntime_manager.go minimumGracePeriodInSeconds. */
const MINIMUM_GRACE_SECONDS = 2;

export interface EventSink {
  event(obj: Pod, type: 'Normal' | 'Warning', reason: string, message: string): void;
}

export interface SyncDeps {
  cri: CriClient;
  kube: KubeClient;
  settings: NodeSettings;
  events: EventSink;
  probes: ProbeManager;
  backoff: CrashBackoff;
  /** Image pull backoff (same periods as the crash backoff). */
  imageBackoff: CrashBackoff;
  source: ConfigSource;
  logger: Logger;
}

export interface SyncOutcome {
  /** Some start or kill failed: retry after the backoff period instead of the resync period. */
  failed: boolean;
  /** The pod is gone (deleted with grace 0 by us): forget it. */
  finished?: boolean;
}

function shouldRestart(pod: Pod, instance: InstanceView | undefined): boolean {
  if (!instance) return true;
  if (instance.state === 'CONTAINER_CREATED' || instance.state === 'CONTAINER_UNKNOWN') return true;
  if (instance.state === 'CONTAINER_RUNNING') return false;
  if (pod.metadata.deletionTimestamp) return false;
  const policy = pod.spec.restartPolicy ?? 'Always';
  if (policy === 'Never') return false;
  if (policy === 'OnFailure' && (instance.status?.exit_code ?? 0) === 0) return false;
  return true;
}

const OWNED_CONDITIONS = new Set([
  'PodScheduled',
  'PodReadyToStartContainers',
  'Initialized',
  'ContainersReady',
  'Ready',
]);

function resourceVersionNewer(a: Pod, b: Pod): boolean {
  const x = Number(a.metadata.resourceVersion);
  const y = Number(b.metadata.resourceVersion);
  return Number.isFinite(x) && Number.isFinite(y) && x > y;
}

function isTerminalPhase(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

export class PodSyncer {
  /** uid -> container name -> last start failure (kubelet's reasonCache). */
  private readonly reasons = new Map<string, Map<string, WaitingReason>>();
  /** uid -> the pod as our last status patch returned it (the informer may not have seen it yet). */
  private readonly lastWritten = new Map<string, Pod>();

  constructor(private readonly deps: SyncDeps) {}

  private reasonsOf(uid: string): Map<string, WaitingReason> {
    let m = this.reasons.get(uid);
    if (!m) this.reasons.set(uid, (m = new Map()));
    return m;
  }

  private log(pod: Pod): Logger {
    return this.deps.logger.child({ pod: `${pod.metadata.namespace}/${pod.metadata.name}` });
  }

  // ----------------------------------------------------------------------------------------------- sync

  async sync(pod: Pod): Promise<SyncOutcome> {
    if (pod.metadata.deletionTimestamp) return this.terminate(pod);
    const { cri, settings } = this.deps;
    const uid = pod.metadata.uid;
    let failed = false;
    let view = await readPodRuntime(cri, uid);
    let sandbox: SandboxView | undefined = view.sandboxes[0];

    if (isTerminalPhase(pod)) {
      // a finished pod keeps no running container (kubelet kills what is left) and never restarts
      await this.killRunning(pod, view, undefined);
      for (const s of view.sandboxes.filter((s) => s.ready)) await cri.stopPodSandbox({ pod_sandbox_id: s.id });
      this.deps.probes.stopPod(uid);
      await this.writeStatus(pod, await readPodRuntime(cri, uid), undefined, false);
      return { failed: false };
    }

    let volumes: Map<string, string>;
    try {
      volumes = await setUpVolumes(pod, settings.stateDir);
    } catch (err) {
      if (!(err instanceof VolumeError)) throw err;
      this.deps.events.event(pod, 'Warning', 'FailedMount', `MountVolume.SetUp failed: ${err.message}`);
      await this.writeStatus(pod, view, sandbox, false);
      return { failed: true };
    }

    const needSandbox = !sandbox || !sandbox.ready || (!pod.spec.hostNetwork && !sandbox.ip);
    if (needSandbox) {
      const anyToStart = [...(pod.spec.initContainers ?? []), ...pod.spec.containers].some((c) =>
        shouldRestart(pod, view.containers.get(c.name)?.[0]),
      );
      if (sandbox && !anyToStart) {
        await this.writeStatus(pod, view, undefined, false);
        return { failed: false };
      }
      if (sandbox) {
        this.deps.events.event(
          pod,
          'Normal',
          'SandboxChanged',
          'Pod sandbox changed, it will be killed and re-created.',
        );
        await this.killRunning(pod, view, undefined);
        for (const s of view.sandboxes.filter((s) => s.ready)) await cri.stopPodSandbox({ pod_sandbox_id: s.id });
      }
      const attempt = sandbox ? sandbox.attempt + 1 : 0;
      try {
        await mkdir(podLogDirectory(settings, pod), { recursive: true });
        const created = await cri.runPodSandbox({ config: sandboxConfig(pod, attempt, settings) });
        const listed = await cri.listPodSandbox({ filter: { id: created.pod_sandbox_id } });
        const item = listed.items[0];
        if (!item) throw new Error(`sandbox ${created.pod_sandbox_id} vanished right after it was created`);
        sandbox = await sandboxView(cri, item);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        this.deps.events.event(pod, 'Warning', 'FailedCreatePodSandBox', `Failed to create pod sandbox: ${message}`);
        await this.writeStatus(pod, view, undefined, false);
        return { failed: true };
      }
      view = await readPodRuntime(cri, uid);
    }
    const current = sandbox!;
    const inSandbox = (i: InstanceView | undefined): InstanceView | undefined =>
      i && i.sandboxId === current.id ? i : undefined;
    const podIPs = pod.spec.hostNetwork ? settings.hostIPs : current.ip ? [current.ip, ...current.additionalIps] : [];

    // init containers, one at a time
    let initialized = true;
    for (const c of pod.spec.initContainers ?? []) {
      const sidecar = c.restartPolicy === 'Always';
      const latest = inSandbox(view.containers.get(c.name)?.[0]);
      if (latest?.state === 'CONTAINER_RUNNING') {
        if (sidecar) {
          if (await this.restartIfUnhealthy(pod, c, latest, view, current, volumes, podIPs)) failed = true;
          continue;
        }
        initialized = false;
        break;
      }
      if (latest?.state === 'CONTAINER_EXITED' && !sidecar && (latest.status?.exit_code ?? 0) === 0) continue;
      if (latest?.state === 'CONTAINER_EXITED' && !sidecar && (pod.spec.restartPolicy ?? 'Always') === 'Never') {
        initialized = false;
        break;
      }
      if (!(await this.startWithBackoff(pod, c, view, current, volumes, podIPs))) failed = true;
      if (!sidecar) {
        initialized = false;
        break;
      }
    }

    if (initialized) {
      for (const c of pod.spec.containers) {
        const latest = inSandbox(view.containers.get(c.name)?.[0]);
        if (latest?.state === 'CONTAINER_RUNNING') {
          if (await this.restartIfUnhealthy(pod, c, latest, view, current, volumes, podIPs)) failed = true;
          continue;
        }
        if (latest && !shouldRestart(pod, latest)) continue;
        if (!(await this.startWithBackoff(pod, c, view, current, volumes, podIPs))) failed = true;
      }
    }

    view = await readPodRuntime(cri, uid);
    await this.pruneDeadInstances(view);
    const running: RunningContainer[] = [];
    for (const [name, list] of view.containers) {
      const top = list[0];
      if (top?.state === 'CONTAINER_RUNNING' && top.sandboxId === current.id) {
        running.push({ name, id: top.id, startedAtMs: nanosToMs(top.status?.started_at) || Date.now() });
      }
    }
    this.deps.probes.sync(pod, running);
    await this.writeStatus(pod, view, current, false);
    return { failed };
  }

  /** Liveness/startup failure or a changed spec hash: kill and (policy allowing) start a new instance. */
  private async restartIfUnhealthy(
    pod: Pod,
    c: Container,
    latest: InstanceView,
    view: PodRuntimeView,
    sandbox: SandboxView,
    volumes: Map<string, string>,
    podIPs: string[],
  ): Promise<boolean> {
    const uid = pod.metadata.uid;
    const hash = latest.status?.annotations?.[CONTAINER_HASH_ANNOTATION];
    const unhealthy = this.deps.probes.unhealthy(uid, latest.id);
    let message: string;
    let grace: number | undefined;
    let restart = true;
    if (hash !== undefined && hash !== containerHash(c)) {
      message = `Container ${c.name} definition changed, will be restarted`;
    } else if (unhealthy) {
      message = `Container ${c.name} failed ${unhealthy} probe, will be restarted`;
      const probe = unhealthy === 'liveness' ? c.livenessProbe : c.startupProbe;
      grace = probe?.terminationGracePeriodSeconds;
      restart = (pod.spec.restartPolicy ?? 'Always') !== 'Never' || c.restartPolicy === 'Always';
    } else {
      return false;
    }
    this.deps.probes.stopContainer(uid, latest.id);
    await this.killContainer(pod, c, latest, grace, message);
    if (!restart) return false;
    const refreshed = await readPodRuntime(this.deps.cri, uid);
    view.containers = refreshed.containers;
    return !(await this.start(pod, c, restartCountOf(latest.status?.annotations) + 1, sandbox, volumes, podIPs));
  }

  /** Start the container's next instance unless its crash backoff holds it; false on failure (incl. backoff). */
  private async startWithBackoff(
    pod: Pod,
    c: Container,
    view: PodRuntimeView,
    sandbox: SandboxView,
    volumes: Map<string, string>,
    podIPs: string[],
  ): Promise<boolean> {
    const instances = view.containers.get(c.name) ?? [];
    const latest = instances[0];
    const restartCount = latest ? restartCountOf(latest.status?.annotations) + 1 : 0;
    if (latest?.state === 'CONTAINER_EXITED') {
      const key = `${pod.metadata.name}_${pod.metadata.namespace}_${pod.metadata.uid}_${c.name}_${containerHash(c)}`;
      const finishedAt = nanosToMs(latest.status?.finished_at) || Date.now();
      const delay = this.deps.backoff.inBackoffSince(key, finishedAt);
      if (delay !== undefined) {
        const message = `back-off ${formatDuration(delay)} restarting failed container=${c.name} pod=${podDescription(pod)}`;
        const previous = this.reasonsOf(pod.metadata.uid).get(c.name);
        if (previous?.reason !== 'CrashLoopBackOff' || previous.message !== message) {
          this.deps.events.event(pod, 'Warning', 'BackOff', 'Back-off restarting failed container');
        }
        this.reasonsOf(pod.metadata.uid).set(c.name, { reason: 'CrashLoopBackOff', message });
        return false;
      }
      this.deps.backoff.next(key);
    }
    if (latest && latest.state !== 'CONTAINER_EXITED' && latest.state !== 'CONTAINER_RUNNING') {
      // created but never started, or unknown: remove it; a new instance replaces it
      await this.deps.cri.removeContainer({ container_id: latest.id }).catch(() => undefined);
    }
    return this.start(pod, c, restartCount, sandbox, volumes, podIPs);
  }

  /** startContainer: env, image, create, start, postStart. Records the failure reason; false on failure. */
  private async start(
    pod: Pod,
    c: Container,
    restartCount: number,
    sandbox: SandboxView,
    volumes: Map<string, string>,
    podIPs: string[],
  ): Promise<boolean> {
    const { cri, settings, events } = this.deps;
    const reasons = this.reasonsOf(pod.metadata.uid);
    const fail = (reason: string, message: string, event = true): false => {
      reasons.set(c.name, { reason, message });
      if (event) events.event(pod, 'Warning', 'Failed', `Error: ${message}`);
      this.log(pod).info({ container: c.name, reason, message }, 'container start failed');
      return false;
    };
    let image: string;
    try {
      image = (
        await ensureImage(cri, pod, c, this.deps.source, this.deps.imageBackoff, (phase, ms) => {
          if (phase === 'pulling') events.event(pod, 'Normal', 'Pulling', `Pulling image "${c.image}"`);
          else events.event(pod, 'Normal', 'Pulled', `Successfully pulled image "${c.image}" in ${ms}ms`);
        })
      ).image;
    } catch (err) {
      if (err instanceof ImageError) {
        if (err.reason === 'ImagePullBackOff') events.event(pod, 'Normal', 'BackOff', err.message);
        else events.event(pod, 'Warning', 'Failed', `Failed to pull image "${c.image}": ${err.message}`);
        return fail(err.reason, err.message, false);
      }
      return fail('ErrImagePull', err instanceof Error ? err.message : String(err));
    }
    let config;
    try {
      const env = await makeEnvironment(c, {
        pod,
        nodeName: settings.nodeName,
        podIPs,
        hostIPs: settings.hostIPs,
        source: this.deps.source,
      });
      const messageFile = await terminationMessageFile(settings.stateDir, pod.metadata.uid, c.name, restartCount);
      config = containerConfig({
        pod,
        container: c,
        restartCount,
        image,
        env,
        volumePaths: volumes,
        terminationMessageFile: messageFile,
      });
    } catch (err) {
      if (err instanceof EnvError || err instanceof ContainerConfigError)
        return fail('CreateContainerConfigError', err.message);
      throw err;
    }
    let id: string;
    try {
      const created = await cri.createContainer({
        pod_sandbox_id: sandbox.id,
        config,
        sandbox_config: sandboxConfig(pod, sandbox.attempt, settings),
      });
      id = created.container_id;
    } catch (err) {
      return fail('CreateContainerError', err instanceof Error ? err.message : String(err));
    }
    events.event(pod, 'Normal', 'Created', `Created container ${c.name}`);
    try {
      await cri.startContainer({ container_id: id });
    } catch (err) {
      return fail('RunContainerError', err instanceof Error ? err.message : String(err));
    }
    events.event(pod, 'Normal', 'Started', `Started container ${c.name}`);
    const postStart = c.lifecycle?.postStart;
    if (postStart) {
      const problem = await this.runHook(id, postStart, 0);
      if (problem !== undefined) {
        events.event(pod, 'Warning', 'FailedPostStartHook', `PostStartHook failed: ${problem}`);
        await this.killContainer(
          pod,
          c,
          { id, sandboxId: sandbox.id, createdAt: Date.now(), state: 'CONTAINER_RUNNING' },
          undefined,
          'FailedPostStartHook',
        );
        return fail('PostStartHookError', `PostStartHook failed: ${problem}`, false);
      }
    }
    reasons.delete(c.name);
    return true;
  }

  /** An exec hook; undefined on success, else what went wrong. `timeoutSeconds` 0 = no timeout. */
  private async runHook(
    containerId: string,
    handler: LifecycleHandler,
    timeoutSeconds: number,
  ): Promise<string | undefined> {
    if (handler.sleep) {
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, handler.sleep!.seconds) * 1000));
      return undefined;
    }
    const cmd = handler.exec?.command;
    if (!cmd?.length)
      return handler.httpGet || handler.tcpSocket
        ? 'only exec and sleep hooks are supported by kubelet-lite'
        : undefined;
    try {
      const r = await this.deps.cri.execSync(
        { container_id: containerId, cmd, timeout: timeoutSeconds },
        { timeoutMs: timeoutSeconds > 0 ? timeoutSeconds * 1000 + 5000 : 300_000 },
      );
      if (r.exit_code === 0) return undefined;
      const output = Buffer.concat([Buffer.from(r.stdout), Buffer.from(r.stderr)])
        .toString('utf8')
        .trim();
      return `command '${cmd.join(' ')}' exited with ${r.exit_code}: ${output}`;
    } catch (err) {
      return err instanceof Error ? err.message : String(err);
    }
  }

  /**
   * killContainer: grace = override, else pod.deletionGracePeriodSeconds, else spec.terminationGracePeriodSeconds
   * (restored from the container's annotations without a spec), else 2; preStop runs for at most the grace
   * period; then StopContainer with what remains (at least 2 s).
   */
  private async killContainer(
    pod: Pod | undefined,
    spec: Container | undefined,
    instance: InstanceView,
    graceOverride: number | undefined,
    message: string,
  ): Promise<void> {
    const annotations = instance.status?.annotations ?? {};
    let grace =
      graceOverride ??
      pod?.metadata.deletionGracePeriodSeconds ??
      pod?.spec.terminationGracePeriodSeconds ??
      (annotations[POD_TERMINATION_GRACE_PERIOD_ANNOTATION] !== undefined
        ? Number(annotations[POD_TERMINATION_GRACE_PERIOD_ANNOTATION])
        : MINIMUM_GRACE_SECONDS);
    let preStop = spec?.lifecycle?.preStop;
    if (!spec && annotations[PRE_STOP_HANDLER_ANNOTATION]) {
      try {
        preStop = JSON.parse(annotations[PRE_STOP_HANDLER_ANNOTATION]) as LifecycleHandler;
      } catch {
        preStop = undefined;
      }
    }
    if (pod && spec)
      this.deps.events.event(
        pod,
        'Normal',
        'Killing',
        message.startsWith('Container') ? message : `Stopping container ${spec.name}`,
      );
    if (preStop && grace > 0) {
      const started = Date.now();
      const timer = new Promise<string>((resolve) => setTimeout(() => resolve('timeout'), grace * 1000).unref());
      const problem = await Promise.race([this.runHook(instance.id, preStop, grace), timer]);
      if (problem !== undefined && pod && spec) {
        this.deps.events.event(pod, 'Warning', 'FailedPreStopHook', `PreStopHook failed: ${problem}`);
      }
      grace -= Math.floor((Date.now() - started) / 1000);
    }
    await this.deps.cri
      .stopContainer({ container_id: instance.id, timeout: Math.max(grace, MINIMUM_GRACE_SECONDS) })
      .catch((err: unknown) => this.deps.logger.warn({ err, container: instance.id }, 'StopContainer failed'));
  }

  private async killRunning(pod: Pod | undefined, view: PodRuntimeView, grace: number | undefined): Promise<void> {
    const specs = new Map<string, Container>();
    for (const c of [...(pod?.spec.initContainers ?? []), ...(pod?.spec.containers ?? [])]) specs.set(c.name, c);
    const kills: Promise<void>[] = [];
    for (const [name, list] of view.containers) {
      for (const instance of list) {
        if (instance.state !== 'CONTAINER_RUNNING') continue;
        if (!instance.status) {
          const status = await this.deps.cri.containerStatus({ container_id: instance.id }).catch(() => undefined);
          if (status?.status) instance.status = status.status;
        }
        kills.push(this.killContainer(pod, specs.get(name), instance, grace, `Stopping container ${name}`));
      }
    }
    await Promise.all(kills);
  }

  /** Keep the newest two instances of each container (state and lastState); remove older dead ones. */
  private async pruneDeadInstances(view: PodRuntimeView): Promise<void> {
    for (const list of view.containers.values()) {
      for (const old of list.slice(2)) {
        if (old.state === 'CONTAINER_RUNNING') continue;
        await this.deps.cri.removeContainer({ container_id: old.id }).catch(() => undefined);
      }
    }
  }

  private async writeStatus(
    pod: Pod,
    view: PodRuntimeView,
    sandbox: SandboxView | undefined,
    terminal: boolean,
  ): Promise<void> {
    const uid = pod.metadata.uid;
    const reasons = this.reasonsOf(uid);
    await addTerminationMessages(pod, view, this.deps.settings.stateDir, this.deps.settings.podLogDir);
    const status = generatePodStatus({
      pod,
      view,
      sandbox,
      hostIPs: this.deps.settings.hostIPs,
      reasons,
      ready: (c, id) => this.deps.probes.ready(uid, c, id),
      started: (c, id) => this.deps.probes.started(uid, c, id),
      terminal,
      now: new Date(),
    });
    const written = this.lastWritten.get(uid);
    const base =
      written && resourceVersionNewer(written, pod)
        ? {
            ...pod,
            status: written.status,
            metadata: { ...pod.metadata, resourceVersion: written.metadata.resourceVersion },
          }
        : pod;
    try {
      const result = await patchStatus(this.deps.kube, CoreResources.pods, base, (draft) => {
        // conditions kubelet does not own (readiness gates) come from the freshest copy
        const foreign = (draft.status?.conditions ?? []).filter((c) => !OWNED_CONDITIONS.has(c.type));
        const own = (status.conditions ?? []).filter((c) => OWNED_CONDITIONS.has(c.type));
        return { ...status, conditions: [...own, ...foreign] };
      });
      if (result.patched) this.lastWritten.set(uid, result.object);
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
  }

  // ----------------------------------------------------------------------------------------- termination

  /** deletionTimestamp set: preStop, stop containers within the grace period, stop and remove the sandbox, delete. */
  private async terminate(pod: Pod): Promise<SyncOutcome> {
    const { cri, kube } = this.deps;
    const uid = pod.metadata.uid;
    const grace = Math.max(0, pod.metadata.deletionGracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds ?? 30);
    this.deps.probes.stopPod(uid);
    const view = await readPodRuntime(cri, uid);
    await this.killRunning(pod, view, grace);
    for (const s of view.sandboxes) await cri.stopPodSandbox({ pod_sandbox_id: s.id }).catch(() => undefined);
    const stopped = await readPodRuntime(cri, uid);
    await this.writeStatus(pod, stopped, undefined, true);
    await this.removeRuntime(uid, stopped);
    try {
      await kube.delete(CoreResources.pods, pod.metadata.name, {
        namespace: pod.metadata.namespace,
        gracePeriodSeconds: 0,
        preconditions: { uid },
      });
    } catch (err) {
      if (!isNotFound(err) && !(err instanceof Error && /precondition|Conflict/i.test(err.message))) throw err;
    }
    this.forget(uid);
    return { failed: false, finished: true };
  }

  /** The pod left the API (force delete): kill what runs for it without hooks (grace 0), remove everything. */
  async cleanUpGone(uid: string, lastKnown: Pod | undefined): Promise<void> {
    this.deps.probes.stopPod(uid);
    const view = await readPodRuntime(this.deps.cri, uid);
    const pod = lastKnown
      ? { ...lastKnown, metadata: { ...lastKnown.metadata, deletionGracePeriodSeconds: 0 } }
      : undefined;
    await this.killRunning(pod, view, 0);
    for (const s of view.sandboxes) await this.deps.cri.stopPodSandbox({ pod_sandbox_id: s.id }).catch(() => undefined);
    await this.removeRuntime(uid, view);
    this.forget(uid);
  }

  private async removeRuntime(uid: string, view: PodRuntimeView): Promise<void> {
    const { cri, settings } = this.deps;
    for (const list of view.containers.values()) {
      for (const c of list) await cri.removeContainer({ container_id: c.id }).catch(() => undefined);
    }
    for (const s of view.sandboxes) await cri.removePodSandbox({ pod_sandbox_id: s.id }).catch(() => undefined);
    await rm(podDirectory(settings.stateDir, uid), { recursive: true, force: true }).catch(() => undefined);
    await removeCgroupTree(podCgroupParent(settings, uid)).catch(() => undefined);
    // kubelet's container GC removes the log directories of pods that are gone (evictPodLogsDirectories)
    const logDirs = await readdir(settings.podLogDir).catch(() => [] as string[]);
    for (const dir of logDirs.filter((d) => d.endsWith(`_${uid}`))) {
      await rm(join(settings.podLogDir, dir), { recursive: true, force: true }).catch(() => undefined);
    }
  }

  forget(uid: string): void {
    this.reasons.delete(uid);
    this.deps.backoff.forgetPod(uid);
    this.deps.imageBackoff.forgetPod(uid);
    this.lastWritten.delete(uid);
  }
}

/** Go's time.Duration String for whole seconds/minutes: 10s, 1m20s, 5m0s. */
export function formatDuration(ms: number): string {
  const total = Math.round(ms / 1000);
  if (total < 60) return ms < 1000 ? `${ms}ms` : `${total}s`;
  return `${Math.floor(total / 60)}m${total % 60}s`;
}
