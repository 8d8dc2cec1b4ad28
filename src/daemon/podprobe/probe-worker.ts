// One probe of one pod's container, run on the clock: its first run max(initialDelaySeconds,1) after the container
// started, then one every max(periodSeconds,1) s, all shifted by a fixed per-worker fraction of the period (the
// jitter), so the probes of many pods do not fire together. Each run finds the container in the CRI (the newest of
// its name): none → nothing runs; a new container ID (a restart) → the result is Unknown again; not running →
// Failed `Container(<name>) is Non-running` and nothing is exec'd. A run waits for a node-wide slot, is cut at its
// timeout, and moves the result only after successThreshold/failureThreshold consecutive equal outcomes.
import type { ProbeState } from '../../api/podprobemarker.js';
import type { ContainerProbeState } from '../../api/nodepodprobe.js';
import type { Logger } from '../../observability/logger.js';
import type { Clock, TimerHandle } from '../../util/clock.js';
import { errorMessage } from '../../util/error-message.js';
import { parseTime, rfc3339 } from '../../util/time.js';
import { listPodContainers, newestByName, type ContainerRuntime } from '../podruntime/pod-containers.js';
import type { RunSlots } from '../run-slots.js';
import type { PodProbeMetrics } from './metrics.js';
import { runProbe, type ProbeOutcome } from './probe-actions.js';
import { actionOf, kindOf, probeKey, timingOf, type ProbeTarget, type ProbeTiming } from './probe-spec.js';

export type ProbeRuntime = Pick<ContainerRuntime, 'listContainers' | 'containerStatus' | 'execSync'>;

/** A probe's result as the status shows it. */
export interface ProbeResult {
  state: ProbeState;
  message: string;
  /** RFC 3339: the run (or observation) that produced this state and message. */
  lastProbeTime: string;
  /** RFC 3339: when the state became what it is. */
  changedAt: string;
}

export interface ProbeWorkerDeps {
  runtime: ProbeRuntime;
  clock: Clock;
  logger: Logger;
  slots: RunSlots;
  metrics: PodProbeMetrics;
  /** A number in [0, 1): the worker's place within its period. */
  random: () => number;
  /** The result changed (state or message); `stateChanged` when the state did. */
  onChange: (worker: ProbeWorker, stateChanged: boolean) => void;
}

export class ProbeWorker {
  readonly key: string;
  private target: ProbeTarget;
  private timing: ProbeTiming;
  private readonly jitter: number;
  private current: ProbeResult | undefined;
  /** A result read from the object at start (an earlier run of the agent): kept if it is about this container. */
  private adopted: ProbeResult | undefined;
  private containerId: string | undefined;
  /** When the current container started (from its CRI status, read once per container). */
  private startedAtMs: number | undefined;
  private lastOutcome: 'succeeded' | 'failed' | undefined;
  private run = 0;
  private timer: TimerHandle | undefined;
  private ticking: Promise<void> | undefined;
  private readonly abort = new AbortController();
  private stopped = false;

  constructor(
    target: ProbeTarget,
    private readonly deps: ProbeWorkerDeps,
    previous?: ContainerProbeState,
  ) {
    this.key = probeKey(target);
    this.target = target;
    this.timing = timingOf(target.probe);
    this.jitter = Math.min(Math.max(deps.random(), 0), 0.999);
    if (previous?.lastProbeTime && (previous.state === 'Succeeded' || previous.state === 'Failed')) {
      this.adopted = {
        state: previous.state,
        message: previous.message ?? '',
        lastProbeTime: previous.lastProbeTime,
        changedAt: previous.lastTransitionTime ?? previous.lastProbeTime,
      };
    }
  }

  get probe(): ProbeTarget {
    return this.target;
  }

  /** The result to report; undefined until the container was seen (or a result adopted). */
  result(): ProbeResult | undefined {
    return this.current ?? this.adopted;
  }

  start(): void {
    this.schedule(this.jitter * this.timing.periodMs);
  }

  /** The spec changed: a new action resets the result to Unknown; new timing applies from the next run. */
  update(target: ProbeTarget): void {
    const actionChanged = actionOf(target.probe) !== actionOf(this.target.probe);
    this.target = target;
    this.timing = timingOf(target.probe);
    if (actionChanged && this.containerId !== undefined) {
      this.resetCounts();
      this.decide('Unknown', '');
    }
  }

