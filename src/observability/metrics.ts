// One prom-client registry per process (never the global one), so tests can build as many as they like.
import { Registry, collectDefaultMetrics } from 'prom-client';

export { Registry };

/** A private registry; with `processMetrics`, Node's default process metrics under the given prefix. */
export function createRegistry(options: { processMetrics?: boolean; prefix?: string } = {}): Registry {
  const registry = new Registry();
  if (options.processMetrics) {
    collectDefaultMetrics({ register: registry, prefix: options.prefix ?? '' });
  }
  return registry;
}
