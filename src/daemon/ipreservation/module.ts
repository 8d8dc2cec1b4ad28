// IP reservation as a module of the agent (only with --ipam / --ipam-install), on the one skeleton of a feature
// (src/daemon/controller-module.ts): installs the plugin (and conflist) when asked, then runs the controller on the
// agent's CRI connection; the `ipReservationRunning` readiness check names a failed install or start and its cause,
// and the agent serves its other features meanwhile. Pod Events go through the agent's Kubernetes client; without
// one the controller still runs and only logs.
import type { CriClient } from '../../cri/client.js';
import { EventRecorder } from '../../kube/event-recorder.js';
import { CoreResources } from '../../kube/resource.js';
import type { AgentContext, AgentModule } from '../agent.js';
import { controllerModule } from '../controller-module.js';
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

export const IP_RESERVATION_CHECK = 'ipReservationRunning';

/** Install the plugin (and the conflist, with subnets) into the node's CNI directories; throws when it cannot. */
function install(ctx: AgentContext<CriClient>, ipam: IpamOptions): void {
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

/** The controller (after the install, when asked for); a failed install or start is named in /readyz. */
function ipReservationController(ipam: IpamOptions): AgentModule<CriClient> {
  return controllerModule<CriClient>({
    name: 'ipreservation',
    title: 'IP reservation',
    check: IP_RESERVATION_CHECK,
    running: 'managing kruise-ipam reservations',
    // eslint-disable-next-line @typescript-eslint/require-await -- async so that a failed install rejects (named in /readyz), not throws out of the agent's start
    async build(ctx) {
      if (ipam.install) install(ctx, ipam);
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
      ctx.logger.info({ dataDir: ipam.dataDir, install: ipam.install }, 'kruise-ipam reservation store');
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
      return { controller, close: () => recorder?.close() };
    },
  });
}

/** IP reservation runs only with --ipam / --ipam-install. */
export const ipReservationModule: AgentModule<CriClient> = {
  name: 'ipreservation',
  start(ctx) {
    const ipam = ctx.options.ipam;
    return ipam ? ipReservationController(ipam).start(ctx) : undefined;
  },
};
