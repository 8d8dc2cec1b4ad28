// Container meta as a module of the agent: its controller on the agent's Kubernetes client, the shared pod informer
// of the node and the CRI connection; the `containerMetaRunning` readiness check and its stop hook
// (src/daemon/controller-module.ts).
import type { CriClient } from '../../cri/client.js';
import { controllerModule, nodePodControllerParts } from '../controller-module.js';
import { ContainerMetaController } from './controller.js';

export const CONTAINER_META_CHECK = 'containerMetaRunning';

export const containerMetaModule = controllerModule<CriClient>({
  name: 'containermeta',
  title: 'the container meta controller',
  check: CONTAINER_META_CHECK,
  running: 'keeping runtime container meta of this node',
  async build(ctx) {
    const controller = new ContainerMetaController(await nodePodControllerParts(ctx));
    return { controller };
  },
});
