// The custom probes of this node: watches its own NodePodProbe only (fieldSelector metadata.name=<node>), keeps one
// ProbeWorker per (pod uid, container, probe name) in the spec, and writes their results into the status: results
// coalesced into few writes (a window, then at most one write per window), a write only when a state or message
// changed (no periodic refresh), entries only for pods and probes still in the spec, each patch conditional on the
// resourceVersion it was built on. A probe whose state changes to Succeeded/Failed gets a pod Event
// (KruiseProbeSucceeded / KruiseProbeFailed, both Normal, as OpenKruise). The status is kept within its budget
// (status-budget.ts). Status writes that keep failing (too large, invalid, a server error: anything the retries do not
// cure) are not silent: the nodePodProbeStatusWrites readiness check fails with the cause, the failures metric counts
// them, and a Warning event (StatusWriteFailed) goes on the NodePodProbe once per distinct cause.
import { EVENT_REASON_KRUISE_PROBE_FAILED, EVENT_REASON_KRUISE_PROBE_SUCCEEDED } from '../../api/constants.js';
import { NODE_POD_PROBES, type NodePodProbe } from '../../api/nodepodprobe.js';
import {
  ControllerLoop,
  CoreResources,
  EventRecorder,
  Informer,
  type KubeClient,
  type KubeMetrics,
  type ListWatcher,
} from '../../kube/index.js';
import type { Logger } from '../../observability/logger.js';
import type { Clock } from '../../util/clock.js';
import { DEFAULT_MAX_CONCURRENT_PROBES, DEFAULT_PROBE_STATUS_WINDOW_MS } from '../options.js';
import { OwnNodeObject } from '../own-node-object.js';
import { RunSlots } from '../run-slots.js';
import { StatusWriter } from '../status-writer.js';
import { ApiError } from '../../kube/errors.js';
import { errorMessage } from '../../util/error-message.js';
import { rfc3339 } from '../../util/time.js';
import type { PodProbeMetrics, StatusWriteFailure } from './metrics.js';
import { boundStatus, STATUS_BUDGET_BYTES, type BoundedStatus } from './status-budget.js';
import { buildNodePodProbeStatus, previousStates } from './probe-status.js';
import { probeKey, specProbes, statusKey, type ProbeTarget } from './probe-spec.js';
import { ProbeWorker } from './probe-worker.js';
import { LateRuntime } from '../podruntime/late-runtime.js';
import type { ContainerRuntime } from '../podruntime/pod-containers.js';

/** source.component of the pod Events, as OpenKruise. */
export const POD_PROBE_EVENT_SOURCE = 'kruise-daemon-podprobe';
/** The readiness check that fails while status writes keep failing. */
export const NODE_POD_PROBE_STATUS_WRITES_CHECK = 'nodePodProbeStatusWrites';
export const EVENT_STATUS_WRITE_FAILED = 'StatusWriteFailed';
/** Failed writes in a row before the check fails and the event goes out (a blip is retried first). */
export const STATUS_WRITE_FAILING_AFTER = 3;
const MAX_CAUSE_CHARS = 400;

/** What kind of failure a status write met, from the API's answer. */
export function statusWriteFailureKind(err: unknown): StatusWriteFailure {
  if (!(err instanceof ApiError)) return 'other';
  // etcd's "request is too large" comes back as a 500; the API server's own body limit as a 413
  if (err.code === 413 || /request is too large|too large/i.test(err.message)) return 'too_large';
  if (err.code === 422) return 'invalid';
  if (err.code === 403) return 'forbidden';
  if (err.code === 409) return 'conflict';
  if (err.code >= 500) return 'server_error';
  return 'other';
}

interface WriteFailures {
  kind: StatusWriteFailure;
  cause: string;
  count: number;
  since: number;
}

export interface PodProbeControllerOptions {
  nodeName: string;
  client: KubeClient;
  /** The NodePodProbe list/watch (default: the client). */
  source?: ListWatcher<NodePodProbe> | undefined;
  /** The runtime once connected (rejects when `signal` aborts first); probes are not run before. */
  runtime: (signal: AbortSignal) => Promise<ContainerRuntime>;
  clock: Clock;
  logger: Logger;
  metrics: PodProbeMetrics;
  kubeMetrics?: KubeMetrics | undefined;
  maxConcurrentProbes?: number | undefined;
  /** Results are gathered this long before a status write, and written at most once per window. */
  statusWindowMs?: number | undefined;
  /** Jitter source, [0, 1) (default Math.random). */
  random?: (() => number) | undefined;
  /** Bytes of JSON the status may take (default STATUS_BUDGET_BYTES). */
  statusBudgetBytes?: number | undefined;
  /** Pod events (default: an EventRecorder on the client). */
  events?: Pick<EventRecorder, 'event' | 'close'> | undefined;
}

