// Launch priority as a module of the agent: takes the shared informer over the node's pods, polls the runtime
// only for pods still waiting on a barrier, and writes barrier ConfigMaps and pod annotations; the
// `launchPriorityRunning` readiness check and its stop hook (src/daemon/controller-module.ts).
import type { CriClient } from '../../cri/client.js';
import { EventRecorder } from '../../kube/event-recorder.js';
import { controllerModule, nodePodControllerParts } from '../controller-module.js';
import { KubeBarrierApi } from './barrier-api.js';
import { LaunchPriorityController } from './controller.js';
import { criContainerSource } from './cri-source.js';
import { launchPriorityMetrics } from './metrics.js';
import { RuntimePoller } from './runtime-poller.js';

export const EVENT_SOURCE_LAUNCH_PRIORITY = 'kruise-daemon-launchpriority';
export const LAUNCH_PRIORITY_CHECK = 'launchPriorityRunning';

export const launchPriorityModule = controllerModule<CriClient>({
  name: 'launchpriority',
  title: 'launch priority',
  check: LAUNCH_PRIORITY_CHECK,
  running: 'releasing launch barriers of the pods on this node',
  async build(ctx) {
    const { client, pods, kubeMetrics } = await nodePodControllerParts(ctx);
    const events = new EventRecorder(client, {
      component: EVENT_SOURCE_LAUNCH_PRIORITY,
      host: ctx.nodeName,
      clock: ctx.clock,
      logger: ctx.logger,
      metrics: kubeMetrics,
    });
    const sink: { controller?: LaunchPriorityController } = {};
    const poller = new RuntimePoller({
      source: async () => criContainerSource(await ctx.runtime.connected()),
      clock: ctx.clock,
      logger: ctx.logger,
      onChange: (uid) => sink.controller?.onRuntimeChange(uid),
    });
    const controller = new LaunchPriorityController({
      pods,
      api: new KubeBarrierApi(client, ctx.nodeName),
      poller,
      events,
      clock: ctx.clock,
      logger: ctx.logger,
      metrics: launchPriorityMetrics(ctx.metrics),
      kubeMetrics,
    });
    sink.controller = controller;
    return { controller, close: () => events.close() };
  },
});
