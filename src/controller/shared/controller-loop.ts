// One controller's queue and workers: keys in, reconcile out, with the reconcile counted and timed. Controllers
// add keys from their informer handlers (registered through watch(), removed by stop()); start() runs the workers,
// stop() drains them.
import type { Logger } from 'pino';
import type { EventRecorder } from '../../kube/event-recorder.js';
import type { KubeClient } from '../../kube/client.js';
import type { KubeMetrics } from '../../kube/metrics.js';
import { WorkQueue } from '../../kube/workqueue/queue.js';
import { runWorkers, type ReconcileResult } from '../../kube/workqueue/workers.js';
import type { Clock } from '../../util/clock.js';
import type { ControllerMetrics } from './metrics.js';

/** What every controller is built with (its options carry these); `workers` defaults to 3. */
export interface ControllerLoopParts {
  workers?: number;
  clock: Clock;
  logger: Logger;
  metrics: ControllerMetrics;
  kubeMetrics?: KubeMetrics;
}

/** The loop's parts plus the API client and the event recorder: what every controller's options start with. */
export interface ControllerParts extends ControllerLoopParts {
  client: KubeClient;
  events: EventRecorder;
}

export class ControllerLoop {
  readonly queue: WorkQueue<string>;
  /** The controller's logger: every line says `controller: <name>`. */
  readonly logger: Logger;
  private readonly removers: (() => void)[] = [];
  private running?: Promise<void>;

  constructor(
    private readonly name: string,
    private readonly parts: ControllerLoopParts,
    private readonly reconcile: (key: string) => Promise<ReconcileResult | void>,
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

  start(): void {
    const { name } = this;
    const { metrics, clock } = this.parts;
    this.running ??= runWorkers(
      this.queue,
      this.parts.workers ?? 3,
      async (key) => {
        const started = clock.now();
        try {
          const result = await this.reconcile(key);
          metrics.reconciles.inc({ controller: name, result: result ? 'requeue' : 'ok' });
          return result;
        } catch (err) {
          metrics.reconciles.inc({ controller: name, result: 'error' });
          throw err;
        } finally {
          metrics.reconcileSeconds.observe({ controller: name }, (clock.now() - started) / 1000);
        }
      },
      { logger: this.logger, metrics: this.parts.kubeMetrics },
    );
  }

  /** Removes the handlers, then drains the queue and waits for the workers. */
  async stop(): Promise<void> {
    for (const remove of this.removers.splice(0)) remove();
    this.queue.shutDown();
    await this.running;
  }
}
