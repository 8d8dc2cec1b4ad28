// Pods bound to a Node that is deleted are deleted at once (gracePeriodSeconds=0), as kube-controller-manager's
// pod garbage collector does for orphaned pods: nothing is left to finish them.
import type { ApiContext } from '../context.js';
import type { StoreEvent } from '../store.js';
import { deleteRef } from './internal-writes.js';
import type { WorkQueue } from './work-queue.js';

const NODES = 'core/nodes';
const PODS = 'core/pods';

export class PodGarbageCollector {
  constructor(
    private readonly ctx: ApiContext,
    private readonly queue: WorkQueue,
  ) {
    ctx.store.subscribe((event) => this.onEvent(event));
  }

  private onEvent(event: StoreEvent): void {
    if (event.storageKey === NODES && event.type === 'DELETED') {
      const node = event.object.metadata.name ?? '';
      this.queue.enqueue(`podgc:${node}`, () => this.deletePodsOf(node));
    }
  }

  private async deletePodsOf(node: string): Promise<void> {
    if (this.ctx.store.get(NODES, '', node)) return;
    const pods = [...this.ctx.store.list(PODS)].filter(
      (p) => (p.spec as { nodeName?: unknown } | undefined)?.nodeName === node,
    );
    for (const pod of pods) {
      await deleteRef(
        this.ctx,
        { storageKey: PODS, namespace: pod.metadata.namespace ?? '', name: pod.metadata.name ?? '' },
        { gracePeriodSeconds: 0 },
      );
    }
  }
}
