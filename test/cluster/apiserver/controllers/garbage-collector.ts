// Garbage collection through ownerReferences (by uid), as kube-controller-manager's garbage collector does:
//  - an object whose owners are all gone is deleted (Background propagation: after the owner is gone);
//  - a dependent that still has a live owner only loses the reference to the gone one;
//  - an owner deleted with Foreground waits (finalizer foregroundDeletion) until its dependents are gone;
//  - an owner deleted with Orphan (finalizer orphan) first strips its reference from every dependent.
import type { ApiContext } from '../context.js';
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER } from '../handlers/delete.js';
import type { ObjectRef, StoreEvent } from '../store.js';
import type { KubeObject, OwnerReference } from '../types.js';
import { deleteRef, modifyObject, refOf } from './internal-writes.js';
import type { WorkQueue } from './work-queue.js';

function ownerRefs(obj: KubeObject): OwnerReference[] {
  return Array.isArray(obj.metadata.ownerReferences) ? obj.metadata.ownerReferences : [];
}

function refKey(ref: ObjectRef): string {
  return `${ref.storageKey}/${ref.namespace}/${ref.name}`;
}

export class GarbageCollector {
  constructor(
    private readonly ctx: ApiContext,
    private readonly queue: WorkQueue,
  ) {
    ctx.store.subscribe((event) => this.onEvent(event));
  }

  /** Is the owner present, and visible to this dependent (same namespace, or cluster-scoped)? */
  private ownerAlive(dependent: KubeObject, uid: string): boolean {
    const found = this.ctx.store.findByUid(uid);
    if (!found) return false;
    const ownerNs = found.object.metadata.namespace ?? '';
    return ownerNs === '' || ownerNs === (dependent.metadata.namespace ?? '');
  }

  private onEvent(event: StoreEvent): void {
    const obj = event.object;
    if (event.type === 'DELETED') {
      const uid = obj.metadata.uid;
      if (uid) {
        for (const dep of this.ctx.store.dependentsOf(uid)) this.enqueueDependent(dep);
      }
      for (const owner of ownerRefs(event.prev ?? obj)) {
        const found = this.ctx.store.findByUid(owner.uid);
        if (found?.object.metadata.deletionTimestamp) this.enqueueOwner(found.ref);
      }
      return;
    }
    if (ownerRefs(obj).some((r) => !this.ownerAlive(obj, r.uid))) this.enqueueDependent(refOf(event.storageKey, obj));
    const finalizers = obj.metadata.finalizers ?? [];
    if (
      obj.metadata.deletionTimestamp &&
      (finalizers.includes(FOREGROUND_FINALIZER) || finalizers.includes(ORPHAN_FINALIZER))
    ) {
      this.enqueueOwner(refOf(event.storageKey, obj));
    }
  }

  private enqueueDependent(ref: ObjectRef): void {
    this.queue.enqueue(`gc-dependent:${refKey(ref)}`, () => this.processDependent(ref));
  }

  private enqueueOwner(ref: ObjectRef): void {
    this.queue.enqueue(`gc-owner:${refKey(ref)}`, () => this.processOwner(ref));
  }

  /** A dependent with gone owners: drop the dangling references, or delete it when no owner is left. */
  private async processDependent(ref: ObjectRef): Promise<void> {
    const obj = this.ctx.store.get(ref.storageKey, ref.namespace, ref.name);
    if (!obj) return;
    const refs = ownerRefs(obj);
    const dangling = refs.filter((r) => !this.ownerAlive(obj, r.uid));
    if (dangling.length === 0) return;
    if (dangling.length === refs.length) {
      if (!obj.metadata.deletionTimestamp) await deleteRef(this.ctx, ref, { propagationPolicy: 'Background' });
      return;
    }
    const gone = new Set(dangling.map((r) => r.uid));
    await modifyObject(this.ctx, ref, (o) => {
      o.metadata.ownerReferences = ownerRefs(o).filter((r) => !gone.has(r.uid));
    });
  }

  /** An owner being deleted with Foreground or Orphan propagation. */
  private async processOwner(ref: ObjectRef): Promise<void> {
    const owner = this.ctx.store.get(ref.storageKey, ref.namespace, ref.name);
    if (!owner?.metadata.deletionTimestamp || !owner.metadata.uid) return;
    const uid = owner.metadata.uid;
    const finalizers = owner.metadata.finalizers ?? [];
    const dependents = this.ctx.store.dependentsOf(uid);
    if (finalizers.includes(ORPHAN_FINALIZER)) {
      for (const dep of dependents) {
        await modifyObject(this.ctx, dep, (o) => {
          o.metadata.ownerReferences = ownerRefs(o).filter((r) => r.uid !== uid);
          if (o.metadata.ownerReferences.length === 0) delete o.metadata.ownerReferences;
        });
      }
      await this.dropFinalizer(ref, ORPHAN_FINALIZER);
      return;
    }
    if (finalizers.includes(FOREGROUND_FINALIZER)) {
      for (const dep of dependents) {
        const obj = this.ctx.store.get(dep.storageKey, dep.namespace, dep.name);
        if (obj && !obj.metadata.deletionTimestamp) await deleteRef(this.ctx, dep, { propagationPolicy: 'Foreground' });
      }
      if (this.ctx.store.dependentsOf(uid).length === 0) await this.dropFinalizer(ref, FOREGROUND_FINALIZER);
    }
  }

  private async dropFinalizer(ref: ObjectRef, finalizer: string): Promise<void> {
    await modifyObject(this.ctx, ref, (o) => {
      o.metadata.finalizers = (o.metadata.finalizers ?? []).filter((f) => f !== finalizer);
      if (o.metadata.finalizers.length === 0) delete o.metadata.finalizers;
    });
  }
}
