// The CRR executor as a module of the agent: its controller on the agent's Kubernetes client, the shared pod
// informer of the node and the CRI connection; the `crrInformerSynced` readiness check and its stop hook
// (src/daemon/controller-module.ts).
import type { CriClient } from '../../cri/client.js';
import { controllerModule, nodePodControllerParts } from '../controller-module.js';
import { CrrController } from './controller.js';
import { crrMetrics } from './metrics.js';

export const CRR_SYNCED_CHECK = 'crrInformerSynced';

export const containerRecreateModule = controllerModule<CriClient>({
  name: 'containerrecreate',
  title: 'the CRR executor',
  check: CRR_SYNCED_CHECK,
  running: "executing this node's ContainerRecreateRequests",
  async build(ctx) {
    const controller = new CrrController({ ...(await nodePodControllerParts(ctx)), metrics: crrMetrics(ctx.metrics) });
    return { controller };
  },
});
