// The one way a feature of the agent starts: build its controller on the agent's shared parts (the Kubernetes client,
// the node's pod informer, the runtime connection), start it without blocking the agent's start, report in /readyz
// (and /healthz) whether it runs (a failed start names its cause; a controller with a watch also says whether it has synced), and
// stop it, then whatever it was built with, on shutdown.
import type { KubeClient } from '../kube/client.js';
import { kubeMetrics, type KubeMetrics } from '../kube/metrics.js';
import type { Logger } from '../observability/logger.js';
import type { Clock } from '../util/clock.js';
import { errorMessage } from '../util/error-message.js';
import { untilAborted } from '../util/until-aborted.js';
import type { AgentContext, AgentModule } from './agent.js';
import { nodePodsOf, type NodePods } from './node-pods.js';
import type { RuntimeHandle } from './runtime-connection.js';

export interface ModuleController {
  start(): void;
  stop(): Promise<void>;
  /** Throws until the controller's watch has synced (absent: running is enough). */
  checkSynced?(): void;
}

export interface ControllerModuleSpec<C extends RuntimeHandle> {
  /** The module's name: its logger's component and its shutdown hook. */
  name: string;
  /** What it is, for messages: "the CRR executor". */
  title: string;
  /**
   * Its readiness check (behind /readyz and /healthz): a failed start (its cause is configuration or a dependency,
   * which a restart does not fix) or a watch not synced yet (the API server's answer, not ours).
   */
  check: string;
  /** The info line once it runs. */
  running: string;
  /** Build the controller (not started) and what to close after it stops. */
  build(ctx: AgentContext<C>): Promise<{ controller: ModuleController; close?: () => Promise<void> | void }>;
}

export function controllerModule<C extends RuntimeHandle>(spec: ControllerModuleSpec<C>): AgentModule<C> {
  return {
    name: spec.name,
    start(ctx) {
      let controller: ModuleController | undefined;
      let close: (() => Promise<void> | void) | undefined;
      let setupError: string | undefined;
      ctx.readiness.add(spec.check, () => {
        if (setupError !== undefined) throw new Error(setupError);
        if (!controller) throw new Error(`${spec.title} is starting`);
        controller.checkSynced?.();
      });
      const starting = spec
        .build(ctx)
        .then((built) => {
          controller = built.controller;
          close = built.close;
          controller.start();
          ctx.logger.info(spec.running);
        })
        .catch((err: unknown) => {
          setupError = `${spec.title} cannot start: ${errorMessage(err)}`;
          ctx.logger.error({ err: setupError }, `${spec.title} not started`);
        });
      ctx.shutdown.add(spec.name, async () => {
        await starting;
        await controller?.stop();
        await close?.();
      });
    },
  };
}

/** What a controller of the node's pods is built with: the shared client and pod informer, the runtime's arrival. */
export interface NodePodControllerParts<C extends RuntimeHandle> {
  nodeName: string;
  client: KubeClient;
  pods: NodePods;
  /** Resolves with the runtime once connected (rejects when `signal` aborts first). */
  runtime: (signal: AbortSignal) => Promise<C>;
  clock: Clock;
  logger: Logger;
  kubeMetrics: KubeMetrics;
}

export async function nodePodControllerParts<C extends RuntimeHandle>(
  ctx: AgentContext<C>,
): Promise<NodePodControllerParts<C>> {
  const [client, pods] = await Promise.all([ctx.kube(), nodePodsOf(ctx)]);
  return {
    nodeName: ctx.nodeName,
    client,
    pods,
    runtime: (signal) => untilAborted(ctx.runtime.connected(), signal),
    clock: ctx.clock,
    logger: ctx.logger,
    kubeMetrics: kubeMetrics(ctx.metrics),
  };
}
