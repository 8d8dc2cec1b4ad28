// One kubelet-lite node: its Node and Lease, one watch on the pods bound to it, a per-pod worker, probes, and the
// shared runtime relist. Sync triggers as kubelet's (docs/kubelet-behaviours.md §1): a pod change in metadata or
// spec (not status-only, except readiness gates), a runtime state change of one of its containers, a probe
// result change, the retry/resync timers. ConfigMap changes do not trigger a sync.
import type { Logger } from 'pino';
import type { CriClient } from '../../../src/cri/index.js';
import { CoreResources, EventRecorder, Informer, isNotFound, type KubeClient } from '../../../src/kube/index.js';
import { CrashBackoff } from './crash-backoff.js';
import type { ConfigSource } from './env.js';
import { NODE_LABEL, POD_UID_LABEL } from './labels.js';
import { NodeHeartbeat } from './node-status.js';
import { PodSyncer } from './pod-sync.js';
import { PodWorkers } from './pod-workers.js';
import { ProbeManager } from './probes.js';
import type { RuntimeWatcher } from './runtime-watcher.js';
import type { NodeSettings } from './settings.js';
import type { ConfigMap, Pod, Secret } from './types.js';

/** kubelet-local annotations the config merger ignores (config.go#isAnnotationMapEqual). */
const LOCAL_ANNOTATION = /^kubernetes\.io\/config\./;

function annotationsWithoutLocal(a: Record<string, string> | undefined): string {
  const kept = Object.entries(a ?? {})
    .filter(([k]) => !LOCAL_ANNOTATION.test(k))
    .sort(([x], [y]) => (x < y ? -1 : 1));
  return JSON.stringify(kept);
}

/** config.go#podsDifferSemantically plus the DELETE classification: a change worth an immediate sync. */
export function podsDifferSemantically(a: Pod, b: Pod): boolean {
  return (
    JSON.stringify(a.spec) !== JSON.stringify(b.spec) ||
    JSON.stringify(a.metadata.labels ?? {}) !== JSON.stringify(b.metadata.labels ?? {}) ||
    annotationsWithoutLocal(a.metadata.annotations) !== annotationsWithoutLocal(b.metadata.annotations) ||
    a.metadata.deletionTimestamp !== b.metadata.deletionTimestamp ||
    a.metadata.deletionGracePeriodSeconds !== b.metadata.deletionGracePeriodSeconds
  );
}

/** status.NeedToReconcilePodReadiness: a readiness gate's condition changed. */
function gateConditionsChanged(a: Pod, b: Pod): boolean {
  const gates = b.spec.readinessGates ?? [];
  if (gates.length === 0) return false;
  const pick = (p: Pod): string =>
    JSON.stringify(gates.map((g) => p.status?.conditions?.find((c) => c.type === g.conditionType)?.status ?? ''));
  return pick(a) !== pick(b);
}

export interface NodeKubeletDeps {
  cri: CriClient;
  kube: KubeClient;
  watcher: RuntimeWatcher;
  settings: NodeSettings;
  runtime: { name: string; version: string };
  logger: Logger;
}

export class NodeKubelet {
  private readonly informer: Informer<Pod>;
  private readonly workers: PodWorkers;
  private readonly syncer: PodSyncer;
  private readonly probes: ProbeManager;
  private readonly heartbeat: NodeHeartbeat;
  private readonly recorder: EventRecorder;
  private readonly logger: Logger;
  /** uid -> the last pod object seen (also after it left the API). */
  private readonly known = new Map<string, Pod>();
  private unsubscribe?: () => void;

