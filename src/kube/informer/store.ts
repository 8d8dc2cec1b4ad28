// The informer's cache: objects by key ("namespace/name"), with optional indexes (by namespace, by a label, ...).
import { objectKey, type KubeObject } from '../object.js';

/** Values an object is filed under in one index (an object may be under several, or none). */
export type IndexFunc<T> = (obj: T) => string[];

/** The usual name of the byNamespace index. */
export const NAMESPACE_INDEX = 'namespace';
export const byNamespace: IndexFunc<KubeObject> = (obj) => (obj.metadata?.namespace ? [obj.metadata.namespace] : []);

/** Index by the value of one label. */
export function byLabel(label: string): IndexFunc<KubeObject> {
  return (obj) => {
    const v = obj.metadata?.labels?.[label];
    return v === undefined ? [] : [v];
  };
}

export class Store<T extends KubeObject> {
  private readonly items = new Map<string, T>();
  private readonly indexes = new Map<string, Map<string, Set<string>>>();

  constructor(private readonly indexers: Record<string, IndexFunc<T>> = {}) {
    for (const name of Object.keys(indexers)) this.indexes.set(name, new Map());
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  has(key: string): boolean {
    return this.items.has(key);
  }

  list(): T[] {
    return [...this.items.values()];
  }

  keys(): string[] {
    return [...this.items.keys()];
  }

  get size(): number {
    return this.items.size;
  }

  /** Objects filed under `value` in the index `indexName`. */
  byIndex(indexName: string, value: string): T[] {
    const index = this.indexes.get(indexName);
    if (!index) throw new Error(`no index named ${JSON.stringify(indexName)}`);
    const keys = index.get(value);
    if (!keys) return [];
    return [...keys].map((k) => this.items.get(k)).filter((o): o is T => o !== undefined);
  }

  /** Store `obj`; returns the object it replaced. */
  set(obj: T): T | undefined {
    const key = objectKey(obj);
    const old = this.items.get(key);
    if (old) this.unindex(key, old);
    this.items.set(key, obj);
    this.index(key, obj);
    return old;
  }

  delete(key: string): T | undefined {
    const old = this.items.get(key);
    if (!old) return undefined;
    this.unindex(key, old);
    this.items.delete(key);
    return old;
  }

  private index(key: string, obj: T): void {
    for (const [name, fn] of Object.entries(this.indexers)) {
      const index = this.indexes.get(name) as Map<string, Set<string>>;
      for (const value of fn(obj)) {
        let set = index.get(value);
        if (!set) index.set(value, (set = new Set()));
        set.add(key);
      }
    }
  }

  private unindex(key: string, obj: T): void {
    for (const [name, fn] of Object.entries(this.indexers)) {
      const index = this.indexes.get(name) as Map<string, Set<string>>;
      for (const value of fn(obj)) {
        const set = index.get(value);
        set?.delete(key);
        if (set?.size === 0) index.delete(value);
      }
    }
  }
}
