// The image puller as a module of the agent: builds the controller on the agent's Kubernetes client and CRI
// connection, registers the `nodeImageInformerSynced` liveness check and its stop hook.
import type { CriClient } from '../../cri/client.js';
import { kubeMetrics } from '../../kube/metrics.js';
import type { AgentModule } from '../agent.js';
import { ImagePullController } from './controller.js';
import { imagePullMetrics } from './metrics.js';
import type { ImageRuntime } from './tag-pull.js';
import { untilAborted } from '../../util/until-aborted.js';
import { errorMessage } from '../../util/error-message.js';

export const NODE_IMAGE_SYNCED_CHECK = 'nodeImageInformerSynced';

export const imagePullerModule: AgentModule<CriClient> = {
  name: 'imagepuller',
  start(ctx) {
    let controller: ImagePullController | undefined;
    let setupError: string | undefined;
    ctx.liveness.add(NODE_IMAGE_SYNCED_CHECK, () => {
      if (setupError !== undefined) throw new Error(setupError);
      if (!controller) throw new Error('the image puller is starting');
      controller.checkSynced();
    });
    const runtime = (signal: AbortSignal): Promise<ImageRuntime> => untilAborted(ctx.runtime.connected(), signal);
    const starting = ctx
      .kube()
      .then((client) => {
        controller = new ImagePullController({
          nodeName: ctx.nodeName,
          client,
          runtime,
          clock: ctx.clock,
          logger: ctx.logger,
          metrics: imagePullMetrics(ctx.metrics),
          kubeMetrics: kubeMetrics(ctx.metrics),
          maxParallelPulls: ctx.options.maxParallelPulls,
        });
        controller.start();
        ctx.logger.info({ maxParallelPulls: ctx.options.maxParallelPulls }, "watching this node's NodeImage");
      })
      .catch((err: unknown) => {
        setupError = `the image puller cannot reach the Kubernetes API: ${errorMessage(err)}`;
        ctx.logger.error({ err: setupError }, 'image puller not started');
      });
    ctx.shutdown.add('imagepuller', async () => {
      await starting;
      await controller?.stop();
    });
  },
};
