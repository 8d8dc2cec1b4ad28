// The kubectl plugin's entry: parse the command line, load credentials like kubectl, run the command, turn every
// failure into one line on stderr and an exit code (0 done, 1 failed, 2 bad usage).
import { ApiError } from '../kube/errors.js';
import { KubeClient } from '../kube/client.js';
import { loadConnection } from '../kube/credentials/load.js';
import { setTimeout as delay } from 'node:timers/promises';
import { systemClock, type Clock } from '../util/clock.js';
import { parsePluginCommandLine, PLUGIN_USAGE, UsageError, type GlobalOptions } from './command-line.js';
import type { PluginApi, PluginContext, PluginIo } from './context.js';
import { runIps } from './ips.js';
import { runNodeImages } from './nodeimages.js';
import { runProbes } from './probes.js';
import { runPull } from './pull.js';
import { runRecreate } from './recreate.js';
import { errorMessage } from '../util/error-message.js';

export const PLUGIN_USER_AGENT = 'kubectl-kruise-node/0.1.0';

export interface PluginDeps extends PluginIo {
  env: NodeJS.ProcessEnv;
  clock?: Clock;
  /** Make the API client (tests pass a fake); default: credentials as kubectl finds them. */
  connect?: (global: GlobalOptions) => Promise<PluginApi & { close?(): void }>;
  fetchText?: (url: string) => Promise<string>;
  pollIntervalMs?: number;
}

/** The system clock with timers that keep the process alive: following an object is all the plugin does. */
const followClock: Clock = {
  now: () => systemClock.now(),
  setTimer: (fn, ms) => {
    const t = setTimeout(fn, Math.max(0, ms));
    return { cancel: () => clearTimeout(t) };
  },
  sleep: (ms, signal) => delay(ms, undefined, signal ? { signal } : {}),
};

async function fetchText(url: string): Promise<string> {
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  const body = await res.text();
  if (!res.ok) throw new Error(`${url} answered ${res.status}`);
  return body;
}

function describe(err: unknown): string {
  if (err instanceof ApiError) return `the API server said: ${err.message}`;
  return errorMessage(err);
}

export async function runPlugin(argv: readonly string[], deps: PluginDeps): Promise<number> {
  let parsed;
  try {
    parsed = parsePluginCommandLine(argv, deps.env);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    deps.stderr.write(`kubectl kruise-node: ${err.message} (see kubectl kruise-node --help)\n`);
    return 2;
  }
  const { global, command } = parsed;
  if (command.kind === 'help') {
    deps.stdout.write(`${PLUGIN_USAGE}\n`);
    return 0;
  }
  let api: PluginApi & { close?(): void };
  try {
    api = deps.connect
      ? await deps.connect(global)
      : new KubeClient(
          await loadConnection({
            ...(global.kubeconfig !== undefined && { kubeconfig: global.kubeconfig }),
            ...(global.context !== undefined && { context: global.context }),
            env: deps.env,
          }),
          { userAgent: PLUGIN_USER_AGENT },
        );
  } catch (err) {
    deps.stderr.write(`kubectl kruise-node: ${describe(err)}\n`);
    return 1;
  }
  const ctx: PluginContext = {
    api,
    clock: deps.clock ?? followClock,
    global,
    stdout: deps.stdout,
    stderr: deps.stderr,
    fetchText: deps.fetchText ?? fetchText,
    pollIntervalMs: deps.pollIntervalMs ?? 500,
  };
  try {
    switch (command.kind) {
      case 'nodeimages':
        return await runNodeImages(ctx, command.node);
      case 'probes':
        return await runProbes(ctx, command.node);
      case 'pull':
        return await runPull(ctx, command);
      case 'recreate':
        return await runRecreate(ctx, command);
      case 'ips':
        return await runIps(ctx, command);
      default:
        return 2;
    }
  } catch (err) {
    deps.stderr.write(`kubectl kruise-node ${command.kind}: ${describe(err)}\n`);
    return 1;
  } finally {
    api.close?.();
  }
}
