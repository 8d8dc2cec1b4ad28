// `kruise-daemon [flags]`: parse the configuration, start the agent, run until SIGTERM/SIGINT, stop cleanly.
// Resolves with the exit code: 0 stopped cleanly, 1 failed (or a stop hook failed), 2 bad configuration.
import { connectRuntime, type CriClient } from '../cri/index.js';
import { KubeClient, kubeMetrics, loadConnection } from '../kube/index.js';
import { createLogger, type Logger } from '../observability/logger.js';
import { createRegistry } from '../observability/metrics.js';
import { startAgent, type AgentModule, type RunningAgent } from './agent.js';
import type { CommandIo } from './command-io.js';
import { containerMetaModule } from './containermeta/module.js';
import { containerRecreateModule } from './containerrecreate/module.js';
import { imagePullerModule } from './imagepuller/module.js';
import { ipReservationModule } from './ipreservation/module.js';
import { launchPriorityModule } from './launchpriority/module.js';
import { podProbeModule } from './podprobe/module.js';
import { DAEMON_USAGE, parseDaemonCommandLine, type DaemonOptions } from './options.js';
import { ConfigError } from '../util/config-error.js';
import { errorMessage } from '../util/error-message.js';
import { firstSignal } from '../util/first-signal.js';

/** The controllers the agent runs, on a real CRI client; later issues add theirs here. */
export const DAEMON_MODULES: readonly AgentModule<CriClient>[] = [
  imagePullerModule,
  ipReservationModule,
  containerRecreateModule,
  containerMetaModule,
  launchPriorityModule,
  podProbeModule,
];

/** The agent's User-Agent towards the API server (the emulator counts requests by it). */
export const DAEMON_USER_AGENT = 'kruise-daemon/0.1.0';

/** Within terminationGracePeriodSeconds (10 s in the DaemonSet), leaving time to flush logs and exit. */
export const SHUTDOWN_DEADLINE_MS = 8000;

export async function runDaemon(argv: string[], io: CommandIo, commandsHelp = ''): Promise<number> {
  let options: DaemonOptions;
  try {
    const parsed = parseDaemonCommandLine(argv, io.env);
    if (parsed.kind === 'help') {
      io.stdout.write(`${DAEMON_USAGE}\n${commandsHelp ? `\n${commandsHelp}\n` : ''}`);
      return 0;
    }
    options = parsed.options;
  } catch (err) {
    if (err instanceof ConfigError) {
      io.stderr.write(`kruise-daemon: ${err.message}\n`);
      return 2;
    }
    throw err;
  }

  const logger = createLogger('kruise-daemon', options.logLevel).child({ node: options.nodeName });
  const stopOnCrash = installCrashHandlers(logger);
  const metrics = createRegistry({ processMetrics: true });
  logger.info(
    {
      runtimeSocket: options.runtimeSocket ?? `discover under ${options.hostRunDir}`,
      kubeconfig: options.kubeconfig ?? 'in-cluster',
      nodeVersion: process.version,
    },
    'starting kruise-daemon',
  );

  let agent: RunningAgent<CriClient>;
  try {
    agent = await startAgent<CriClient>(options, {
      logger,
      metrics,
      modules: DAEMON_MODULES,
      kube: async () =>
        new KubeClient(await loadConnection({ kubeconfig: options.kubeconfig, env: io.env }), {
          metrics: kubeMetrics(metrics),
          logger: logger.child({ component: 'kube' }),
          userAgent: DAEMON_USER_AGENT,
        }),
      connectRuntime: () =>
        connectRuntime({
          socket: options.runtimeSocket,
          hostRunDir: options.hostRunDir,
          env: {}, // options already read RUNTIME_SOCKET; the flag wins over it
          registry: metrics,
          logger: logger.child({ component: 'cri' }),
        }),
    });
  } catch (err) {
    logger.fatal({ err }, 'kruise-daemon could not start');
    io.stderr.write(`kruise-daemon: cannot start: ${errorMessage(err)}\n`);
    stopOnCrash();
    return 1;
  }

  const signal = await firstSignal(logger);
  logger.info({ signal, deadlineMs: SHUTDOWN_DEADLINE_MS }, 'stopping');
  const outcome = await agent.stop(SHUTDOWN_DEADLINE_MS);
  stopOnCrash();
  if (outcome.clean) {
    logger.info('stopped');
    return 0;
  }
  logger.error({ failed: outcome.failed }, 'stopped, but some parts did not stop cleanly');
  return 1;
}

/** An error nobody caught ends the process with a fatal log line, not a bare stack trace. */
function installCrashHandlers(logger: Logger): () => void {
  const crash = (err: unknown, origin: string): void => {
    logger.fatal({ err, origin }, 'kruise-daemon crashed');
    logger.flush();
    process.exit(1);
  };
  const onException = (err: Error, origin: string): void => crash(err, origin);
  const onRejection = (reason: unknown): void => crash(reason, 'unhandledRejection');
  process.on('uncaughtException', onException);
  process.on('unhandledRejection', onRejection);
  return () => {
    process.off('uncaughtException', onException);
    process.off('unhandledRejection', onRejection);
  };
}