export class PodProbeController {
  readonly informer: Informer<NodePodProbe>;
  private readonly loop: ControllerLoop;
  private readonly own: OwnNodeObject<NodePodProbe>;
  private readonly writer: StatusWriter;
  private readonly slots: RunSlots;
  private readonly events: Pick<EventRecorder, 'event' | 'close'>;
  private readonly workers = new Map<string, ProbeWorker>();
  private readonly stopping = new Set<Promise<void>>();
  private readonly log: Logger;
  private readonly runtime: LateRuntime;
  private readonly stopSignal = new AbortController();
  private stopped = false;
  private failures: WriteFailures | undefined;
  /** The cause the last StatusWriteFailed event named (one event per distinct cause while failing). */
  private reportedCause: string | undefined;

  constructor(private readonly options: PodProbeControllerOptions) {
    this.log = options.logger;
    this.runtime = new LateRuntime(options.runtime);
    this.informer = new Informer<NodePodProbe>(NODE_POD_PROBES, options.source ?? options.client, {
      fieldSelector: `metadata.name=${options.nodeName}`,
      name: NODE_POD_PROBES.resource,
      clock: options.clock,
      logger: options.logger,
      metrics: options.kubeMetrics,
    });
    this.own = new OwnNodeObject({
      client: options.client,
      rt: NODE_POD_PROBES,
      name: options.nodeName,
      informer: this.informer,
      clock: options.clock,
      logger: options.logger,
    });
    this.loop = new ControllerLoop(
      'podprobe',
      { workers: 1, clock: options.clock, logger: options.logger, kubeMetrics: options.kubeMetrics },
      () => this.reconcile(),
    );
    const windowMs = options.statusWindowMs ?? DEFAULT_PROBE_STATUS_WINDOW_MS;
    this.writer = new StatusWriter({
      clock: options.clock,
      logger: options.logger,
      subject: 'NodePodProbe status',
      windowMs,
      minIntervalMs: windowMs,
      write: () => this.writeStatus(),
    });
    this.slots = new RunSlots(options.maxConcurrentProbes ?? DEFAULT_MAX_CONCURRENT_PROBES);
    this.events =
      options.events ??
      new EventRecorder(options.client, {
        component: POD_PROBE_EVENT_SOURCE,
        host: options.nodeName,
        clock: options.clock,
        logger: options.logger,
        metrics: options.kubeMetrics,
      });
    const node = options.nodeName;
    this.loop.watch(
      this.informer.addHandlers({
        onAdd: () => this.loop.add(node),
        onUpdate: (before, after) => {
          if (JSON.stringify(before.spec ?? {}) !== JSON.stringify(after.spec ?? {})) this.loop.add(node);
          else if (this.workers.size > 0) this.writer.request(); // someone else wrote the status: ours differs?
        },
        onDelete: () => this.loop.add(node),
      }),
    );
  }

  start(): void {
    // until the runtime is connected, a worker's look at its container fails and is tried again a period later
    this.runtime.ready(this.stopSignal.signal).catch(() => undefined);
    this.informer.start();
    this.loop.start();
  }

  /** Health check: fails until the NodePodProbe informer has listed once, saying why the last list failed. */
  readonly checkSynced = (): void => {
    const reason = this.informer.notSyncedReason();
    if (reason !== undefined) {
      throw new Error(`the NodePodProbe informer (metadata.name=${this.options.nodeName}) ${reason}`);
    }
  };

  /**
   * Readiness check: fails while the last STATUS_WRITE_FAILING_AFTER or more status writes failed, with the cause:
   * the probes still run but their results reach no pod.
   */
  readonly checkStatusWrites = (): void => {
    const f = this.failures;
    if (!f || f.count < STATUS_WRITE_FAILING_AFTER) return;
    throw new Error(
      `NodePodProbe ${this.options.nodeName}: the last ${f.count} status writes failed (since ${rfc3339(f.since)}; ` +
        `${f.kind}): ${f.cause}; probe results of this node's pods do not reach them`,
    );
  };

  /** Workers running now (tests, metrics). */
  get workerCount(): number {
    return this.workers.size;
  }

