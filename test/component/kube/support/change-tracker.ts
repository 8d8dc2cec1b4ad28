// Records what an informer's handlers were told, per object and resourceVersion, to check that every change was
// delivered once and only once and that the cache ends equal to the server's state.
import assert from 'node:assert/strict';
import type { Informer } from '../../../../src/kube/informer/informer.js';
import { objectKey, type KubeObject } from '../../../../src/kube/object.js';

export interface Delivery {
  type: 'add' | 'update' | 'delete';
  key: string;
  rv: string;
}

export class ChangeTracker {
  readonly deliveries: Delivery[] = [];

  attach(informer: Informer<KubeObject>): void {
    const note = (type: Delivery['type'], o: KubeObject): void => {
      this.deliveries.push({ type, key: objectKey(o), rv: o.metadata?.resourceVersion ?? '' });
    };
    informer.addHandlers({
      onAdd: (o) => note('add', o),
      onUpdate: (_old, o) => note('update', o),
      onDelete: (o) => note('delete', o),
    });
  }

  /** No object state (key + resourceVersion) was handed over twice, and no object was deleted twice in a row. */
  assertNoDuplicates(): void {
    const seen = new Set<string>();
    for (const d of this.deliveries.filter((x) => x.type !== 'delete')) {
      const id = `${d.key}@${d.rv}`;
      assert.ok(!seen.has(id), `delivered twice: ${id}`);
      seen.add(id);
    }
    const alive = new Set<string>();
    for (const d of this.deliveries) {
      if (d.type === 'delete') {
        assert.ok(alive.has(d.key), `delete of ${d.key} without it being present (or deleted twice)`);
        alive.delete(d.key);
      } else if (d.type === 'add') {
        assert.ok(!alive.has(d.key), `add of ${d.key} while present`);
        alive.add(d.key);
      } else {
        assert.ok(alive.has(d.key), `update of ${d.key} while absent`);
      }
    }
  }

  /** Every written state (key@rv, deletes by key) reached the handlers. */
  assertDelivered(written: Delivery[]): void {
    const got = new Set(
      this.deliveries.map((d) =>
        d.type === 'delete' ? `delete ${d.key}#${this.deletesBefore(d)}` : `${d.key}@${d.rv}`,
      ),
    );
    const deleteCounts = new Map<string, number>();
    for (const w of written) {
      if (w.type === 'delete') {
        const n = deleteCounts.get(w.key) ?? 0;
        deleteCounts.set(w.key, n + 1);
        assert.ok(got.has(`delete ${w.key}#${n}`), `delete #${n} of ${w.key} not delivered`);
      } else {
        assert.ok(got.has(`${w.key}@${w.rv}`), `change ${w.key}@${w.rv} (${w.type}) not delivered`);
      }
    }
  }

  private deletesBefore(d: Delivery): number {
    let n = 0;
    for (const x of this.deliveries) {
      if (x === d) return n;
      if (x.type === 'delete' && x.key === d.key) n++;
    }
    return n;
  }

  /** The state the handlers were left believing: key → resourceVersion. */
  believed(): Map<string, string> {
    const state = new Map<string, string>();
    for (const d of this.deliveries) {
      if (d.type === 'delete') state.delete(d.key);
      else state.set(d.key, d.rv);
    }
    return state;
  }
}
