// The one controller skeleton: informer handlers add keys, a work queue dedupes and rate-limits them, workers
// reconcile them (a result may ask for a later look, a throw retries the key with its backoff). Optionally each
// reconcile is counted and timed. Handler registrations given to watch() are removed by stop(); start() runs the
// workers, stop() shuts the queue down and waits for them.
import type { Logger } from 'pino';
import type { Counter, Histogram } from 'prom-client';
import type { Clock } from '../util/clock.js';
import type { KubeMetrics } from './metrics.js';
import { WorkQueue } from './workqueue/queue.js';
import { runWorkers, type Reconcile } from './workqueue/workers.js';

/** Reconciles by controller and result (ok, requeue, error), and how long each took. */
export interface ReconcileMetrics {
  reconciles: Counter<'controller' | 'result'>;
  reconcileSeconds: Histogram<'controller'>;
}

/** What a loop is built with (a controller's options carry these); `workers` defaults to 3. */
export interface ControllerLoopParts {
  workers?: number | undefined;
  clock: Clock;
  logger: Logger;
  /** Count and time each reconcile here (the controller's kruise_controller_reconcile*; the agent has none). */
  metrics?: ReconcileMetrics | undefined;
  kubeMetrics?: KubeMetrics | undefined;
}

export class ControllerLoop {
  readonly queue: WorkQueue<string>;
  /** The controller's logger: every line says `controller: <name>`. */
  readonly logger: Logger;
  private readonly removers: (() => void)[] = [];
  private running?: Promise<void>;
  private stopRequested = false;

  /** `name` names the queue in metrics, the controller in the reconcile metrics and in log lines. */
  constructor(
    private readonly name: string,
    private readonly parts: ControllerLoopParts,
    private readonly reconcile: Reconcile<string>,
  ) {
    this.logger = parts.logger.child({ controller: name });
    this.queue = new WorkQueue<string>({ name, clock: parts.clock, metrics: parts.kubeMetrics });
  }

  /** Keep informer handler registrations (addHandlers' removers) until stop(). */
  watch(...removeHandlers: (() => void)[]): void {
    this.removers.push(...removeHandlers);
  }

  add(key: string): void {
    this.queue.add(key);
  }

  addAfter(key: string, ms: number): void {
    this.queue.addAfter(key, ms);
  }

  /** Run the workers (once; later calls do nothing). */
  start(): void {
    const { name, reconcile } = this;
    const { metrics, clock } = this.parts;
    const counted: Reconcile<string> = metrics
      ? async (key) => {
          const started = clock.now();
          try {
            const result = await reconcile(key);
            metrics.reconciles.inc({ controller: name, result: result ? 'requeue' : 'ok' });
            return result;
          } catch (err) {
            metrics.reconciles.inc({ controller: name, result: 'error' });
            throw err;
          } finally {
            metrics.reconcileSeconds.observe({ controller: name }, (clock.now() - started) / 1000);
          }
        }
      : reconcile;
    this.running ??= runWorkers(this.queue, this.parts.workers ?? 3, counted, {
      logger: this.logger,
      metrics: this.parts.kubeMetrics,
    });
  }

  /** stop() was called: a reconcile doing long work (one write after another) may end early and leave the rest. */
  get stopping(): boolean {
    return this.stopRequested;
  }

  /** Remove the handlers, shut the queue down and wait for the workers to finish what they hold. */
  async stop(): Promise<void> {
    this.stopRequested = true;
    for (const remove of this.removers.splice(0)) remove();
    this.queue.shutDown();
    await this.running;
  }
}
