// One prom-client registry per process (never the global one), so tests can build as many as they like.
import { Registry, collectDefaultMetrics } from 'prom-client';

export { Registry };

/**
 * A private registry; with `processMetrics`, Node's default process metrics under prom-client's own names
 * (`process_*`, `nodejs_*`, unprefixed in both processes: what dashboards and alerts for Node services query).
 */
export function createRegistry(options: { processMetrics?: boolean } = {}): Registry {
  const registry = new Registry();
  if (options.processMetrics) collectDefaultMetrics({ register: registry });
  return registry;
}
