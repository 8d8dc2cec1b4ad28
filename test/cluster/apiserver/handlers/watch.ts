// One watch stream. Without a resourceVersion (or with "0") it starts with ADDED for every selected object;
// with one it replays exactly the kept events after it, or sends an ERROR event (410 Expired) when they are no
// longer kept, then ends - as kube-apiserver does. With a selector, an object that stops matching arrives as
// DELETED (its previous state, the new resourceVersion) and one that starts matching as ADDED.
import type { Clock, TimerHandle } from '../../../../src/util/clock.js';
import { apiErrors } from '../errors.js';
import type { ObjectFilter } from '../object-filter.js';
import type { ResourceType } from '../resource-types.js';
import type { StoreEvent } from '../store.js';
import { buildTable } from '../table.js';
import { apiVersionOf, type KubeObject } from '../types.js';
import type { WatchHub, WatchSubscriber } from '../watch-hub.js';
import type { ObjectStore } from '../store.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchSink {
  write(line: string): void;
  end(): void;
}

export interface WatchOptions {
  /** undefined: start with the current state; a number: replay what followed it. */
  sinceRv: number | undefined;
  allowBookmarks: boolean;
  bookmarkIntervalMs: number;
  /** End the stream after this long (kube's timeoutSeconds). */
  timeoutMs: number | undefined;
  /** Encode each object as a one-row Table (kubectl get -w). */
  asTable: boolean;
}

/** Decide what a store event means to a watcher with this filter (enter/leave as kube's cacher does). */
export function translateEvent(
  event: StoreEvent,
  filter: ObjectFilter,
): { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: KubeObject } | undefined {
  const curMatches = event.type !== 'DELETED' && filter.matches(event.object);
  const prevMatches = event.prev !== undefined && filter.matches(event.prev);
  if (event.type === 'ADDED') return curMatches ? { type: 'ADDED', object: event.object } : undefined;
  if (event.type === 'DELETED') {
    return prevMatches || filter.matches(event.object) ? { type: 'DELETED', object: event.object } : undefined;
  }
  if (curMatches && prevMatches) return { type: 'MODIFIED', object: event.object };
  if (curMatches) return { type: 'ADDED', object: event.object };
  if (prevMatches) {
    const prev = event.prev!;
    return {
      type: 'DELETED',
      object: { ...prev, metadata: { ...prev.metadata, resourceVersion: String(event.rv) } },
    };
  }
  return undefined;
}

export class WatchSession implements WatchSubscriber {
  readonly storageKey: string;
  private closed = false;
  private sentColumns = false;
  private bookmarkTimer: TimerHandle | undefined;
  private timeoutTimer: TimerHandle | undefined;
  private lastRv: number;

  constructor(
    private readonly rt: ResourceType,
    private readonly filter: ObjectFilter,
    private readonly options: WatchOptions,
    private readonly sink: WatchSink,
    private readonly deps: { hub: WatchHub; store: ObjectStore; clock: Clock; onClose?: () => void },
  ) {
    this.storageKey = rt.storageKey;
    this.lastRv = deps.store.currentRv();
  }

  /** Send the initial events (synchronously, so nothing can slip in between) and subscribe. */
  start(): void {
    const { store, hub } = this.deps;
    if (this.options.sinceRv === undefined) {
      const initial: KubeObject[] = [];
      for (const obj of store.list(this.rt.storageKey, this.filter.namespace || undefined)) {
        if (this.filter.matches(obj)) initial.push(obj);
      }
      for (const obj of initial) this.send('ADDED', obj);
    } else {
      const events = hub.window.since(this.options.sinceRv);
      if (!events) {
        const oldest = hub.window.oldestResumableRv();
        const status = apiErrors.expired(`too old resource version: ${this.options.sinceRv} (${oldest})`).toStatus();
        this.writeLine({ type: 'ERROR', object: status });
        this.close();
        return;
      }
      for (const e of events) if (e.storageKey === this.rt.storageKey) this.deliver(e);
    }
    this.lastRv = store.currentRv();
    hub.add(this);
    if (this.options.allowBookmarks) this.scheduleBookmark();
    if (this.options.timeoutMs !== undefined) {
      this.timeoutTimer = this.deps.clock.setTimer(() => {
        if (this.options.allowBookmarks) this.sendBookmark();
        this.close();
      }, this.options.timeoutMs);
    }
  }

  deliver(event: StoreEvent): void {
    if (this.closed) return;
    this.lastRv = event.rv;
    const out = translateEvent(event, this.filter);
    if (out) this.send(out.type, out.object);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.bookmarkTimer?.cancel();
    this.timeoutTimer?.cancel();
    this.deps.hub.remove(this);
    this.sink.end();
    this.deps.onClose?.();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private scheduleBookmark(): void {
    this.bookmarkTimer = this.deps.clock.setTimer(() => {
      if (this.closed) return;
      this.sendBookmark();
      this.scheduleBookmark();
    }, this.options.bookmarkIntervalMs);
  }

  private sendBookmark(): void {
    // Every event up to the current resourceVersion has been delivered (delivery is synchronous).
    this.lastRv = Math.max(this.lastRv, this.deps.store.currentRv());
    this.writeLine({
      type: 'BOOKMARK',
      object: {
        kind: this.rt.kind,
        apiVersion: apiVersionOf(this.rt.group, this.rt.version),
        metadata: { resourceVersion: String(this.lastRv) },
      },
    });
  }

  private send(type: WatchEventType, stored: KubeObject): void {
    const obj = this.rt.fromStorage(stored);
    if (this.options.asTable) {
      const table = buildTable(
        this.rt.table,
        [obj],
        this.deps.clock.now(),
        { resourceVersion: obj.metadata.resourceVersion },
        !this.sentColumns,
      );
      this.sentColumns = true;
      this.writeLine({ type, object: table });
    } else {
      this.writeLine({ type, object: obj });
    }
  }

  private writeLine(event: unknown): void {
    if (this.closed) return;
    this.sink.write(`${JSON.stringify(event)}\n`);
  }
}
