// The Kubernetes layer: light credentials loading, a typed REST client, informers, a work queue, status patching,
// events and leader election. Nothing here loads client-node's generated API at run time (see docs/adr/0001).
export * from './object.js';
export * from './errors.js';
export * from './resource.js';
export * from './metrics.js';
export * from './credentials/connection.js';
export * from './credentials/kubeconfig.js';
export * from './credentials/in-cluster.js';
export * from './credentials/load.js';
export * from './transport.js';
export * from './watch-stream.js';
export * from './client.js';
export * from './informer/store.js';
export * from './informer/informer.js';
export * from './workqueue/rate-limiter.js';
export * from './workqueue/queue.js';
export * from './workqueue/workers.js';
export * from './own-writes.js';
export * from './controller-loop.js';
export * from './fresh-update.js';
export * from './merge-patch.js';
export * from './status-patch.js';
export * from './event-recorder.js';
export * from './leader-election.js';
