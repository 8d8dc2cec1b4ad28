// What the request handlers and the built-in controllers share: storage, kinds, admission, time and logging.
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../../src/observability/logger.js';
import type { Clock } from '../../../src/util/clock.js';
import { AdmissionChain } from './admission.js';
import { ResourceRegistry } from './resource-types.js';
import { ObjectStore } from './store.js';

export interface ApiContext {
  store: ObjectStore;
  registry: ResourceRegistry;
  admission: AdmissionChain;
  clock: Clock;
  logger: Logger;
  newUid(): string;
  /** Storage keys of CRDs being deleted: their objects can no longer be created. */
  terminatingStorage: Set<string>;
}

export function createApiContext(clock: Clock, logger: Logger): ApiContext {
  return {
    store: new ObjectStore((err) => logger.error({ err }, 'store listener failed')),
    registry: new ResourceRegistry(),
    admission: new AdmissionChain(),
    clock,
    logger,
    newUid: () => randomUUID(),
    terminatingStorage: new Set(),
  };
}
