// One controller's queue and workers: keys in, reconcile out, with the reconcile counted and timed. Controllers
// add keys from their informer handlers; start() runs the workers, stop() drains them.
import type { Logger } from 'pino';
import type { KubeMetrics } from '../../kube/metrics.js';
import { WorkQueue } from '../../kube/workqueue/queue.js';
import { runWorkers, type ReconcileResult } from '../../kube/workqueue/workers.js';
import type { Clock } from '../../util/clock.js';
import type { ControllerMetrics } from './metrics.js';

export interface ControllerLoopOptions {
  name: string;
  workers: number;
  clock: Clock;
  logger: Logger;
  metrics: ControllerMetrics;
  kubeMetrics?: KubeMetrics;
  reconcile(key: string): Promise<ReconcileResult | void>;
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

  start(): void {
    const { name, metrics, clock } = this.options;
    this.running ??= runWorkers(
      this.queue,
      this.options.workers,
      async (key) => {
        const started = clock.now();
        try {
          const result = await this.options.reconcile(key);
          metrics.reconciles.inc({ controller: name, result: result ? 'requeue' : 'ok' });
          return result;
        } catch (err) {
          metrics.reconciles.inc({ controller: name, result: 'error' });
          throw err;
        } finally {
          metrics.reconcileSeconds.observe({ controller: name }, (clock.now() - started) / 1000);
        }
      },
      { logger: this.options.logger, metrics: this.options.kubeMetrics },
    );
  }

  async stop(): Promise<void> {
    this.queue.shutDown();
    await this.running;
  }
}