  constructor(private readonly deps: NodeKubeletDeps) {
    const { kube, cri, settings } = deps;
    this.logger = deps.logger.child({ node: settings.nodeName });
    this.recorder = new EventRecorder(kube, { component: 'kubelet', host: settings.nodeName, logger: this.logger });
    this.informer = new Informer<Pod>(CoreResources.pods, kube, {
      fieldSelector: `spec.nodeName=${settings.nodeName}`,
      name: `pods-${settings.nodeName}`,
      logger: this.logger,
    });
    this.probes = new ProbeManager(
      cri,
      {
        changed: (uid) => this.workers.update(uid),
        failed: (pod, container, kind, output) => {
          const what = kind === 'readiness' ? 'Readiness' : kind === 'liveness' ? 'Liveness' : 'Startup';
          this.recorder.event(
            pod,
            'Warning',
            'Unhealthy',
            `${what} probe failed: ${output}`.trim(),
            CoreResources.pods,
          );
          void container;
        },
      },
      this.logger,
    );
    const source: ConfigSource = {
      configMap: (ns, name) => this.getOptional<ConfigMap>(CoreResources.configMaps, ns, name),
      secret: (ns, name) => this.getOptional<Secret>(CoreResources.secrets, ns, name),
    };
    this.syncer = new PodSyncer({
      cri,
      kube,
      settings,
      events: {
        event: (pod, type, reason, message) => this.recorder.event(pod, type, reason, message, CoreResources.pods),
      },
      probes: this.probes,
      backoff: new CrashBackoff(settings.timers),
      imageBackoff: new CrashBackoff(settings.timers),
      source,
      logger: this.logger,
    });
    this.workers = new PodWorkers((uid) => this.syncOne(uid), settings.timers, this.logger);
    this.heartbeat = new NodeHeartbeat(
      kube,
      {
        name: settings.nodeName,
        hostIP: settings.hostIPs[0] ?? '127.0.0.1',
        runtimeName: deps.runtime.name,
        runtimeVersion: deps.runtime.version,
      },
      settings.timers,
      this.logger,
    );
  }

  get nodeName(): string {
    return this.deps.settings.nodeName;
  }

  private async getOptional<T>(
    rt: (typeof CoreResources)['configMaps' | 'secrets'],
    namespace: string,
    name: string,
  ): Promise<T | undefined> {
    try {
      return (await this.deps.kube.get(rt, name, { namespace })) as T;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async start(): Promise<void> {
    await this.heartbeat.register();
    this.heartbeat.start();
    this.informer.addHandlers({
      onAdd: (pod) => this.seen(pod, true),
      onUpdate: (old, pod) => this.seen(pod, podsDifferSemantically(old, pod) || gateConditionsChanged(old, pod)),
      onDelete: (pod) => {
        this.known.set(pod.metadata.uid, pod);
        this.workers.update(pod.metadata.uid);
      },
    });
    this.informer.start();
    await this.informer.synced;
    await this.cleanUpOrphans();
    this.unsubscribe = this.deps.watcher.subscribe((uids) => {
      for (const uid of uids) if (this.known.has(uid)) this.workers.update(uid);
    });
    this.logger.info('kubelet-lite node started');
  }

  private seen(pod: Pod, sync: boolean): void {
    const uid = pod.metadata?.uid;
    if (!uid) return;
    const isNew = !this.known.has(uid);
    this.known.set(uid, pod);
    if (sync || isNew || !this.workers.has(uid)) this.workers.update(uid);
  }

  private current(uid: string): Pod | undefined {
    const last = this.known.get(uid);
    if (!last) return undefined;
    return this.informer.get(`${last.metadata.namespace}/${last.metadata.name}`);
  }

  private async syncOne(uid: string): Promise<{ failed: boolean; finished?: boolean }> {
    const pod = this.current(uid);
    if (!pod || pod.metadata.uid !== uid) {
      await this.syncer.cleanUpGone(uid, this.known.get(uid));
      this.known.delete(uid);
      return { failed: false, finished: true };
    }
    const outcome = await this.syncer.sync(pod);
    if (outcome.finished) this.known.delete(uid);
    return outcome;
  }

  /** Housekeeping: sandboxes of this node whose pod is not bound here any more. */
  private async cleanUpOrphans(): Promise<void> {
    const sandboxes = await this.deps.cri.listPodSandbox({
      filter: { label_selector: { [NODE_LABEL]: this.nodeName } },
    });
    const live = new Set(this.informer.list().map((p) => p.metadata.uid));
    for (const s of sandboxes.items) {
      const uid = s.labels?.[POD_UID_LABEL];
      if (uid && !live.has(uid)) {
        this.logger.info({ uid }, 'removing the sandbox of a pod that is gone');
        await this.syncer.cleanUpGone(uid, undefined);
      }
    }
  }

  /** Stop watching and syncing; the pods keep running (a restarted kubelet-lite adopts them). */
  async stop(): Promise<void> {
    this.unsubscribe?.();
    this.heartbeat.stop();
    await this.workers.stop();
    this.probes.stopAll();
    await this.informer.stop();
    await this.recorder.close();
  }
}
