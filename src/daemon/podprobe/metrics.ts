// The custom probes' metrics: runs by type and result, run latency, time waiting for a slot, status writes, workers.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { ProbeKind } from './probe-spec.js';
import type { ProbeOutcome } from './probe-actions.js';

export const POD_PROBE_RUNS_TOTAL = 'kruise_daemon_pod_probe_runs_total';
export const POD_PROBE_RUN_DURATION = 'kruise_daemon_pod_probe_run_duration_seconds';
export const POD_PROBE_SLOT_WAIT = 'kruise_daemon_pod_probe_slot_wait_seconds';
export const POD_PROBE_STATUS_WRITES_TOTAL = 'kruise_daemon_pod_probe_status_writes_total';
export const POD_PROBE_WORKERS = 'kruise_daemon_pod_probe_workers';
export const POD_PROBE_STATUS_WRITE_FAILURES = 'kruise_daemon_pod_probe_status_write_failures';
export const POD_PROBE_STATUS_CUTS_TOTAL = 'kruise_daemon_pod_probe_status_cuts_total';

/** Why a status write failed, for the metric: the kinds an operator acts on differently. */
export type StatusWriteFailure = 'too_large' | 'invalid' | 'forbidden' | 'conflict' | 'server_error' | 'other';
export const STATUS_WRITE_FAILURES: readonly StatusWriteFailure[] = [
  'too_large',
  'invalid',
  'forbidden',
  'conflict',
  'server_error',
  'other',
];

export interface PodProbeMetrics {
  probeRun(kind: ProbeKind, result: ProbeOutcome['result'], seconds: number): void;
  slotWaited(seconds: number): void;
  /** One status patch sent: ok, or error (it is retried). */
  statusWrite(outcome: 'ok' | 'error'): void;
  setWorkers(count: number): void;
  /** The status writes failed in a row now, by the last one's kind (0 for every kind after a success). */
  setStatusWriteFailures(kind: StatusWriteFailure | undefined, count: number): void;
  /** A status was cut to fit its budget (messages, no-messages, pods). */
  statusCut(cut: 'messages' | 'no-messages' | 'pods'): void;
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
  const failing = new Gauge({
    name: POD_PROBE_STATUS_WRITE_FAILURES,
    help:
      "Status writes of this node's NodePodProbe failed in a row, by the last one's kind (too_large, invalid, " +
      'forbidden, conflict, server_error, other); 0 once one succeeds. Non-zero: probe results stop reaching pods',
    labelNames: ['kind'],
    registers,
  });
  const cuts = new Counter({
    name: POD_PROBE_STATUS_CUTS_TOTAL,
    help: "NodePodProbe statuses cut to fit the agent's status budget, by what was cut (messages, no-messages, pods)",
    labelNames: ['cut'],
    registers,
  });
  for (const outcome of ['ok', 'error']) writes.inc({ outcome }, 0);
  for (const kind of STATUS_WRITE_FAILURES) failing.set({ kind }, 0);
  for (const cut of ['messages', 'no-messages', 'pods']) cuts.inc({ cut }, 0);
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
    setStatusWriteFailures(kind, count) {
      for (const k of STATUS_WRITE_FAILURES) failing.set({ kind: k }, k === kind ? count : 0);
    },
    statusCut(cut) {
      cuts.inc({ cut });
    },
  };
  perRegistry.set(registry, metrics);
  return metrics;
}