  /** Stop: no more runs, a running one is aborted; resolves once nothing of this worker runs. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
    this.abort.abort(new Error('probe worker stopped'));
    await this.ticking;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = this.deps.clock.setTimer(() => {
      this.timer = undefined;
      this.ticking = this.tick().finally(() => {
        this.ticking = undefined;
      });
    }, ms);
  }

  private async tick(): Promise<void> {
    const { clock } = this.deps;
    const startedTick = clock.now();
    let nextAt: number | undefined;
    try {
      nextAt = await this.check();
    } catch (err) {
      this.deps.logger.debug(
        {
          pod: `${this.target.podNamespace}/${this.target.podName}`,
          probe: this.target.probeName,
          err: errorMessage(err),
        },
        'probe not run',
      );
    }
    if (this.stopped) return;
    const now = clock.now();
    const period = this.timing.periodMs;
    // the next tick on this worker's phase (ticks missed while waiting for a slot are skipped)
    let next = startedTick + period;
    if (next <= now) next = now + period - ((now - startedTick) % period);
    if (nextAt !== undefined && nextAt > now) next = nextAt;
    this.schedule(next - now);
  }

  /** One look at the container and, when due, one run. Returns when to look again, if not the next period. */
  private async check(): Promise<number | undefined> {
    const name = this.target.containerName;
    // the list says which container is current and its state; its start time (one more call) only when it is new
    const containers = await listPodContainers(
      this.deps.runtime,
      this.target.podUid,
      (c) => c.name === name && (c.id !== this.containerId || this.startedAtMs === undefined),
    );
    if (this.stopped) return undefined;
    const container = newestByName(containers).get(name);
    if (!container) return undefined;
    if (container.id !== this.containerId || container.startedAtMs !== undefined) {
      this.startedAtMs = container.startedAtMs;
    }
    const startedAtMs = this.startedAtMs ?? Number(container.createdAtNs / 1_000_000n);
    if (container.id !== this.containerId) {
      const first = this.containerId === undefined;
      this.containerId = container.id;
      this.resetCounts();
      const adopted = this.adopted;
      this.adopted = undefined;
      // the result of an earlier agent run stands if it was measured on this container (after it started)
      if (first && adopted && (parseTime(adopted.lastProbeTime) ?? 0) >= Math.floor(startedAtMs / 1000) * 1000) {
        this.current = adopted;
      } else {
        this.decide('Unknown', '');
      }
    }
    if (container.state !== 'running') {
      this.resetCounts();
      this.decide('Failed', `Container(${name}) is Non-running`);
      return undefined;
    }
    const due = startedAtMs + this.timing.initialDelayMs + this.jitter * this.timing.periodMs;
    if (this.deps.clock.now() < due) return due;
    const outcome = await this.runOnce(container.id);
    if (!outcome || this.stopped) return undefined;
    this.record(outcome);
    return undefined;
  }

  private async runOnce(containerId: string): Promise<ProbeOutcome | undefined> {
    const { clock, slots, metrics } = this.deps;
    const kind = kindOf(this.target.probe);
    const waitStart = clock.now();
    const release = await slots.acquire(this.key, this.abort.signal);
    metrics.slotWaited((clock.now() - waitStart) / 1000);
    const start = clock.now();
    try {
      const outcome = await runProbe(
        {
          probe: this.target.probe,
          containerId,
          containerName: this.target.containerName,
          podIP: this.target.podIP,
          timeoutMs: this.timing.timeoutMs,
        },
        { runtime: this.deps.runtime, clock },
        this.abort.signal,
      );
      if (this.stopped) return undefined;
      metrics.probeRun(kind, outcome.result, (clock.now() - start) / 1000);
      if (outcome.result === 'error') {
        this.deps.logger.warn(
          {
            pod: `${this.target.podNamespace}/${this.target.podName}`,
            probe: this.target.probeName,
            err: outcome.message,
          },
          'probe could not run; its result is unchanged',
        );
        return undefined;
      }
      return outcome;
    } finally {
      release();
    }
  }

  private record(outcome: ProbeOutcome): void {
    const result = outcome.result === 'succeeded' ? 'succeeded' : 'failed';
    if (result === this.lastOutcome) this.run++;
    else {
      this.lastOutcome = result;
      this.run = 1;
    }
    const threshold = result === 'succeeded' ? this.timing.successThreshold : this.timing.failureThreshold;
    if (this.run < threshold) return;
    this.decide(result === 'succeeded' ? 'Succeeded' : 'Failed', outcome.message);
  }

  private resetCounts(): void {
    this.lastOutcome = undefined;
    this.run = 0;
  }

  private decide(state: ProbeState, message: string): void {
    if (this.stopped) return;
    const before = this.current;
    if (before && before.state === state && before.message === message) return;
    const now = rfc3339(this.deps.clock.now());
    const stateChanged = before?.state !== state;
    this.current = { state, message, lastProbeTime: now, changedAt: stateChanged ? now : before.changedAt };
    this.deps.onChange(this, stateChanged);
  }
}
