// The agent's link to the container runtime. Connecting is retried with backoff for as long as the agent
// runs: a node whose runtime is starting, restarting or misconfigured gets an agent that waits and says why
// on /healthz, not one that exits and crash-loops. Once connected, the CRI client reconnects by itself; the
// health check asks the runtime for its version each time so /healthz follows the runtime's state.
import { Gauge, type Registry } from 'prom-client';
import type { Logger } from '../observability/logger.js';
import { systemClock, type Clock } from '../util/clock.js';
import { backoffDelay, type BackoffPolicy } from '../util/backoff.js';
import { errorMessage } from '../util/error-message.js';

/** What the agent needs of a CRI client here (src/cri's CriClient has it). */
export interface RuntimeHandle {
  readonly socketPath: string;
  version(): Promise<unknown>;
  close(): unknown;
}

export interface RuntimeConnectionOptions<C extends RuntimeHandle> {
  /** One connection attempt (discovery included); rejects with the reason when no runtime answers. */
  connect: () => Promise<C>;
  logger: Logger;
  clock?: Clock;
  random?: () => number;
  /** Gets the gauge kruise_daemon_runtime_connected. */
  registry?: Registry;
}

/** Connecting to the runtime: 1 s, doubling, at most 30 s, jittered. */
export const RUNTIME_CONNECT_BACKOFF: BackoffPolicy = { initialMs: 1000, maxMs: 30_000 };

type State<C> =
  | { kind: 'idle' }
  | { kind: 'connecting'; failures: number; lastError?: string; nextAttemptAt?: number }
  | { kind: 'connected'; client: C }
  | { kind: 'closed' };

export class RuntimeConnection<C extends RuntimeHandle> {
  private state: State<C> = { kind: 'idle' };
  private readonly stop = new AbortController();
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly connectedGauge: Gauge | undefined;
  private readonly waiters: Array<{ resolve: (client: C) => void; reject: (err: Error) => void }> = [];
  private loop: Promise<void> | undefined;

  constructor(private readonly options: RuntimeConnectionOptions<C>) {
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.connectedGauge = options.registry
      ? new Gauge({
          name: 'kruise_daemon_runtime_connected',
          help: 'Whether the agent has connected to the container runtime (1) or is still trying (0)',
          registers: [options.registry],
        })
      : undefined;
    this.connectedGauge?.set(0);
  }

  /** Start connecting in the background (once). */
  start(): void {
    if (this.state.kind !== 'idle') return;
    this.state = { kind: 'connecting', failures: 0 };
    this.loop = this.connectLoop();
  }

  /** The client once connected. */
  get client(): C | undefined {
    return this.state.kind === 'connected' ? this.state.client : undefined;
  }

  /** Resolves with the client when connected (for controllers that start after the runtime answers). */
  connected(): Promise<C> {
    if (this.state.kind === 'connected') return Promise.resolve(this.state.client);
    if (this.state.kind === 'closed') return Promise.reject(new Error('runtime connection closed'));
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  /** Health check: passes when the runtime answers Version; otherwise throws saying why. */
  readonly check = async (): Promise<void> => {
    const state = this.state;
    switch (state.kind) {
      case 'connected':
        try {
          await state.client.version();
        } catch (err) {
          throw new Error(`runtime at ${state.client.socketPath} does not answer: ${messageOf(err)}`);
        }
        return;
      case 'connecting': {
        if (state.lastError === undefined) throw new Error('connecting to the container runtime');
        const next =
          state.nextAttemptAt === undefined
            ? 'retrying now'
            : `next attempt in ${Math.max(0, Math.ceil((state.nextAttemptAt - this.clock.now()) / 1000))} s`;
        throw new Error(
          `no container runtime yet (${state.failures} failed attempt${state.failures === 1 ? '' : 's'}, ${next}): ${state.lastError}`,
        );
      }
      case 'idle':
        throw new Error('runtime connection not started');
      case 'closed':
        throw new Error('runtime connection closed (shutting down)');
    }
  };

  /** Stop retrying and close the client. */
  async close(): Promise<void> {
    const state = this.state;
    this.state = { kind: 'closed' };
    this.stop.abort(new Error('runtime connection closed'));
    for (const waiter of this.waiters.splice(0)) waiter.reject(new Error('runtime connection closed'));
    await this.loop;
    if (state.kind === 'connected') await state.client.close();
    this.connectedGauge?.set(0);
  }

  private async connectLoop(): Promise<void> {
    const { logger } = this.options;
    let failures = 0;
    while (!this.stop.signal.aborted) {
      let client: C;
      try {
        client = await this.options.connect();
      } catch (err) {
        if (this.stop.signal.aborted) return;
        failures++;
        const delay = backoffDelay(RUNTIME_CONNECT_BACKOFF, failures, this.random);
        const lastError = messageOf(err);
        this.state = { kind: 'connecting', failures, lastError, nextAttemptAt: this.clock.now() + delay };
        logger.warn({ failures, retryInMs: delay, err: lastError }, 'container runtime not reachable; will retry');
        try {
          await this.clock.sleep(delay, this.stop.signal);
        } catch {
          return; // closed while waiting
        }
        if (this.stop.signal.aborted) return;
        this.state = { kind: 'connecting', failures, lastError };
        continue;
      }
      if (this.stop.signal.aborted) {
        // close() was called while this attempt was in flight: the client is ours to close.
        await client.close();
        return;
      }
      this.state = { kind: 'connected', client };
      this.connectedGauge?.set(1);
      logger.info({ socket: client.socketPath, attempts: failures + 1 }, 'connected to the container runtime');
      for (const waiter of this.waiters.splice(0)) waiter.resolve(client);
      return;
    }
  }
}

function messageOf(err: unknown): string {
  const text = errorMessage(err);
  return text.replace(/\s*\n\s*/g, '; ');
}
