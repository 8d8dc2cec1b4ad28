// Container meta as a module of the agent: its controller on the agent's Kubernetes client, the shared pod informer
// of the node and the CRI connection; the `containerMetaRunning` liveness check and its stop hook
// (src/daemon/controller-module.ts).
import type { CriClient } from '../../cri/client.js';
import { kubeMetrics } from '../../kube/metrics.js';
import { untilAborted } from '../../util/until-aborted.js';
import { controllerModule } from '../controller-module.js';
import { nodePodsOf } from '../node-pods.js';
import { ContainerMetaController } from './controller.js';

export const CONTAINER_META_CHECK = 'containerMetaRunning';

export const containerMetaModule = controllerModule<CriClient>({
  name: 'containermeta',
  title: 'the container meta controller',
  check: CONTAINER_META_CHECK,
  running: 'keeping runtime container meta of this node',
  async build(ctx) {
    const [client, pods] = await Promise.all([ctx.kube(), nodePodsOf(ctx)]);
    const controller = new ContainerMetaController({
      nodeName: ctx.nodeName,
      client,
      pods,
      runtime: (signal) => untilAborted(ctx.runtime.connected(), signal),
      clock: ctx.clock,
      logger: ctx.logger,
      kubeMetrics: kubeMetrics(ctx.metrics),
    });
    return { controller };
  },
});
