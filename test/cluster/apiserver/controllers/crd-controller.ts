// Serves what CRDs define: a stored CRD registers its resources at once (synchronously, inside the write that
// stored it); a CRD being deleted stops accepting new objects, has all its objects deleted, then loses its
// cleanup finalizer and leaves; its resources stop being served and their open watches end.
import type { ApiContext } from '../context.js';
import { CRD_CLEANUP_FINALIZER, CRD_STORAGE_KEY } from '../crd/crd-resource.js';
import { customResourceTypes, storageKeyOf, summarizeCrd } from '../crd/custom-resources.js';
import type { StoreEvent } from '../store.js';
import type { KubeObject } from '../types.js';
import type { WatchHub } from '../watch-hub.js';
import { deleteRef, modifyObject } from './internal-writes.js';
import type { WorkQueue } from './work-queue.js';

export class CrdController {
  /** storage key → CRD name, for objects deleted during cleanup. */
  private readonly owners = new Map<string, string>();

  constructor(
    private readonly ctx: ApiContext,
    private readonly queue: WorkQueue,
    private readonly hub: WatchHub,
  ) {
    ctx.store.subscribe((event) => this.onEvent(event));
  }

  /** Register the resources of a stored CRD (also used when loading persisted state). */
  serve(crd: KubeObject): void {
    const summary = summarizeCrd(crd);
    const storageKey = storageKeyOf(summary);
    const { types, storage } = customResourceTypes(summary);
    this.ctx.registry.unregisterStorage(storageKey);
    this.ctx.registry.register(types, storage);
    this.owners.set(storageKey, summary.name);
    if (crd.metadata.deletionTimestamp) {
      this.ctx.terminatingStorage.add(storageKey);
      this.enqueueCleanup(summary.name);
    }
  }

  private onEvent(event: StoreEvent): void {
    if (event.storageKey === CRD_STORAGE_KEY) {
      if (event.type === 'DELETED') this.stopServing(event.object);
      else this.serve(event.object);
      return;
    }
    if (event.type === 'DELETED' && this.ctx.terminatingStorage.has(event.storageKey)) {
      const crdName = this.owners.get(event.storageKey);
      if (crdName) this.enqueueCleanup(crdName);
    }
  }

  private stopServing(crd: KubeObject): void {
    const storageKey = storageKeyOf(summarizeCrd(crd));
    this.ctx.registry.unregisterStorage(storageKey);
    this.ctx.terminatingStorage.delete(storageKey);
    this.owners.delete(storageKey);
    this.hub.closeAll(storageKey);
    this.ctx.store.dropStorageKey(storageKey);
  }

  private enqueueCleanup(name: string): void {
    this.queue.enqueue(`crd-cleanup:${name}`, () => this.cleanup(name));
  }

  private async cleanup(name: string): Promise<void> {
    const crd = this.ctx.store.get(CRD_STORAGE_KEY, '', name);
    if (!crd?.metadata.deletionTimestamp) return;
    const storageKey = storageKeyOf(summarizeCrd(crd));
    const objects = [...this.ctx.store.list(storageKey)];
    for (const obj of objects) {
      if (obj.metadata.deletionTimestamp) continue;
      await deleteRef(
        this.ctx,
        { storageKey, namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '' },
        { propagationPolicy: 'Background' },
      );
    }
    if (this.ctx.store.count(storageKey) > 0) return;
    await modifyObject(this.ctx, { storageKey: CRD_STORAGE_KEY, namespace: '', name }, (o) => {
      o.metadata.finalizers = (o.metadata.finalizers ?? []).filter((f) => f !== CRD_CLEANUP_FINALIZER);
    });
  }
}