  /** Stop every worker and timer; a status write under way ends, nothing new is written. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopSignal.abort(new Error('the custom probes stopped'));
    await this.loop.stop();
    await this.informer.stop();
    this.stopWorkers(() => true);
    await Promise.all([...this.stopping]);
    await this.writer.stop();
    await this.events.close();
  }

  private reconcile(): void {
    if (this.stopped) return;
    const npp = this.informer.get(this.options.nodeName);
    if (!npp || npp.metadata?.deletionTimestamp) {
      const n = this.stopWorkers(() => true);
      if (n > 0) this.log.info({ workers: n }, 'NodePodProbe gone: its probes stopped');
      this.own.forget();
      return;
    }
    const { targets, problems } = specProbes(npp);
    for (const problem of problems) this.log.warn({ problem }, 'NodePodProbe entry skipped');
    const previous = previousStates(this.own.current()?.status);
    const wanted = new Set<string>();
    let started = 0;
    for (const target of targets) {
      const key = probeKey(target);
      wanted.add(key);
      const worker = this.workers.get(key);
      if (worker) {
        worker.update(target);
        continue;
      }
      const created = new ProbeWorker(
        target,
        {
          runtime: this.runtime,
          clock: this.options.clock,
          logger: this.log,
          slots: this.slots,
          metrics: this.options.metrics,
          random: this.options.random ?? Math.random,
          onChange: (w, stateChanged) => this.onChange(w, stateChanged),
        },
        previous.get(statusKey(target.podUid, target.probeName)),
      );
      this.workers.set(key, created);
      created.start();
      started++;
    }
    const stoppedCount = this.stopWorkers((key) => !wanted.has(key));
    if (started > 0 || stoppedCount > 0) {
      this.log.info({ started, stopped: stoppedCount, workers: this.workers.size }, 'probe workers follow the spec');
    }
    this.options.metrics.setWorkers(this.workers.size);
    this.writer.request();
  }

  private stopWorkers(which: (key: string) => boolean): number {
    let n = 0;
    for (const [key, worker] of this.workers) {
      if (!which(key)) continue;
      this.workers.delete(key);
      const done = worker.stop().finally(() => this.stopping.delete(done));
      this.stopping.add(done);
      n++;
    }
    this.options.metrics.setWorkers(this.workers.size);
    return n;
  }

  private onChange(worker: ProbeWorker, stateChanged: boolean): void {
    if (this.stopped || this.workers.get(worker.key) !== worker) return;
    const result = worker.result();
    const target = worker.probe;
    if (stateChanged && result && result.state !== 'Unknown') {
      const succeeded = result.state === 'Succeeded';
      this.events.event(
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { namespace: target.podNamespace, name: target.podName, uid: target.podUid },
        },
        'Normal',
        succeeded ? EVENT_REASON_KRUISE_PROBE_SUCCEEDED : EVENT_REASON_KRUISE_PROBE_FAILED,
        result.message ||
          `probe ${target.probeName} of container ${target.containerName} ${succeeded ? 'succeeded' : 'failed'}`,
        CoreResources.pods,
      );
    }
    if (stateChanged) {
      this.log.info(
        { pod: `${target.podNamespace}/${target.podName}`, probe: target.probeName, state: result?.state },
        'probe state changed',
      );
    }
    this.writer.request();
  }

  private resultOf(target: ProbeTarget) {
    return this.workers.get(probeKey(target))?.result();
  }

  private async writeStatus(): Promise<void> {
    const budget = this.options.statusBudgetBytes ?? STATUS_BUDGET_BYTES;
    let bounded: BoundedStatus | undefined;
    try {
      const result = await this.own.patchStatus((draft) => {
        const built = buildNodePodProbeStatus(specProbes(draft).targets, draft.status, (t) => this.resultOf(t));
        bounded = boundStatus(built, budget);
        return bounded.status;
      });
      if (result?.patched) {
        this.options.metrics.statusWrite('ok');
        if (bounded && bounded.cut !== 'none') {
          this.options.metrics.statusCut(bounded.cut);
          this.log.warn(
            { cut: bounded.cut, podsLeftOut: bounded.podsLeftOut, budgetBytes: budget },
            'NodePodProbe status cut to fit its budget',
          );
        }
      }
      this.writeSucceeded();
    } catch (err) {
      this.options.metrics.statusWrite('error');
      this.writeFailed(err);
      throw err;
    }
  }

  private writeSucceeded(): void {
    if (!this.failures) return;
    this.log.info({ failures: this.failures.count }, 'NodePodProbe status written again');
    this.failures = undefined;
    this.reportedCause = undefined;
    this.options.metrics.setStatusWriteFailures(undefined, 0);
  }

  private writeFailed(err: unknown): void {
    const kind = statusWriteFailureKind(err);
    const text = errorMessage(err).replace(/\s*\n\s*/g, '; ');
    const cause = text.length > MAX_CAUSE_CHARS ? `${text.slice(0, MAX_CAUSE_CHARS - 1)}…` : text;
    const f = (this.failures ??= { kind, cause, count: 0, since: this.options.clock.now() });
    f.count++;
    f.kind = kind;
    f.cause = cause;
    this.options.metrics.setStatusWriteFailures(kind, f.count);
    if (f.count < STATUS_WRITE_FAILING_AFTER || this.reportedCause === `${kind}:${cause}`) return;
    const npp = this.own.current() ?? this.informer.get(this.options.nodeName);
    if (!npp) return;
    this.reportedCause = `${kind}:${cause}`;
    this.events.event(
      npp,
      'Warning',
      EVENT_STATUS_WRITE_FAILED,
      `the last ${f.count} status writes failed (${kind}): ${cause}; probe results of this node's pods do not reach them`,
      NODE_POD_PROBES,
    );
  }
}
