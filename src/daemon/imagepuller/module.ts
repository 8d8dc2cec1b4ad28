// The image puller as a module of the agent: its controller on the agent's Kubernetes client and CRI connection,
// the `nodeImageInformerSynced` readiness check, its stop hook (src/daemon/controller-module.ts).
import type { CriClient } from '../../cri/client.js';
import { kubeMetrics } from '../../kube/metrics.js';
import { untilAborted } from '../../util/until-aborted.js';
import { controllerModule } from '../controller-module.js';
import { ImagePullController } from './controller.js';
import { imagePullMetrics } from './metrics.js';
import type { ImageRuntime } from './tag-pull.js';
import { contentStoreFor, leaseStoreFor, pinStoreFor } from './runtime-stores.js';
import { KubeletPulls } from './kubelet-pulls.js';
import { nodePodsOf } from '../node-pods.js';

export const NODE_IMAGE_SYNCED_CHECK = 'nodeImageInformerSynced';

export const imagePullerModule = controllerModule<CriClient>({
  name: 'imagepuller',
  title: 'the image puller',
  check: NODE_IMAGE_SYNCED_CHECK,
  running: "watching this node's NodeImage",
  async build(ctx) {
    const [client, pods] = await Promise.all([ctx.kube(), nodePodsOf(ctx)]);
    const runtime = (signal: AbortSignal): Promise<ImageRuntime> => untilAborted(ctx.runtime.connected(), signal);
    ctx.logger.info({ maxParallelPulls: ctx.options.maxParallelPulls }, 'pulling at most this many images at once');
    ctx.logger.info(
      { pullCredentials: ctx.options.pullCredentialsUrl ?? 'secrets of kruise-daemon-config, read directly' },
      'pull secrets come from here',
    );
    // kubelet's pulls first: the node's pods (the shared watch) and the runtime say what kubelet is pulling
    const kubeletFirst = new KubeletPulls({
      pods: pods.informer,
      imagePresent: async (image, signal) =>
        Boolean((await (await runtime(signal)).imageStatus({ image: { image } }, { signal })).image?.id),
      clock: ctx.clock,
      logger: ctx.logger,
    });
    const controller = new ImagePullController({
      kubeletFirst,
      nodeName: ctx.nodeName,
      client,
      runtime,
      clock: ctx.clock,
      logger: ctx.logger,
      metrics: imagePullMetrics(ctx.metrics),
      kubeMetrics: kubeMetrics(ctx.metrics),
      maxParallelPulls: ctx.options.maxParallelPulls,
      disk: {
        highPercent: ctx.options.imageGcHighThresholdPercent,
        lowPercent: ctx.options.imageGcLowThresholdPercent,
        fsRoot: ctx.options.imageFsRoot,
      },
      contentStore: async (signal) => await contentStoreFor(await untilAborted(ctx.runtime.connected(), signal)),
      leaseStore: async (signal) => await leaseStoreFor(await untilAborted(ctx.runtime.connected(), signal)),
      pinStore: async (signal) => await pinStoreFor(await untilAborted(ctx.runtime.connected(), signal)),
      ...(ctx.options.pullCredentialsUrl !== undefined && { pullCredentialsUrl: ctx.options.pullCredentialsUrl }),
    });
    return { controller, close: () => kubeletFirst.stop() };
  },
});
