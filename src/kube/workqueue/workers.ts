// Workers that take keys from a WorkQueue and reconcile them: a result may ask for a later requeue; a throw retries
// the key with its backoff; success forgets the key's backoff.
import type { Logger } from 'pino';
import { silentLogger } from '../../observability/logger.js';
import { errorMessage } from '../../util/error-message.js';
import type { KubeMetrics } from '../metrics.js';
import type { WorkQueue } from './queue.js';

export interface ReconcileResult {
  /** Process the key again after this many ms (waiting for something that is not watched). */
  requeueAfter?: number;
}

export type Reconcile<K> = (key: K) => Promise<ReconcileResult | void> | ReconcileResult | void;

export interface RunWorkersOptions {
  logger?: Logger;
  metrics?: KubeMetrics | undefined;
}

/**
 * Run `n` workers until the queue shuts down and drains. Resolves when every worker has stopped.
 */
export async function runWorkers<K>(
  queue: WorkQueue<K>,
  n: number,
  reconcile: Reconcile<K>,
  options: RunWorkersOptions = {},
): Promise<void> {
  if (!Number.isInteger(n) || n < 1) throw new Error(`runWorkers needs a positive worker count (got ${n})`);
  const logger = options.logger ?? silentLogger;
  const worker = async (): Promise<void> => {
    for (;;) {
      const key = await queue.get();
      if (key === undefined) return;
      try {
        const result = await reconcile(key);
        if (result?.requeueAfter !== undefined && result.requeueAfter > 0) {
          queue.forget(key);
          queue.addAfter(key, result.requeueAfter);
        } else {
          queue.forget(key);
        }
      } catch (err) {
        options.metrics?.reconcileErrors.inc({ name: queue.name });
        logger.warn(
          { queue: queue.name, key: String(key), err: errorMessage(err), retries: queue.numRequeues(key) },
          'reconcile failed; retrying with backoff',
        );
        queue.addRateLimited(key);
      } finally {
        queue.done(key);
      }
    }
  };
  await Promise.all(Array.from({ length: n }, () => worker()));
}
