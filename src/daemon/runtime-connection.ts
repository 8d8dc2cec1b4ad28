// The agent's link to the container runtime. Connecting is retried with backoff for as long as the agent
// runs: a node whose runtime is starting, restarting or misconfigured gets an agent that waits and says why
// on /readyz, not one that exits and crash-loops. Once connected, the CRI client reconnects by itself, and a
// background loop asks the runtime for its version (every 5 s while it answers, every second while it does not, 2 s
// deadline) and keeps the last answer: the readiness check `runtime` reads that answer, so a probe never waits on
// the runtime. The liveness check `runtimeLoop` says only whether this loop itself still turns (what a restart can
// fix); a runtime that is down is not a reason to restart the agent.
import { Gauge, type Registry } from 'prom-client';
import type { Logger } from '../observability/logger.js';
import { systemClock, type Clock } from '../util/clock.js';
import { backoffDelay, type BackoffPolicy } from '../util/backoff.js';
import { errorMessage } from '../util/error-message.js';

/** What the agent needs of a CRI client here (src/cri's CriClient has it). */
export interface RuntimeHandle {
  readonly socketPath: string;
  version(request?: Record<string, never>, options?: { timeoutMs?: number; signal?: AbortSignal }): Promise<unknown>;
  close(): unknown;
}

export interface RuntimeConnectionOptions<C extends RuntimeHandle> {
  /** One connection attempt (discovery included); rejects with the reason when no runtime answers. */
  connect: () => Promise<C>;
  logger: Logger;
  clock?: Clock;
  random?: () => number;
  /** Gets the gauges kruise_daemon_runtime_connected and kruise_daemon_runtime_answering. */
  registry?: Registry;
}

/** Connecting to the runtime: 1 s, doubling, at most 30 s, jittered. */
export const RUNTIME_CONNECT_BACKOFF: BackoffPolicy = { initialMs: 1000, maxMs: 30_000 };

/** Once connected, how often the runtime is asked for its version, and how long it has to answer. */
export const RUNTIME_WATCH = {
  /** Between two questions while the runtime answers. */
  answeringEveryMs: 5000,
  /** Between two questions while it does not: its return is seen within about a second. */
  silentEveryMs: 1000,
  /** The deadline of one Version call. */
  deadlineMs: 2000,
  /**
   * A connection attempt or a Version call still under way after this long means the loop itself is stuck (a bug
   * in this process, which a restart fixes): the liveness check fails.
   */
  stuckAfterMs: 60_000,
} as const;

/** The runtime's last known answer once connected. */
interface Answer {
  answering: boolean;
  /** When it last changed. */
  since: number;
  /** Why it does not answer. */
  reason?: string;
}

type State<C> =
  | { kind: 'idle' }
  | { kind: 'connecting'; failures: number; lastError?: string; nextAttemptAt?: number }
  | { kind: 'connected'; client: C; answer: Answer }
  | { kind: 'closed' };

export class RuntimeConnection<C extends RuntimeHandle> {
  private state: State<C> = { kind: 'idle' };
  private readonly stop = new AbortController();
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly connectedGauge: Gauge | undefined;
  private readonly answeringGauge: Gauge | undefined;
  /** When the loop's current step (a connection attempt, a Version call) began; undefined while it waits. */
  private stepStartedAt: number | undefined;
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
    this.answeringGauge = options.registry
      ? new Gauge({
          name: 'kruise_daemon_runtime_answering',
          help: 'Whether the container runtime answered the last Version call (1) or not (0)',
          registers: [options.registry],
        })
      : undefined;
    this.connectedGauge?.set(0);
    this.answeringGauge?.set(0);
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

  /**
   * Readiness check: passes when the runtime answered its last Version call; otherwise throws saying why and since
   * when. Reads the state the background loop keeps: never calls the runtime.
   */
  readonly check = (): void => {
    const state = this.state;
    switch (state.kind) {
      case 'connected': {
        const { answer } = state;
        if (answer.answering) return;
        const seconds = Math.max(0, Math.round((this.clock.now() - answer.since) / 1000));
        throw new Error(
          `runtime at ${state.client.socketPath} does not answer (for ${seconds} s): ${answer.reason ?? 'unknown'}`,
        );
      }
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

  /**
   * Liveness check: fails only when the loop that connects to the runtime and follows its answers is stuck (one
   * step under way for longer than RUNTIME_WATCH.stuckAfterMs), which a restart of the agent fixes.
   */
  readonly checkLoop = (): void => {
    const started = this.stepStartedAt;
    if (started === undefined) return;
    const ms = this.clock.now() - started;
    if (ms > RUNTIME_WATCH.stuckAfterMs) {
      throw new Error(`the runtime loop has been stuck in one step for ${Math.round(ms / 1000)} s`);
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
    this.answeringGauge?.set(0);
  }

  private async connectLoop(): Promise<void> {
    const { logger } = this.options;
    let failures = 0;
    while (!this.stop.signal.aborted) {
      let client: C;
      try {
        this.stepStartedAt = this.clock.now();
        client = await this.options.connect();
      } catch (err) {
        this.stepStartedAt = undefined;
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
      this.stepStartedAt = undefined;
      if (this.stop.signal.aborted) {
        // close() was called while this attempt was in flight: the client is ours to close.
        await client.close();
        return;
      }
      this.state = { kind: 'connected', client, answer: { answering: true, since: this.clock.now() } };
      this.connectedGauge?.set(1);
      this.answeringGauge?.set(1);
      logger.info({ socket: client.socketPath, attempts: failures + 1 }, 'connected to the container runtime');
      for (const waiter of this.waiters.splice(0)) waiter.resolve(client);
      await this.watchLoop(client);
      return;
    }
  }

  /** Ask the connected runtime for its version, again and again, keeping its last answer (until closed). */
  private async watchLoop(client: C): Promise<void> {
    const { logger } = this.options;
    for (;;) {
      const current = this.state;
      if (current.kind !== 'connected') return;
      try {
        await this.clock.sleep(
          current.answer.answering ? RUNTIME_WATCH.answeringEveryMs : RUNTIME_WATCH.silentEveryMs,
          this.stop.signal,
        );
      } catch {
        return; // closed while waiting
      }
      let reason: string | undefined;
      this.stepStartedAt = this.clock.now();
      try {
        await client.version({}, { timeoutMs: RUNTIME_WATCH.deadlineMs, signal: this.stop.signal });
      } catch (err) {
        reason = messageOf(err);
      } finally {
        this.stepStartedAt = undefined;
      }
      const state = this.state;
      if (state.kind !== 'connected' || this.stop.signal.aborted) return;
      const answering = reason === undefined;
      const before = state.answer;
      if (answering === before.answering) {
        // still down: keep `since`, but show the latest reason
        if (reason !== undefined) state.answer = { ...before, reason };
        continue;
      }
      const now = this.clock.now();
      state.answer = reason === undefined ? { answering, since: now } : { answering, since: now, reason };
      this.answeringGauge?.set(answering ? 1 : 0);
      if (answering) {
        logger.info(
          { socket: client.socketPath, silentMs: now - before.since },
          'the container runtime answers again; ready',
        );
      } else {
        logger.warn({ socket: client.socketPath, err: reason }, 'the container runtime does not answer; not ready');
      }
    }
  }
}

function messageOf(err: unknown): string {
  const text = errorMessage(err);
  return text.replace(/\s*\n\s*/g, '; ');
}
