// The node agent's wiring: the status server first (so /livez, /readyz and /healthz answer from the start), then the runtime
// connection (retried in the background), then the controllers ("modules"). Each part registers its health
// checks and its shutdown hook; stop() runs the hooks last-started-first within one deadline.
import type { Registry } from 'prom-client';
import type { KubeClient } from '../kube/client.js';
import type { Logger } from '../observability/logger.js';
import { systemClock, type Clock } from '../util/clock.js';
import { HealthRegistry } from '../observability/health.js';
import type { DaemonOptions } from './options.js';
import { RuntimeConnection, type RuntimeHandle } from './runtime-connection.js';
import { ShutdownHooks, type ShutdownOutcome } from './shutdown.js';
import { StatusServer, type BoundAddress } from '../observability/status-server.js';

/** What a controller of the agent gets when it starts. */
export interface AgentContext<C extends RuntimeHandle = RuntimeHandle> {
  options: DaemonOptions;
  nodeName: string;
  logger: Logger;
  metrics: Registry;
  clock: Clock;
  /**
   * Checks behind /livez (and /readyz, /healthz): only what a restart of the agent fixes, its own loops turning.
   * A failing one makes kubelet restart the agent. Never a dependency (runtime, API server).
   */
  liveness: HealthRegistry;
  /** Checks behind /readyz and /healthz: dependencies and progress, e.g. `runtime`, `nodeImageInformerSynced`. */
  readiness: HealthRegistry;
  /** Add the controller's stop function here; hooks run last-added-first on SIGTERM. */
  shutdown: ShutdownHooks;
  /** The runtime: `await runtime.connected()` before the first CRI call. */
  runtime: RuntimeConnection<C>;
  /** The Kubernetes API client shared by the controllers (made on first use; rejects without credentials). */
  kube: () => Promise<KubeClient>;
}

/** A controller of the agent (image puller, CRR executor, ...). start() must not block on long work. */
export interface AgentModule<C extends RuntimeHandle = RuntimeHandle> {
  name: string;
  start(context: AgentContext<C>): void | Promise<void>;
}

export interface AgentDependencies<C extends RuntimeHandle> {
  logger: Logger;
  metrics: Registry;
  /** One attempt to connect to the runtime (discovery included). */
  connectRuntime: () => Promise<C>;
  clock?: Clock;
  modules?: ReadonlyArray<AgentModule<C>>;
  /** Makes the Kubernetes API client (loads credentials); called at most once, on first use. */
  kube?: () => Promise<KubeClient>;
}

export interface RunningAgent<C extends RuntimeHandle> {
  address: BoundAddress;
  context: AgentContext<C>;
  /** Stop everything (idempotent); the outcome says whether every hook finished in time. */
  stop(deadlineMs: number): Promise<ShutdownOutcome>;
}

export async function startAgent<C extends RuntimeHandle>(
  options: DaemonOptions,
  deps: AgentDependencies<C>,
): Promise<RunningAgent<C>> {
  const clock = deps.clock ?? systemClock;
  const logger = deps.logger;
  const liveness = new HealthRegistry({ clock });
  const readiness = new HealthRegistry({ clock });
  const shutdown = new ShutdownHooks(clock);

  readiness.add('shutdown', () => {
    if (shutdown.started) throw new Error('the agent is shutting down');
  });

  const server = new StatusServer({ liveness, readiness, metrics: deps.metrics, logger });
  const address = await server.listen(options.listen);
  shutdown.add('status-server', () => server.close());
  logger.info({ address: address.host, port: address.port }, 'serving /livez, /readyz, /healthz and /metrics');

  try {
    const runtime = new RuntimeConnection<C>({
      connect: deps.connectRuntime,
      logger: logger.child({ component: 'runtime' }),
      clock,
      registry: deps.metrics,
    });
    readiness.add('runtime', runtime.check);
    liveness.add('runtimeLoop', runtime.checkLoop);
    shutdown.add('runtime', () => runtime.close());
    runtime.start();

    let kubeClient: Promise<KubeClient> | undefined;
    const kube = (): Promise<KubeClient> => {
      kubeClient ??= deps.kube ? deps.kube() : Promise.reject(new Error('no Kubernetes API client configured'));
      return kubeClient;
    };
    // closed after the controllers (hooks run last-added-first), so they can flush their last writes
    shutdown.add('kube-client', async () => {
      if (kubeClient) (await kubeClient.catch(() => undefined))?.close();
    });

    const context: AgentContext<C> = {
      options,
      nodeName: options.nodeName,
      logger,
      metrics: deps.metrics,
      clock,
      liveness,
      readiness,
      shutdown,
      runtime,
      kube,
    };

    for (const module of deps.modules ?? []) {
      await module.start({ ...context, logger: logger.child({ component: module.name }) });
      logger.debug({ module: module.name }, 'started');
    }
    return { address, context, stop: (deadlineMs) => shutdown.run(logger, deadlineMs) };
  } catch (err) {
    // Whatever started before the failure is stopped before the error goes up.
    await shutdown.run(logger, 5000);
    throw err;
  }
}
