// The object store: every object by storage key, namespace and name, one monotonic resourceVersion counter and
// a change feed. Each committed change takes the next resourceVersion and emits exactly one event, so the
// event log is gap-free (watch resume relies on it). Stored objects are never mutated: writers replace them.
import type { KubeObject, OwnerReference } from './types.js';

export type StoreEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  type: StoreEventType;
  storageKey: string;
  /** The object after the change (for DELETED: its last state, with the deletion's resourceVersion). */
  object: KubeObject;
  /** The object before the change (MODIFIED, DELETED). */
  prev?: KubeObject;
  rv: number;
}

export type StoreListener = (event: StoreEvent) => void;

export interface ObjectRef {
  storageKey: string;
  namespace: string;
  name: string;
}

function refKey(storageKey: string, namespace: string, name: string): string {
  return `${storageKey}\u0000${namespace}\u0000${name}`;
}

function parseRefKey(key: string): ObjectRef {
  const [storageKey, namespace, name] = key.split('\u0000') as [string, string, string];
  return { storageKey, namespace, name };
}

function ownerUids(obj: KubeObject): string[] {
  const refs = obj.metadata.ownerReferences;
  if (!Array.isArray(refs)) return [];
  return refs.map((r: OwnerReference) => r.uid).filter((u): u is string => typeof u === 'string');
}

export class ObjectStore {
  private rv = 0;
  /** storageKey → namespace ('' for cluster scope) → name → object. */
  private readonly buckets = new Map<string, Map<string, Map<string, KubeObject>>>();
  private readonly byUid = new Map<string, string>();
  /** owner uid → ref keys of objects naming it in ownerReferences. */
  private readonly dependents = new Map<string, Set<string>>();
  private readonly listeners: StoreListener[] = [];

  /** `onListenerError` hears about a listener that threw; the others still run. */
  constructor(private readonly onListenerError: (err: unknown) => void = (err) => console.error(err)) {}

  currentRv(): number {
    return this.rv;
  }

  subscribe(listener: StoreListener): () => void {
    this.listeners.push(listener);
    return () => {
      const i = this.listeners.indexOf(listener);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  get(storageKey: string, namespace: string, name: string): KubeObject | undefined {
    return this.buckets.get(storageKey)?.get(namespace)?.get(name);
  }

  /** Objects of a storage key, in one namespace or all; order is not defined. */
  *list(storageKey: string, namespace?: string): IterableIterator<KubeObject> {
    const bucket = this.buckets.get(storageKey);
    if (!bucket) return;
    if (namespace !== undefined) {
      const ns = bucket.get(namespace);
      if (ns) yield* ns.values();
      return;
    }
    for (const ns of bucket.values()) yield* ns.values();
  }

  count(storageKey: string): number {
    let n = 0;
    for (const ns of this.buckets.get(storageKey)?.values() ?? []) n += ns.size;
    return n;
  }

  storageKeys(): string[] {
    return [...this.buckets.keys()];
  }

  /** Storage keys that hold objects in a namespace. */
  storageKeysInNamespace(namespace: string): string[] {
    return [...this.buckets.entries()].filter(([, b]) => (b.get(namespace)?.size ?? 0) > 0).map(([k]) => k);
  }

  findByUid(uid: string): { ref: ObjectRef; object: KubeObject } | undefined {
    const key = this.byUid.get(uid);
    if (!key) return undefined;
    const ref = parseRefKey(key);
    const object = this.get(ref.storageKey, ref.namespace, ref.name);
    return object ? { ref, object } : undefined;
  }

  dependentsOf(uid: string): ObjectRef[] {
    return [...(this.dependents.get(uid) ?? [])].map(parseRefKey);
  }

  /** Store a new object; it gets the next resourceVersion. The caller has checked it does not exist. */
  create(storageKey: string, obj: KubeObject): KubeObject {
    const stored = this.stamp(obj);
    this.put(storageKey, stored);
    this.emit({ type: 'ADDED', storageKey, object: stored, rv: this.rv });
    return stored;
  }

  /** Replace an existing object with a new version. */
  update(storageKey: string, obj: KubeObject, prev: KubeObject): KubeObject {
    const stored = this.stamp(obj);
    this.unindex(storageKey, prev);
    this.put(storageKey, stored);
    this.emit({ type: 'MODIFIED', storageKey, object: stored, prev, rv: this.rv });
    return stored;
  }

  /** Remove an object; `last` is its final state (defaults to the stored one). */
  remove(storageKey: string, current: KubeObject, last: KubeObject = current): KubeObject {
    const ns = current.metadata.namespace ?? '';
    const name = current.metadata.name ?? '';
    const bucket = this.buckets.get(storageKey)?.get(ns);
    if (!bucket?.has(name)) return current;
    bucket.delete(name);
    this.unindex(storageKey, current);
    const gone = this.stamp(last);
    this.emit({ type: 'DELETED', storageKey, object: gone, prev: current, rv: this.rv });
    return gone;
  }

  /** Load an object as persisted (keeps its resourceVersion; emits nothing). */
  restore(storageKey: string, obj: KubeObject): void {
    this.put(storageKey, obj);
  }

  /** Set the counter after a restore. */
  restoreRv(rv: number): void {
    this.rv = Math.max(this.rv, rv);
  }

  /** Forget a whole storage key (its objects must already be deleted). */
  dropStorageKey(storageKey: string): void {
    for (const obj of this.list(storageKey)) this.unindex(storageKey, obj);
    this.buckets.delete(storageKey);
  }

  private stamp(obj: KubeObject): KubeObject {
    this.rv++;
    return { ...obj, metadata: { ...obj.metadata, resourceVersion: String(this.rv) } };
  }

  private put(storageKey: string, obj: KubeObject): void {
    const ns = obj.metadata.namespace ?? '';
    const name = obj.metadata.name ?? '';
    let bucket = this.buckets.get(storageKey);
    if (!bucket) this.buckets.set(storageKey, (bucket = new Map()));
    let names = bucket.get(ns);
    if (!names) bucket.set(ns, (names = new Map()));
    names.set(name, obj);
    const key = refKey(storageKey, ns, name);
    if (obj.metadata.uid) this.byUid.set(obj.metadata.uid, key);
    for (const owner of ownerUids(obj)) {
      let set = this.dependents.get(owner);
      if (!set) this.dependents.set(owner, (set = new Set()));
      set.add(key);
    }
  }

  private unindex(storageKey: string, obj: KubeObject): void {
    const key = refKey(storageKey, obj.metadata.namespace ?? '', obj.metadata.name ?? '');
    if (obj.metadata.uid && this.byUid.get(obj.metadata.uid) === key) this.byUid.delete(obj.metadata.uid);
    for (const owner of ownerUids(obj)) {
      const set = this.dependents.get(owner);
      set?.delete(key);
      if (set?.size === 0) this.dependents.delete(owner);
    }
  }

  private emit(event: StoreEvent): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (err) {
        this.onListenerError(err);
      }
    }
  }
}
