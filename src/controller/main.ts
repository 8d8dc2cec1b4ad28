// `kruise-controller [flags]`: serve the admission webhooks (every replica), campaign for the Lease, and run the
// controllers while leading. Resolves with the exit code: 0 stopped cleanly, 1 failed or lost the lease, 2 bad
// configuration.
import { hostname } from 'node:os';
import { HealthRegistry } from '../observability/health.js';
import { StatusServer } from '../observability/status-server.js';
import { EventRecorder } from '../kube/event-recorder.js';
import { KubeClient } from '../kube/client.js';
import { loadConnection } from '../kube/credentials/load.js';
import { KubeLeaseLock, LeaderElector } from '../kube/leader-election.js';
import { kubeMetrics } from '../kube/metrics.js';
import { createLogger } from '../observability/logger.js';
import { createRegistry } from '../observability/metrics.js';
import { systemClock } from '../util/clock.js';
import { firstSignal } from '../util/first-signal.js';
import { startControllers, type RunningControllers } from './controllers.js';
import { CONTROLLER_USAGE, parseControllerCommandLine, type ControllerOptions } from './options.js';
import { controllerMetrics } from './shared/metrics.js';
import { startWebhooks, type RunningWebhooks } from './admission/start.js';
import { PullCredentialsEndpoint } from './pullcredentials/endpoint.js';
import { ConfigError } from '../util/config-error.js';

export const CONTROLLER_USER_AGENT = 'kruise-controller/0.1.0';
const SHUTDOWN_DEADLINE_MS = 10_000;

export interface ControllerIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
}

export async function runController(argv: string[], io: ControllerIo): Promise<number> {
  let options: ControllerOptions;
  try {
    const parsed = parseControllerCommandLine(argv, io.env);
    if (parsed.kind === 'help') {
      io.stdout.write(`${CONTROLLER_USAGE}\n`);
      return 0;
    }
    options = parsed.options;
  } catch (err) {
    if (err instanceof ConfigError) {
      io.stderr.write(`kruise-controller: ${err.message}\n`);
      return 2;
    }
    throw err;
  }

  const logger = createLogger('kruise-controller', options.logLevel);
  const registry = createRegistry({ processMetrics: true });
  const metrics = controllerMetrics(registry);
  const kube = kubeMetrics(registry, 'kruise_controller_');
  const clock = systemClock;
  let client: KubeClient;
  try {
    client = new KubeClient(await loadConnection({ kubeconfig: options.kubeconfig, env: io.env }), {
      metrics: kube,
      logger: logger.child({ component: 'kube' }),
      userAgent: CONTROLLER_USER_AGENT,
    });
  } catch (err) {
    io.stderr.write(`kruise-controller: cannot load credentials: ${(err as Error).message}\n`);
    return 2;
  }
  const events = new EventRecorder(client, { component: 'kruise-controller', clock, logger });
  // /livez: what a restart fixes (no check today: the status server answering is the process alive); /readyz and
  // /healthz: the webhooks configured, the caches synced, not stopping. Each check reads state, none calls the API.
  const liveness = new HealthRegistry();
  const readiness = new HealthRegistry();
  let stopping = false;
  readiness.add('not-stopping', () => {
    if (stopping) throw new Error('shutting down');
  });

  let webhooks: RunningWebhooks | undefined;
  const credentials = options.pullCredentials.enabled
    ? new PullCredentialsEndpoint({
        client,
        clock,
        logger: logger.child({ component: 'pull-credentials' }),
        kubeMetrics: kube,
        host: options.pullCredentials.host,
        port: options.pullCredentials.port,
        agentServiceAccount: options.pullCredentials.agentServiceAccount,
      })
    : undefined;
  const status = new StatusServer({ liveness, readiness, metrics: registry, logger });
  try {
    const bound = await status.listen(options.addr);
    logger.info({ addr: `${bound.host}:${bound.port}`, namespace: options.namespace }, 'kruise-controller starting');
    if (options.webhook.enabled) {
      // not ready until the webhooks serve (before, /readyz answered 200 while they were still starting)
      readiness.add('webhook', () => {
        if (!webhooks) throw new Error('webhooks starting');
        webhooks.check();
      });
      webhooks = await startWebhooks({
        client,
        options,
        clock,
        logger: logger.child({ component: 'webhook' }),
        metrics,
        onCertificates: (certs) => credentials?.certificates(certs),
      });
    }
    if (credentials) {
      await credentials.start();
      readiness.add('pull-credentials', () => {
        const reason = credentials.notReady();
        if (reason !== undefined) throw new Error(reason);
      });
    }
  } catch (err) {
    logger.fatal({ err }, 'kruise-controller could not start');
    io.stderr.write(`kruise-controller: cannot start: ${(err as Error).message}\n`);
    await webhooks?.stop();
    await credentials?.stop();
    await status.close();
    client.close();
    return 1;
  }

  let controllers: RunningControllers | undefined;
  const settings = options;
  const lead = (): void => {
    metrics.leader.set(1);
    controllers = startControllers(settings, { client, events, clock, logger, metrics, kubeMetrics: kube });
  };
  // readiness, not liveness: caches sync when the API server answers, which a restart does not make happen
  readiness.add('informers', () => {
    if (controllers && !controllers.informersSynced()) throw new Error('caches not synced yet');
  });

  let elector: LeaderElector | undefined;
  let leadership: Promise<void> | undefined;
  if (options.leaderElect) {
    elector = new LeaderElector({
      lock: new KubeLeaseLock(client, options.namespace, options.leaderElectionId),
      identity: options.identity || hostname(),
      leaseDurationMs: options.leaseDurationMs,
      renewDeadlineMs: options.renewDeadlineMs,
      retryPeriodMs: options.retryPeriodMs,
      logger,
      callbacks: {
        onStartedLeading: lead,
        onStoppedLeading: () => metrics.leader.set(0),
        onNewLeader: (identity) => logger.info({ leader: identity }, 'leader observed'),
      },
    });
    leadership = elector.run();
  } else {
    lead();
  }

  const outcome = await Promise.race([
    firstSignal(logger).then((signal) => ({ kind: 'signal' as const, signal })),
    (leadership ?? new Promise<never>(() => undefined)).then(() => ({ kind: 'lost' as const })),
  ]);
  stopping = true;
  const lost = outcome.kind === 'lost';
  if (lost) logger.error('leadership lost; exiting so that a new leader starts from a clean state');
  else logger.info({ signal: outcome.signal }, 'stopping');
  const deadline = setTimeout(() => {
    logger.error('shutdown deadline passed; exiting');
    logger.flush();
    process.exit(1);
  }, SHUTDOWN_DEADLINE_MS);
  deadline.unref();
  await controllers?.stop();
  await elector?.stop();
  await webhooks?.stop();
  await credentials?.stop();
  await events.close();
  await status.close();
  client.close();
  clearTimeout(deadline);
  logger.info('stopped');
  return lost ? 1 : 0;
}
