// The one object of this node a feature watches and writes the status of (its NodeImage, its NodePodProbe): what to
// build the next status on, and the status patch itself. After our patch the informer's cache may still hold the
// version before it, so the object the patch returned is used until the cache shows our write
// (OwnWriteExpectations); the patch is conditional on the resourceVersion it was built on (patchStatus).
import type { Informer } from '../kube/informer/informer.js';
import type { KubeClient } from '../kube/client.js';
import { isNotFound } from '../kube/errors.js';
import { OwnWriteExpectations } from '../kube/own-writes.js';
import type { ResourceType } from '../kube/resource.js';
import { patchStatus, type PatchStatusResult, type StatusObject } from '../kube/status-patch.js';
import type { Logger } from '../observability/logger.js';
import type { Clock } from '../util/clock.js';

export interface OwnNodeObjectOptions<T extends StatusObject> {
  client: KubeClient;
  rt: ResourceType;
  /** The object's name (the node's). */
  name: string;
  informer: Informer<T>;
  clock: Clock;
  logger: Logger;
}

export class OwnNodeObject<T extends StatusObject> {
  private lastPatched: T | undefined;
  private readonly ownWrites: OwnWriteExpectations;

  constructor(private readonly options: OwnNodeObjectOptions<T>) {
    this.ownWrites = new OwnWriteExpectations(options.clock);
    this.ownWrites.follow(options.informer, (obj) => obj.metadata?.name ?? '');
  }

  /** The freshest copy we know: the cache, or the object our last patch returned while the cache predates it. */
  current(): T | undefined {
    const cached = this.options.informer.get(this.options.name);
    const patched = this.lastPatched;
    if (!cached) return undefined;
    if (!patched || patched.metadata?.uid !== cached.metadata?.uid) return cached;
    if (!this.ownWrites.isFresh(this.options.name, cached.metadata?.resourceVersion)) return patched;
    this.lastPatched = undefined;
    return cached;
  }

  /** The object is gone (or replaced): forget what we wrote to it. */
  forget(): void {
    this.lastPatched = undefined;
    this.ownWrites.forget(this.options.name);
  }

  /**
   * Patch the status built by `mutate` on the current object (nothing sent when unchanged; undefined when there is
   * no object, or it was deleted meanwhile: the watch will tell).
   */
  async patchStatus(mutate: (draft: T) => T['status'] | void): Promise<PatchStatusResult<T> | undefined> {
    const base = this.current();
    if (!base) return undefined;
    const result = await patchStatus(this.options.client, this.options.rt, base, mutate, {
      logger: this.options.logger,
    }).catch((err: unknown) => {
      if (isNotFound(err)) return undefined;
      throw err;
    });
    if (result?.patched) {
      this.lastPatched = result.object;
      this.ownWrites.expect(this.options.name, result.object.metadata?.resourceVersion);
    }
    return result;
  }
}
