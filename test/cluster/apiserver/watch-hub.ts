// Fans store events out to open watches (only those of the event's storage key) and keeps the resume window.
import type { ObjectStore, StoreEvent } from './store.js';
import { WatchWindow } from './watch-window.js';

export interface WatchSubscriber {
  storageKey: string;
  deliver(event: StoreEvent): void;
  /** End the stream (server side). */
  close(): void;
}

export class WatchHub {
  readonly window: WatchWindow;
  private readonly subscribers = new Map<string, Set<WatchSubscriber>>();

  constructor(store: ObjectStore, windowSize: number) {
    this.window = new WatchWindow(windowSize, store.currentRv());
    store.subscribe((event) => this.publish(event));
  }

  add(sub: WatchSubscriber): void {
    let set = this.subscribers.get(sub.storageKey);
    if (!set) this.subscribers.set(sub.storageKey, (set = new Set()));
    set.add(sub);
  }

  remove(sub: WatchSubscriber): void {
    const set = this.subscribers.get(sub.storageKey);
    set?.delete(sub);
    if (set?.size === 0) this.subscribers.delete(sub.storageKey);
  }

  /** Number of open watches (all, or of one storage key). */
  count(storageKey?: string): number {
    if (storageKey !== undefined) return this.subscribers.get(storageKey)?.size ?? 0;
    let n = 0;
    for (const set of this.subscribers.values()) n += set.size;
    return n;
  }

  /** End every open watch (or those of one storage key); clients must resume. */
  closeAll(storageKey?: string): void {
    const sets = storageKey === undefined ? [...this.subscribers.values()] : [this.subscribers.get(storageKey)];
    for (const set of sets) for (const sub of [...(set ?? [])]) sub.close();
  }

  private publish(event: StoreEvent): void {
    this.window.push(event);
    const set = this.subscribers.get(event.storageKey);
    if (!set) return;
    for (const sub of [...set]) sub.deliver(event);
  }
}
