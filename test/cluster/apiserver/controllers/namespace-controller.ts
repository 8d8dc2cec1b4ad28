// Namespace termination: once a namespace has a deletionTimestamp (status.phase Terminating), everything in it
// is deleted; when nothing is left its spec.finalizers ("kubernetes") is emptied and the namespace goes away.
// Objects with finalizers, or pods still terminating on a node, keep it Terminating, as in a real cluster.
import type { ApiContext } from '../context.js';
import type { StoreEvent } from '../store.js';
import { deleteRef, modifyObject } from './internal-writes.js';
import type { WorkQueue } from './work-queue.js';

const NAMESPACES = 'core/namespaces';

export class NamespaceController {
  constructor(
    private readonly ctx: ApiContext,
    private readonly queue: WorkQueue,
  ) {
    ctx.store.subscribe((event) => this.onEvent(event));
  }

  private onEvent(event: StoreEvent): void {
    if (event.storageKey === NAMESPACES) {
      if (event.type === 'MODIFIED' && event.object.metadata.deletionTimestamp)
        this.enqueue(event.object.metadata.name ?? '');
      return;
    }
    const ns = event.object.metadata.namespace;
    if (event.type === 'DELETED' && ns) {
      const namespace = this.ctx.store.get(NAMESPACES, '', ns);
      if (namespace?.metadata.deletionTimestamp) this.enqueue(ns);
    }
  }

  private enqueue(name: string): void {
    this.queue.enqueue(`namespace:${name}`, () => this.finalize(name));
  }

  private async finalize(name: string): Promise<void> {
    const ns = this.ctx.store.get(NAMESPACES, '', name);
    if (!ns?.metadata.deletionTimestamp) return;
    let remaining = 0;
    for (const storageKey of this.ctx.store.storageKeysInNamespace(name)) {
      for (const obj of [...this.ctx.store.list(storageKey, name)]) {
        remaining++;
        if (obj.metadata.deletionTimestamp) continue;
        await deleteRef(
          this.ctx,
          { storageKey, namespace: name, name: obj.metadata.name ?? '' },
          {
            propagationPolicy: 'Background',
          },
        );
      }
    }
    if (remaining > 0 && this.ctx.store.storageKeysInNamespace(name).length > 0) return;
    await modifyObject(this.ctx, { storageKey: NAMESPACES, namespace: '', name }, (o) => {
      const spec = typeof o.spec === 'object' && o.spec !== null ? (o.spec as Record<string, unknown>) : {};
      o.spec = { ...spec, finalizers: [] };
    });
  }
}
