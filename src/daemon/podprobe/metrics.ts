// The custom probes' metrics: runs by type and result, run latency, time waiting for a slot, status writes, workers.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { ProbeKind } from './probe-spec.js';
import type { ProbeOutcome } from './probe-actions.js';

export const POD_PROBE_RUNS_TOTAL = 'kruise_daemon_pod_probe_runs_total';
export const POD_PROBE_RUN_DURATION = 'kruise_daemon_pod_probe_run_duration_seconds';
export const POD_PROBE_SLOT_WAIT = 'kruise_daemon_pod_probe_slot_wait_seconds';
export const POD_PROBE_STATUS_WRITES_TOTAL = 'kruise_daemon_pod_probe_status_writes_total';
export const POD_PROBE_WORKERS = 'kruise_daemon_pod_probe_workers';

export interface PodProbeMetrics {
  probeRun(kind: ProbeKind, result: ProbeOutcome['result'], seconds: number): void;
  slotWaited(seconds: number): void;
  /** One status patch sent: ok, or error (it is retried). */
  statusWrite(outcome: 'ok' | 'error'): void;
  setWorkers(count: number): void;
}

const perRegistry = new WeakMap<Registry, PodProbeMetrics>();

export function podProbeMetrics(registry: Registry): PodProbeMetrics {
  const known = perRegistry.get(registry);
  if (known) return known;
  const registers = [registry];
  const runs = new Counter({
    name: POD_PROBE_RUNS_TOTAL,
    help: 'Custom probe runs, by type (exec, httpGet, tcpSocket, grpc, none) and result (succeeded, failed, timeout, error: not run)',
    labelNames: ['type', 'result'],
    registers,
  });
  const duration = new Histogram({
    name: POD_PROBE_RUN_DURATION,
    help: 'Custom probe run latency (from its start, after its slot, to its result), seconds',
    labelNames: ['type'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  const slotWait = new Histogram({
    name: POD_PROBE_SLOT_WAIT,
    help: 'Time a custom probe run waited for one of the node-wide slots (--max-concurrent-probes), seconds',
    buckets: [0.001, 0.01, 0.1, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  const writes = new Counter({
    name: POD_PROBE_STATUS_WRITES_TOTAL,
    help: "Status patches of this node's NodePodProbe, by outcome (ok, error)",
    labelNames: ['outcome'],
    registers,
  });
  const workers = new Gauge({
    name: POD_PROBE_WORKERS,
    help: 'Custom probe workers running (one per pod, container and probe in the NodePodProbe)',
    registers,
  });
  for (const outcome of ['ok', 'error']) writes.inc({ outcome }, 0);
  workers.set(0);
  const metrics: PodProbeMetrics = {
    probeRun(kind, result, seconds) {
      runs.inc({ type: kind, result });
      duration.observe({ type: kind }, seconds);
    },
    slotWaited(seconds) {
      slotWait.observe(seconds);
    },
    statusWrite(outcome) {
      writes.inc({ outcome });
    },
    setWorkers(count) {
      workers.set(count);
    },
  };
  perRegistry.set(registry, metrics);
  return metrics;
}
