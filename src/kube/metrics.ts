// The Kubernetes layer's metrics, created once per registry and prefix (kruise_daemon_ for the agent,
// kruise_controller_ for the controller), so every client, informer and queue of a process shares them.
import { Counter, Gauge, type Registry } from 'prom-client';

export interface KubeMetrics {
  apiRequests: Counter<'verb' | 'resource' | 'code'>;
  watchRestarts: Counter<'resource' | 'reason'>;
  relists: Counter<'resource' | 'reason'>;
  watchEvents: Counter<'resource' | 'type'>;
  /** Unix seconds of the last event or bookmark seen by an informer. */
  lastWatchEvent: Gauge<'resource'>;
  informerObjects: Gauge<'resource'>;
  queueAdds: Counter<'name'>;
  queueRetries: Counter<'name'>;
  queueDepth: Gauge<'name'>;
  reconcileErrors: Counter<'name'>;
  eventsDropped: Counter<'reason'>;
}

const cache = new WeakMap<Registry, Map<string, KubeMetrics>>();

export const DEFAULT_METRIC_PREFIX = 'kruise_daemon_';

export function kubeMetrics(registry: Registry, prefix: string = DEFAULT_METRIC_PREFIX): KubeMetrics {
  if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(prefix)) throw new Error(`invalid metric prefix ${JSON.stringify(prefix)}`);
  let byPrefix = cache.get(registry);
  if (!byPrefix) {
    byPrefix = new Map();
    cache.set(registry, byPrefix);
  }
  const known = byPrefix.get(prefix);
  if (known) return known;
  const registers = [registry];
  const metrics: KubeMetrics = {
    apiRequests: new Counter({
      name: `${prefix}api_requests_total`,
      help: 'Requests sent to the Kubernetes API server, by verb, resource and HTTP code ("error" when no answer)',
      labelNames: ['verb', 'resource', 'code'],
      registers,
    }),
    watchRestarts: new Counter({
      name: `${prefix}watch_restarts_total`,
      help: 'Watch streams opened again after one ended, by reason (closed, idle, error, gone)',
      labelNames: ['resource', 'reason'],
      registers,
    }),
    relists: new Counter({
      name: `${prefix}watch_relists_total`,
      help: 'Full lists made by informers, by reason (initial, gone)',
      labelNames: ['resource', 'reason'],
      registers,
    }),
    watchEvents: new Counter({
      name: `${prefix}watch_events_total`,
      help: 'Watch events received by informers, by type',
      labelNames: ['resource', 'type'],
      registers,
    }),
    lastWatchEvent: new Gauge({
      name: `${prefix}watch_last_event_timestamp_seconds`,
      help: 'When an informer last received a watch event or bookmark (unix seconds); age = now - this',
      labelNames: ['resource'],
      registers,
    }),
    informerObjects: new Gauge({
      name: `${prefix}informer_objects`,
      help: 'Objects held in informer caches',
      labelNames: ['resource'],
      registers,
    }),
    queueAdds: new Counter({
      name: `${prefix}workqueue_adds_total`,
      help: 'Keys added to work queues',
      labelNames: ['name'],
      registers,
    }),
    queueRetries: new Counter({
      name: `${prefix}workqueue_retries_total`,
      help: 'Keys re-queued with backoff after a failed reconcile',
      labelNames: ['name'],
      registers,
    }),
    queueDepth: new Gauge({
      name: `${prefix}workqueue_depth`,
      help: 'Keys waiting in work queues',
      labelNames: ['name'],
      registers,
    }),
    reconcileErrors: new Counter({
      name: `${prefix}reconcile_errors_total`,
      help: 'Reconciles that threw',
      labelNames: ['name'],
      registers,
    }),
    eventsDropped: new Counter({
      name: `${prefix}kube_events_dropped_total`,
      help: 'Kubernetes Events not sent, by reason (spam, buffer-full, error)',
      labelNames: ['reason'],
      registers,
    }),
  };
  byPrefix.set(prefix, metrics);
  return metrics;
}
