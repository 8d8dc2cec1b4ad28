// The agent's one informer over the pods bound to its node (field selector spec.nodeName=$NODE_NAME). Every
// controller that needs the node's pods (container recreate, container meta, launch priority) takes it from
// `nodePodsOf(ctx)`: it is created and started on first use, once per agent, and stopped with the agent.
// The agent never lists pods cluster-wide.
import type { WirePod } from '../api/wire.js';
import type { KubeClient } from '../kube/client.js';
import { Informer, type InformerHandlers, type ListWatcher } from '../kube/informer/informer.js';
import type { KubeMetrics } from '../kube/metrics.js';
import { kubeMetrics } from '../kube/metrics.js';
import { CoreResources } from '../kube/resource.js';
import type { Logger } from '../observability/logger.js';
import type { Clock } from '../util/clock.js';
import type { AgentContext } from './agent.js';
import type { RuntimeHandle } from './runtime-connection.js';
import { errorMessage } from '../util/error-message.js';

/** Liveness check name registered by the shared informer. */
export const NODE_PODS_SYNCED_CHECK = 'nodePodsInformerSynced';

export interface NodePodsOptions {
  nodeName: string;
  /** A KubeClient in production; a fake list/watch in unit tests. */
  source: KubeClient | ListWatcher<WirePod>;
  clock?: Clock;
  logger?: Logger;
  metrics?: KubeMetrics;
}

/** The pods on this node, from one supervised watch. Handlers should only enqueue keys. */
export class NodePods {
  readonly informer: Informer<WirePod>;

  constructor(options: NodePodsOptions) {
    if (!options.nodeName) throw new Error('NodePods needs the node name');
    this.informer = new Informer<WirePod>(CoreResources.pods, options.source, {
      name: 'node-pods',
      fieldSelector: `spec.nodeName=${options.nodeName}`,
      clock: options.clock,
      logger: options.logger,
      metrics: options.metrics,
    });
  }

  start(): void {
    this.informer.start();
  }

  stop(): Promise<void> {
    return this.informer.stop();
  }

  get synced(): Promise<void> {
    return this.informer.synced;
  }

  hasSynced(): boolean {
    return this.informer.hasSynced();
  }

  /** The cached pod "namespace/name", or undefined. */
  get(key: string): WirePod | undefined {
    return this.informer.get(key);
  }

  addHandlers(handlers: InformerHandlers<WirePod>): () => void {
    return this.informer.addHandlers(handlers);
  }
}

// One per agent: module contexts are copies of the agent's context, but share its ShutdownHooks object.
const perAgent = new WeakMap<object, Promise<NodePods>>();

/**
 * The agent's shared NodePods, created and started on the first call (later calls get the same one). Rejects when
 * the agent has no Kubernetes client. Registers the `nodePodsInformerSynced` readiness check and a stop hook.
 */
export function nodePodsOf<C extends RuntimeHandle>(ctx: AgentContext<C>): Promise<NodePods> {
  const known = perAgent.get(ctx.shutdown);
  if (known) return known;
  let pods: NodePods | undefined;
  let setupError: string | undefined;
  ctx.readiness.add(NODE_PODS_SYNCED_CHECK, () => {
    if (setupError !== undefined) throw new Error(setupError);
    if (!pods?.hasSynced()) throw new Error("the node's pod informer has not synced yet");
  });
  const made = ctx.kube().then(
    (client) => {
      pods = new NodePods({
        nodeName: ctx.nodeName,
        source: client,
        clock: ctx.clock,
        logger: ctx.logger.child({ component: 'node-pods' }),
        metrics: kubeMetrics(ctx.metrics),
      });
      pods.start();
      return pods;
    },
    (err: unknown) => {
      setupError = `cannot watch the node's pods: ${errorMessage(err)}`;
      throw new Error(setupError);
    },
  );
  made.catch(() => undefined);
  ctx.shutdown.add('node-pods', async () => {
    await made.catch(() => undefined);
    await pods?.stop();
  });
  perAgent.set(ctx.shutdown, made);
  return made;
}
