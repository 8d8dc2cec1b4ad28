// Container meta as a module of the agent: the shared pod informer of the node, the CRI connection, the client.
import type { CriClient } from '../../cri/client.js';
import { kubeMetrics } from '../../kube/metrics.js';
import type { AgentModule } from '../agent.js';
import { nodePodsOf } from '../node-pods.js';
import { untilAborted } from '../../util/until-aborted.js';
import { ContainerMetaController } from './controller.js';
import { errorMessage } from '../../util/error-message.js';

export const containerMetaModule: AgentModule<CriClient> = {
  name: 'containermeta',
  start(ctx) {
    let controller: ContainerMetaController | undefined;
    const starting = Promise.all([ctx.kube(), nodePodsOf(ctx)])
      .then(([client, pods]) => {
        controller = new ContainerMetaController({
          nodeName: ctx.nodeName,
          client,
          pods,
          runtime: (signal) => untilAborted(ctx.runtime.connected(), signal),
          clock: ctx.clock,
          logger: ctx.logger,
          kubeMetrics: kubeMetrics(ctx.metrics),
        });
        controller.start();
        ctx.logger.info('keeping runtime container meta of this node');
      })
      .catch((err: unknown) => {
        ctx.logger.error({ err: errorMessage(err) }, 'container meta controller not started');
      });
    ctx.shutdown.add('containermeta', async () => {
      await starting;
      await controller?.stop();
    });
  },
};
