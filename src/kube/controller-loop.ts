// The one controller skeleton: informer handlers add keys, a work queue dedupes and rate-limits them, workers
// reconcile them (a result may ask for a later look, a throw retries the key with its backoff). Optionally each
// reconcile is counted and timed. start() runs the workers, stop() shuts the queue down and waits for them.
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

export interface ControllerLoopOptions {
  /** Names the queue in metrics and the controller in the reconcile metrics. */
  name: string;
  workers: number;
  clock: Clock;
  logger: Logger;
  /** Count and time each reconcile here (the controller's kruise_controller_reconcile*; the agent has none). */
  metrics?: ReconcileMetrics;
  kubeMetrics?: KubeMetrics;
  reconcile: Reconcile<string>;
}

export class ControllerLoop {
  readonly queue: WorkQueue<string>;
  private running?: Promise<void>;

  constructor(private readonly options: ControllerLoopOptions) {
    this.queue = new WorkQueue<string>({ name: options.name, clock: options.clock, metrics: options.kubeMetrics });
  }

  add(key: string): void {
    this.queue.add(key);
  }

  addAfter(key: string, ms: number): void {
    this.queue.addAfter(key, ms);
  }

  /** Run the workers (once; later calls do nothing). */
  start(): void {
    const { name, metrics, clock, reconcile } = this.options;
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
    this.running ??= runWorkers(this.queue, this.options.workers, counted, {
      logger: this.options.logger,
      metrics: this.options.kubeMetrics,
    });
  }

  /** Shut the queue down and wait for the workers to finish what they hold. */
  async stop(): Promise<void> {
    this.queue.shutDown();
    await this.running;
  }
}
