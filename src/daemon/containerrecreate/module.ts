// The CRR executor as a module of the agent: its controller on the agent's Kubernetes client, the shared pod
// informer of the node and the CRI connection; the `crrInformerSynced` liveness check and its stop hook
// (src/daemon/controller-module.ts).
import type { CriClient } from '../../cri/client.js';
import { kubeMetrics } from '../../kube/metrics.js';
import { untilAborted } from '../../util/until-aborted.js';
import { controllerModule } from '../controller-module.js';
import { nodePodsOf } from '../node-pods.js';
import { CrrController } from './controller.js';
import { crrMetrics } from './metrics.js';

export const CRR_SYNCED_CHECK = 'crrInformerSynced';

export const containerRecreateModule = controllerModule<CriClient>({
  name: 'containerrecreate',
  title: 'the CRR executor',
  check: CRR_SYNCED_CHECK,
  running: "executing this node's ContainerRecreateRequests",
  async build(ctx) {
    const [client, pods] = await Promise.all([ctx.kube(), nodePodsOf(ctx)]);
    const controller = new CrrController({
      nodeName: ctx.nodeName,
      client,
      pods,
      runtime: (signal) => untilAborted(ctx.runtime.connected(), signal),
      clock: ctx.clock,
      logger: ctx.logger,
      metrics: crrMetrics(ctx.metrics),
      kubeMetrics: kubeMetrics(ctx.metrics),
    });
    return { controller };
  },
});
