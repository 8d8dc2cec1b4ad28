// The controller's own metrics (kruise_controller_*), on the process's private registry.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export interface ControllerMetrics {
  reconciles: Counter<'controller' | 'result'>;
  reconcileSeconds: Histogram<'controller'>;
  nodeImageWrites: Counter<'controller' | 'reason'>;
  tagsMarkedFailed: Counter<'reason'>;
  tagsCollected: Counter<'reason'>;
  jobs: Gauge<'kind' | 'state'>;
  secretCopies: Counter<'action'>;
  secretSourceWatches: Gauge;
  webhookRequests: Counter<'path' | 'allowed'>;
  webhookSeconds: Histogram<'path'>;
  certificateExpiry: Gauge<'certificate'>;
  webhookClientAuth: Gauge;
  webhookRefusedClients: Counter<'code'>;
  leader: Gauge;
  nodePodProbeWrites: Counter<'controller' | 'reason'>;
  nodePodProbeConflicts: Counter<'controller'>;
  podProbePodWrites: Counter<'write'>;
}

export function controllerMetrics(registry: Registry): ControllerMetrics {
  const registers = [registry];
  return {
    reconciles: new Counter({
      name: 'kruise_controller_reconciles_total',
      help: 'Reconciles by controller and result (ok, requeue, error).',
      labelNames: ['controller', 'result'],
      registers,
    }),
    reconcileSeconds: new Histogram({
      name: 'kruise_controller_reconcile_duration_seconds',
      help: 'Time one reconcile took.',
      labelNames: ['controller'],
      buckets: [0.001, 0.005, 0.02, 0.1, 0.5, 2, 10],
      registers,
    }),
    nodeImageWrites: new Counter({
      name: 'kruise_controller_nodeimage_writes_total',
      help: 'NodeImage spec/status writes by controller and reason.',
      labelNames: ['controller', 'reason'],
      registers,
    }),
    tagsMarkedFailed: new Counter({
      name: 'kruise_controller_nodeimage_tags_failed_total',
      help: 'NodeImage tags the controller marked Failed (not-responded, deadline).',
      labelNames: ['reason'],
      registers,
    }),
    tagsCollected: new Counter({
      name: 'kruise_controller_nodeimage_tags_collected_total',
      help: 'NodeImage tags removed by garbage collection (owner-gone, ttl, no-createdAt).',
      labelNames: ['reason'],
      registers,
    }),
    jobs: new Gauge({
      name: 'kruise_controller_jobs',
      help: 'Image jobs in the cache by kind and state (active, completed, deleting).',
      labelNames: ['kind', 'state'],
      registers,
    }),
    secretCopies: new Counter({
      name: 'kruise_controller_pull_secret_copies_total',
      help: 'Pull-secret copies in kruise-daemon-config created, updated, deleted.',
      labelNames: ['action'],
      registers,
    }),
    secretSourceWatches: new Gauge({
      name: 'kruise_controller_pull_secret_source_watches',
      help: 'Source pull secrets watched (one watch per secret a running ImagePullJob names).',
      registers,
    }),
    webhookRequests: new Counter({
      name: 'kruise_controller_webhook_requests_total',
      help: 'Admission requests by path and whether they were allowed.',
      labelNames: ['path', 'allowed'],
      registers,
    }),
    webhookSeconds: new Histogram({
      name: 'kruise_controller_webhook_duration_seconds',
      help: 'Time to answer one admission request.',
      labelNames: ['path'],
      buckets: [0.0005, 0.002, 0.01, 0.05, 0.25, 1],
      registers,
    }),
    certificateExpiry: new Gauge({
      name: 'kruise_controller_webhook_certificate_expiry_seconds',
      help: 'Unix time at which the webhook CA / serving certificate expires.',
      labelNames: ['certificate'],
      registers,
    }),
    webhookClientAuth: new Gauge({
      name: 'kruise_controller_webhook_client_auth',
      help: '1 when the webhooks answer only callers with a client certificate the webhook client CA signed (the API server); 0 when anyone who reaches the port is answered.',
      registers,
    }),
    webhookRefusedClients: new Counter({
      name: 'kruise_controller_webhook_refused_clients_total',
      help: 'Webhook requests refused before their body was read: 401 no client certificate, 403 one not signed by the webhook client CA or of a name not allowed.',
      labelNames: ['code'],
      registers,
    }),
    leader: new Gauge({
      name: 'kruise_controller_leader',
      help: '1 while this replica leads, else 0.',
      registers,
    }),
    nodePodProbeWrites: new Counter({
      name: 'kruise_controller_nodepodprobe_writes_total',
      help: 'NodePodProbe writes by controller and reason (create, delete, probes, prune).',
      labelNames: ['controller', 'reason'],
      registers,
    }),
    nodePodProbeConflicts: new Counter({
      name: 'kruise_controller_nodepodprobe_conflicts_total',
      help: 'NodePodProbe spec writes that met a 409 Conflict and were redone from a fresh read.',
      labelNames: ['controller'],
      registers,
    }),
    podProbePodWrites: new Counter({
      name: 'kruise_controller_podprobe_pod_writes_total',
      help: 'Pod writes for probe results: conditions, metadata (labels/annotations), cleanup (a deleted marker).',
      labelNames: ['write'],
      registers,
    }),
  };
}
