// The custom probes as a module of the agent (on unless --pod-probe=false, OpenKruise's PodProbeMarkerGate): the
// controller of this node's NodePodProbe on the agent's Kubernetes client and CRI connection, the
// `nodePodProbeInformerSynced` readiness check (OpenKruise's name), the `nodePodProbeStatusWrites` readiness check
// (fails while status writes keep failing, with the cause) and its stop hook (src/daemon/controller-module.ts).
import type { CriClient } from '../../cri/client.js';
import type { AgentModule } from '../agent.js';
import { kubeMetrics } from '../../kube/metrics.js';
import { untilAborted } from '../../util/until-aborted.js';
import { controllerModule } from '../controller-module.js';
import { NODE_POD_PROBE_STATUS_WRITES_CHECK, PodProbeController } from './controller.js';
import { podProbeMetrics } from './metrics.js';

export const NODE_POD_PROBE_SYNCED_CHECK = 'nodePodProbeInformerSynced';

const podProbeController = controllerModule<CriClient>({
  name: 'podprobe',
  title: 'the custom probes',
  check: NODE_POD_PROBE_SYNCED_CHECK,
  running: "running the custom probes of this node's NodePodProbe",
  async build(ctx) {
    // no pod informer: the NodePodProbe names the pods, the runtime has their containers
    const client = await ctx.kube();
    ctx.logger.info(
      { maxConcurrentProbes: ctx.options.maxConcurrentProbes, statusWindowMs: ctx.options.probeStatusWindowMs },
      'custom probes: at most this many runs at once, results written at most once per window',
    );
    const controller = new PodProbeController({
      nodeName: ctx.nodeName,
      client,
      runtime: (signal) => untilAborted(ctx.runtime.connected(), signal),
      clock: ctx.clock,
      logger: ctx.logger,
      metrics: podProbeMetrics(ctx.metrics),
      kubeMetrics: kubeMetrics(ctx.metrics),
      maxConcurrentProbes: ctx.options.maxConcurrentProbes,
      statusWindowMs: ctx.options.probeStatusWindowMs,
    });
    ctx.readiness.add(NODE_POD_PROBE_STATUS_WRITES_CHECK, controller.checkStatusWrites);
    return { controller };
  },
});

/** Custom probes run unless --pod-probe=false. */
export const podProbeModule: AgentModule<CriClient> = {
  name: 'podprobe',
  start(ctx) {
    return ctx.options.podProbe ? podProbeController.start(ctx) : undefined;
  },
};
