// IP reservation as a module of the agent (only with --ipam / --ipam-install): installs the plugin (and conflist)
// when asked, then runs the controller on the agent's CRI connection. Pod Events go through the agent's
// Kubernetes client; without one the controller still runs and only logs.
import type { CriClient } from '../../cri/client.js';
import { EventRecorder } from '../../kube/event-recorder.js';
import { CoreResources } from '../../kube/resource.js';
import type { AgentContext, AgentModule } from '../agent.js';
import { IpReservationController, type PodEventSink } from './controller.js';
import { installConflist, installPluginBundled } from './install.js';
import { ipamMetrics } from './metrics.js';
import type { IpamOptions } from './options.js';

/** Pod Events through the recorder: the pod is named by namespace, name and (when known) UID. */
export function podEvents(recorder: EventRecorder): PodEventSink {
  return {
    event(pod, type, reason, message) {
      recorder.event(
        { apiVersion: 'v1', kind: 'Pod', metadata: { namespace: pod.namespace, name: pod.name, uid: pod.uid } },
        type,
        reason,
        message,
        CoreResources.pods,
      );
    },
  };
}

export function startIpReservation(ctx: AgentContext<CriClient>, ipam: IpamOptions): IpReservationController {
  if (ipam.install) {
    const plugin = installPluginBundled(ipam.cniBinDir, {
      copyNode: ipam.installMode === 'copy',
      onFallback: (why) => ctx.logger.warn({ why }, 'cannot bundle the plugin; installing its module tree'),
    });
    ctx.logger.info(
      {
        path: plugin.path,
        entry: plugin.entry,
        bundled: plugin.bundled,
        changed: plugin.changed,
        mode: ipam.installMode,
      },
      'kruise-ipam plugin installed',
    );
    if (ipam.subnets.length > 0) {
      const conf = installConflist(ipam.cniConfDir, {
        networkName: ipam.networkName,
        bridge: ipam.bridge,
        subnets: ipam.subnets,
        dataDir: ipam.dataDir,
      });
      ctx.logger.info({ path: conf.path, changed: conf.changed }, 'kruise-ipam conflist installed');
    }
  }
  let recorder: EventRecorder | undefined;
  const events: PodEventSink = { event: (...args) => (recorder ? podEvents(recorder).event(...args) : undefined) };
  ctx
    .kube()
    .then((client) => {
      recorder = new EventRecorder(client, {
        component: 'kruise-daemon',
        host: ctx.nodeName,
        clock: ctx.clock,
        logger: ctx.logger,
      });
    })
    .catch((err: unknown) => {
      ctx.logger.warn({ err }, 'no Kubernetes API client: IP reservation events are only logged');
    });
  const controller = new IpReservationController({
    dataDir: ipam.dataDir,
    clock: ctx.clock,
    logger: ctx.logger,
    metrics: ipamMetrics(ctx.metrics),
    runtime: () => ctx.runtime.connected(),
    events,
    gcIntervalMs: ipam.gcIntervalMs,
    gcGraceMs: ipam.gcGraceMs,
  });
  controller.start();
  ctx.shutdown.add('ipreservation', async () => {
    await controller.stop();
    await recorder?.close();
  });
  return controller;
}

export const ipReservationModule: AgentModule<CriClient> = {
  name: 'ipreservation',
  start(ctx) {
    const ipam = ctx.options.ipam;
    if (!ipam) return;
    startIpReservation(ctx, ipam);
    ctx.logger.info({ dataDir: ipam.dataDir, install: ipam.install }, 'managing kruise-ipam reservations');
  },
};
