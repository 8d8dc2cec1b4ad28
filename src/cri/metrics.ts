// CRI call metrics on a caller-supplied prom-client registry. Several clients may share one registry (a
// reconnecting agent, tests): the collectors are created once per registry and reused.
import { Counter, Histogram, type Registry } from 'prom-client';

export const CRI_REQUESTS_TOTAL = 'kruise_daemon_cri_requests_total';
export const CRI_REQUEST_DURATION = 'kruise_daemon_cri_request_duration_seconds';

/** Latency buckets from a cached Version (~1 ms) to a slow image pull (minutes). */
export const CRI_DURATION_BUCKETS = [
  0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600,
];

export interface CriMetrics {
  /** Record one attempt of `method` that ended with gRPC status `code` ("OK", "UNAVAILABLE"...). */
  observe(method: string, code: string, seconds: number): void;
}

export const noCriMetrics: CriMetrics = { observe: () => undefined };

const perRegistry = new WeakMap<Registry, CriMetrics>();

export function criMetrics(registry?: Registry): CriMetrics {
  if (!registry) return noCriMetrics;
  const existing = perRegistry.get(registry);
  if (existing) return existing;
  const requests =
    (registry.getSingleMetric(CRI_REQUESTS_TOTAL) as Counter<'method' | 'code'> | undefined) ??
    new Counter({
      name: CRI_REQUESTS_TOTAL,
      help: 'CRI calls (each attempt) by method and gRPC status code',
      labelNames: ['method', 'code'],
      registers: [registry],
    });
  const duration =
    (registry.getSingleMetric(CRI_REQUEST_DURATION) as Histogram<'method'> | undefined) ??
    new Histogram({
      name: CRI_REQUEST_DURATION,
      help: 'Latency of CRI calls (each attempt) by method, seconds',
      labelNames: ['method'],
      buckets: CRI_DURATION_BUCKETS,
      registers: [registry],
    });
  const metrics: CriMetrics = {
    observe(method, code, seconds) {
      requests.inc({ method, code });
      duration.observe({ method }, seconds);
    },
  };
  perRegistry.set(registry, metrics);
  return metrics;
}
