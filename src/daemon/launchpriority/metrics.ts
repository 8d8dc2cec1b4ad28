// The launch-priority agent's metrics (prefix kruise_daemon_launch_priority_).
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export interface LaunchPriorityMetrics {
  /** Seconds from every container of the levels above being ready to the next level's key being written. */
  observeReleaseDelay(seconds: number): void;
  released(result: 'ok' | 'error'): void;
  touched(reason: 'release' | 'retry' | 'complete'): void;
  barrierRecreated(reason: 'missing'): void;
  setPodsWaiting(n: number): void;
}

function reuse<T>(registry: Registry, name: string, make: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? make();
}

export function launchPriorityMetrics(registry: Registry): LaunchPriorityMetrics {
  const delay = reuse(
    registry,
    'kruise_daemon_launch_priority_release_delay_seconds',
    () =>
      new Histogram({
        name: 'kruise_daemon_launch_priority_release_delay_seconds',
        help: 'From every container of the higher priorities being ready (runtime start or pod status) to the next barrier key written',
        buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
        registers: [registry],
      }),
  );
  const releases = reuse(
    registry,
    'kruise_daemon_launch_priority_releases_total',
    () =>
      new Counter({
        name: 'kruise_daemon_launch_priority_releases_total',
        help: 'Barrier levels released (key written), by result',
        labelNames: ['result'],
        registers: [registry],
      }),
  );
  const touches = reuse(
    registry,
    'kruise_daemon_launch_priority_pod_touches_total',
    () =>
      new Counter({
        name: 'kruise_daemon_launch_priority_pod_touches_total',
        help: 'Pod annotation patches that make kubelet sync the pod, by reason',
        labelNames: ['reason'],
        registers: [registry],
      }),
  );
  const recreated = reuse(
    registry,
    'kruise_daemon_launch_priority_barrier_recreated_total',
    () =>
      new Counter({
        name: 'kruise_daemon_launch_priority_barrier_recreated_total',
        help: 'Barrier ConfigMaps written again because they were missing or left by an earlier pod of the same name',
        labelNames: ['reason'],
        registers: [registry],
      }),
  );
  const waiting = reuse(
    registry,
    'kruise_daemon_launch_priority_pods_waiting',
    () =>
      new Gauge({
        name: 'kruise_daemon_launch_priority_pods_waiting',
        help: 'Pods of this node whose barrier is not fully released',
        registers: [registry],
      }),
  );
  return {
    observeReleaseDelay: (s) => delay.observe(Math.max(0, s)),
    released: (result) => releases.inc({ result }),
    touched: (reason) => touches.inc({ reason }),
    barrierRecreated: (reason) => recreated.inc({ reason }),
    setPodsWaiting: (n) => waiting.set(n),
  };
}
