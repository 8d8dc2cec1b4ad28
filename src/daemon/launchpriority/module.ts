// Launch priority as a module of the agent: takes the shared informer over the node's pods, polls the runtime
// only for pods still waiting on a barrier, and writes barrier ConfigMaps and pod annotations.
import type { CriClient } from '../../cri/client.js';
import { EventRecorder } from '../../kube/event-recorder.js';
import { kubeMetrics } from '../../kube/metrics.js';
import type { AgentModule } from '../agent.js';
import { nodePodsOf } from '../node-pods.js';
import { KubeBarrierApi } from './barrier-api.js';
import { LaunchPriorityController } from './controller.js';
import { launchPriorityMetrics } from './metrics.js';
import { criContainerSource } from './cri-source.js';
import { RuntimePoller } from './runtime-poller.js';
import { errorMessage } from '../../util/error-message.js';

export const EVENT_SOURCE_LAUNCH_PRIORITY = 'kruise-daemon-launchpriority';

export const launchPriorityModule: AgentModule<CriClient> = {
  name: 'launchpriority',
  start(ctx) {
    let controller: LaunchPriorityController | undefined;
    let events: EventRecorder | undefined;
    const starting = Promise.all([ctx.kube(), nodePodsOf(ctx)])
      .then(([client, pods]) => {
        const metrics = kubeMetrics(ctx.metrics);
        events = new EventRecorder(client, {
          component: EVENT_SOURCE_LAUNCH_PRIORITY,
          host: ctx.nodeName,
          clock: ctx.clock,
          logger: ctx.logger,
          metrics,
        });
        const poller: RuntimePoller = new RuntimePoller({
          source: async () => criContainerSource(await ctx.runtime.connected()),
          clock: ctx.clock,
          logger: ctx.logger,
          onChange: (uid) => controller?.onRuntimeChange(uid),
        });
        controller = new LaunchPriorityController({
          pods,
          api: new KubeBarrierApi(client),
          poller,
          events,
          clock: ctx.clock,
          logger: ctx.logger,
          metrics: launchPriorityMetrics(ctx.metrics),
          kubeMetrics: metrics,
        });
        controller.start();
        ctx.logger.info('releasing launch barriers of the pods on this node');
      })
      .catch((err: unknown) => {
        ctx.logger.error({ err: errorMessage(err) }, 'launch priority not started (no Kubernetes API client)');
      });
    ctx.shutdown.add('launchpriority', async () => {
      await starting;
      await controller?.stop();
      await events?.close();
    });
  },
};
