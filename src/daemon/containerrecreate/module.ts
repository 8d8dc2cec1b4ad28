// The CRR executor as a module of the agent: takes the agent's Kubernetes client, the shared pod informer of the
// node and the CRI connection; registers the `crrInformerSynced` liveness check and its stop hook.
import type { CriClient } from '../../cri/client.js';
import { kubeMetrics } from '../../kube/metrics.js';
import type { AgentModule } from '../agent.js';
import { nodePodsOf } from '../node-pods.js';
import { untilAborted } from '../../util/until-aborted.js';
import { CrrController } from './controller.js';
import { crrMetrics } from './metrics.js';
import { errorMessage } from '../../util/error-message.js';

export const CRR_SYNCED_CHECK = 'crrInformerSynced';

export const containerRecreateModule: AgentModule<CriClient> = {
  name: 'containerrecreate',
  start(ctx) {
    let controller: CrrController | undefined;
    let setupError: string | undefined;
    ctx.liveness.add(CRR_SYNCED_CHECK, () => {
      if (setupError !== undefined) throw new Error(setupError);
      if (!controller) throw new Error('the CRR executor is starting');
      controller.checkSynced();
    });
    const starting = Promise.all([ctx.kube(), nodePodsOf(ctx)])
      .then(([client, pods]) => {
        controller = new CrrController({
          nodeName: ctx.nodeName,
          client,
          pods,
          runtime: (signal) => untilAborted(ctx.runtime.connected(), signal),
          clock: ctx.clock,
          logger: ctx.logger,
          metrics: crrMetrics(ctx.metrics),
          kubeMetrics: kubeMetrics(ctx.metrics),
        });
        controller.start();
        ctx.logger.info("executing this node's ContainerRecreateRequests");
      })
      .catch((err: unknown) => {
        setupError = `the CRR executor cannot start: ${errorMessage(err)}`;
        ctx.logger.error({ err: setupError }, 'CRR executor not started');
      });
    ctx.shutdown.add('containerrecreate', async () => {
      await starting;
      await controller?.stop();
    });
  },
};
