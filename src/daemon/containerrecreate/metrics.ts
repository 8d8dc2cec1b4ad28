// The CRR executor's metrics (kruise_daemon_crr_*).
import { Counter, Histogram, type Registry } from 'prom-client';

export interface CrrMetrics {
  containersStopped: Counter<'result'>;
  completed: Counter<'result'>;
  /** Seconds from the CRR's arrival in the agent's cache to StopContainer for its first container. */
  reactionSeconds: Histogram;
}

const cache = new WeakMap<Registry, CrrMetrics>();

export function crrMetrics(registry: Registry): CrrMetrics {
  const known = cache.get(registry);
  if (known) return known;
  const registers = [registry];
  const metrics: CrrMetrics = {
    containersStopped: new Counter({
      name: 'kruise_daemon_crr_containers_stopped_total',
      help: 'Containers stopped for ContainerRecreateRequests, by result (ok, error, gone: removed by kubelet before the stop)',
      labelNames: ['result'],
      registers,
    }),
    completed: new Counter({
      name: 'kruise_daemon_crr_completed_total',
      help: 'ContainerRecreateRequests the agent completed, by result (succeeded, failed, invalid)',
      labelNames: ['result'],
      registers,
    }),
    reactionSeconds: new Histogram({
      name: 'kruise_daemon_crr_reaction_seconds',
      help: "Seconds from a CRR's arrival in the agent's watch cache to the stop of its first container (before its preStop hook, if any)",
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    }),
  };
  cache.set(registry, metrics);
  return metrics;
}
