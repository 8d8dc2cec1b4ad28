// A supervised list+watch with a cache (informer). List once, then watch with bookmarks from the last
// resourceVersion; a closed or idle stream resumes from there; 410 Gone relists and hands the difference to the
// handlers as add/update/delete, so each change is seen once; other failures back off (jittered 1 s → 30 s).
// It never relists except at start and on 410.
import type { Logger } from 'pino';
import { silentLogger } from '../../observability/logger.js';
import { systemClock, type Clock, type TimerHandle } from '../../util/clock.js';
import { Backoff, type BackoffOptions } from '../../util/backoff.js';
import type { KubeClient, ListOptions, WatchOptions } from '../client.js';
import { isGone } from '../errors.js';
import { errorMessage } from '../../util/error-message.js';
import type { KubeMetrics } from '../metrics.js';
import { objectKey, type KubeList, type KubeObject } from '../object.js';
import { resourceLabel, type ResourceType } from '../resource.js';
import type { WatchEvent, WatchStream } from '../watch-stream.js';
import { Store, type IndexFunc } from './store.js';

/** Where an informer gets its objects; KubeClient-backed in production, fakes in unit tests. */
export interface ListWatcher<T extends KubeObject> {
  list(opts: ListOptions): Promise<KubeList<T>>;
  watch(opts: WatchOptions): Promise<WatchStream<T>>;
}

export interface Selection {
  /** Only this namespace (namespaced types); absent: all namespaces. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

export function listWatcherFor<T extends KubeObject>(
  client: KubeClient,
  rt: ResourceType,
  selection: Selection = {},
): ListWatcher<T> {
  return {
    list: (opts) => client.list<T>(rt, { ...selection, ...opts }),
    watch: (opts) => client.watch<T>(rt, { ...selection, ...opts }),
  };
}

export interface InformerHandlers<T> {
  onAdd?(obj: T): void;
  onUpdate?(oldObj: T, newObj: T): void;
  onDelete?(obj: T): void;
}

export interface InformerOptions<T extends KubeObject> extends Selection {
  /** Names this informer in logs and metric labels (default: the resource, e.g. "pods"). */
  name?: string;
  clock?: Clock | undefined;
  logger?: Logger | undefined;
  metrics?: KubeMetrics | undefined;
  indexers?: Record<string, IndexFunc<T>>;
  /** A stream with no event or bookmark for this long is taken as dead and reopened (default 5 min). */
  idleTimeoutMs?: number;
  /** Backoff after failures (default 1 s → 30 s, jittered). */
  backoff?: BackoffOptions;
  random?: () => number;
}

type RelistReason = 'initial' | 'gone';

/** The server ends each watch after a random time in this range (seconds, as client-go). */
const WATCH_TIMEOUT_SECONDS = [300, 600] as const;
/** Page size of lists. */
const PAGE_SIZE = 500;

export class Informer<T extends KubeObject> {
  readonly store: Store<T>;
  readonly resource: string;
  private readonly lw: ListWatcher<T>;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly metrics?: KubeMetrics | undefined;
  private readonly backoff: Backoff;
  private readonly idleTimeoutMs: number;
  private readonly random: () => number;
  private readonly handlers = new Set<InformerHandlers<T>>();
  private rv = '';
  private running?: Promise<void>;
  private stopController = new AbortController();
  private stream?: WatchStream<T> | undefined;
  private lastEventAt = 0;
  private isSynced = false;
  /** Why the last list failed (cleared by a list that succeeds). */
  private lastListError: string | undefined;
  private resolveSynced!: () => void;
  private rejectSynced!: (err: Error) => void;
  /** Resolves once the first list is in the cache and handed to the handlers; rejects if stopped before that. */
  readonly synced: Promise<void>;
  private counters = { lists: 0, watches: 0 };

  constructor(rt: ResourceType, source: KubeClient | ListWatcher<T>, options: InformerOptions<T> = {}) {
    this.resource = options.name ?? resourceLabel(rt);
    this.lw = 'transport' in source ? listWatcherFor<T>(source, rt, options) : source;
    this.clock = options.clock ?? systemClock;
    this.logger = (options.logger ?? silentLogger).child({ informer: this.resource });
    this.metrics = options.metrics;
    this.store = new Store<T>(options.indexers);
    this.backoff = new Backoff({ random: options.random, ...options.backoff });
    this.idleTimeoutMs = options.idleTimeoutMs ?? 300_000;
    this.random = options.random ?? Math.random;
    if (!(this.idleTimeoutMs > 0)) throw new Error('idleTimeoutMs must be positive');
    this.synced = new Promise<void>((resolve, reject) => {
      this.resolveSynced = resolve;
      this.rejectSynced = reject;
    });
    this.synced.catch(() => undefined);
  }

  /**
   * Add handlers; returns a function that removes them. Handlers added after sync first get an add for every
   * cached object. Handlers should only enqueue keys (level-triggered); a throw is logged and ignored.
   */
  addHandlers(handlers: InformerHandlers<T>): () => void {
    this.handlers.add(handlers);
    if (this.isSynced && handlers.onAdd) {
      for (const obj of this.store.list()) this.call(() => handlers.onAdd?.(obj));
    }
    return () => this.handlers.delete(handlers);
  }

  start(): void {
    if (this.running) return;
    this.running = this.run();
  }

  async stop(): Promise<void> {
    this.stopController.abort(new Error('informer stopped'));
    this.stream?.close();
    await this.running;
    if (!this.isSynced) this.rejectSynced(new Error(`informer ${this.resource} stopped before it synced`));
  }

  hasSynced(): boolean {
    return this.isSynced;
  }

  /** Undefined once synced; else `has not synced yet`, with the error of the last failed list (for health checks). */
  notSyncedReason(): string | undefined {
    if (this.isSynced) return undefined;
    return this.lastListError === undefined
      ? 'has not synced yet'
      : `has not synced yet; the last list failed: ${this.lastListError}`;
  }

  /** The resourceVersion the next watch resumes from. */
  get resourceVersion(): string {
    return this.rv;
  }

  /** Lists and watches opened so far (for tests and figures). */
  stats(): { lists: number; watches: number } {
    return { ...this.counters };
  }

  get(key: string): T | undefined {
    return this.store.get(key);
  }

  list(): T[] {
    return this.store.list();
  }

  private get stopped(): boolean {
    return this.stopController.signal.aborted;
  }

  private async run(): Promise<void> {
    let relist: RelistReason | undefined = 'initial';
    while (!this.stopped) {
      if (relist) {
        try {
          await this.relist(relist);
          relist = undefined;
        } catch (err) {
          if (this.stopped) break;
          // A 410 on the list itself (expired continue token): the next list is a fresh consistent one.
          if (isGone(err)) relist = 'gone';
          this.lastListError = errorMessage(err);
          this.logger.warn({ err: this.lastListError }, 'list failed; backing off');
          await this.pause();
          continue;
        }
      }
      const outcome = await this.watchOnce();
      if (this.stopped) break;
      this.metrics?.watchRestarts.inc({ resource: this.resource, reason: outcome.reason });
      if (outcome.reason === 'gone') {
        this.logger.info({ rv: this.rv }, 'watch resourceVersion expired (410); relisting');
        relist = 'gone';
      } else if (outcome.reason === 'error' || !outcome.healthy) {
        this.logger.warn({ err: outcome.error, rv: this.rv }, 'watch failed; backing off');
        await this.pause();
      } else {
        this.logger.debug({ reason: outcome.reason, rv: this.rv }, 'watch ended; resuming');
        this.backoff.reset();
      }
    }
  }

  private async pause(): Promise<void> {
    try {
      await this.clock.sleep(this.backoff.next(), this.stopController.signal);
    } catch {
      // stopped
    }
  }

  private async relist(reason: RelistReason): Promise<void> {
    this.counters.lists++;
    this.metrics?.relists.inc({ resource: this.resource, reason });
    // The first list may come from the API server's cache (resourceVersion=0); after a 410 it must be fresh.
    const items: T[] = [];
    let rv: string | undefined;
    let cont: string | undefined;
    do {
      const page = await this.lw.list({
        resourceVersion: cont || reason === 'gone' ? undefined : '0',
        limit: PAGE_SIZE,
        continue: cont,
      });
      if (this.stopped) return;
      rv ??= page.metadata?.resourceVersion;
      items.push(...page.items);
      cont = page.metadata?.continue || undefined;
    } while (cont);
    this.replace(items);
    this.rv = rv ?? '';
    this.lastEventAt = this.clock.now();
    this.backoff.reset();
    this.lastListError = undefined;
    if (!this.isSynced) {
      this.isSynced = true;
      this.resolveSynced();
      this.logger.debug({ objects: this.store.size, rv: this.rv }, 'informer synced');
    }
  }

  /** Make the cache equal to `items`, telling handlers each difference once. */
  private replace(items: T[]): void {
    const seen = new Set<string>();
    for (const obj of items) {
      const key = objectKey(obj);
      seen.add(key);
      const old = this.store.set(obj);
      this.notifyUpsert(old, obj);
    }
    for (const key of this.store.keys()) {
      if (seen.has(key)) continue;
      const old = this.store.delete(key) as T;
      this.emit((h) => h.onDelete?.(old));
    }
    this.metrics?.informerObjects.set({ resource: this.resource }, this.store.size);
  }

  private notifyUpsert(old: T | undefined, obj: T): void {
    if (!old) this.emit((h) => h.onAdd?.(obj));
    else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion) this.emit((h) => h.onUpdate?.(old, obj));
  }

  private async watchOnce(): Promise<{
    reason: 'closed' | 'idle' | 'error' | 'gone';
    healthy: boolean;
    error?: string;
  }> {
    const [min, max] = WATCH_TIMEOUT_SECONDS;
    const timeoutSeconds = Math.floor(min + this.random() * (max - min + 1));
    const openedAt = this.clock.now();
    let events = 0;
    let idle = false;
    let idleTimer: TimerHandle | undefined;
    const thisWatch = new AbortController();
    const armIdle = (): void => {
      idleTimer?.cancel();
      idleTimer = this.clock.setTimer(() => {
        idle = true;
        this.logger.info({ idleMs: this.idleTimeoutMs, rv: this.rv }, 'watch idle too long; reopening');
        thisWatch.abort(new Error('watch idle'));
        this.stream?.close();
      }, this.idleTimeoutMs);
    };
    try {
      this.counters.watches++;
      armIdle();
      this.stream = await this.lw.watch({
        resourceVersion: this.rv || undefined,
        allowWatchBookmarks: true,
        timeoutSeconds,
        signal: AbortSignal.any([this.stopController.signal, thisWatch.signal]),
      });
      if (idle || this.stopped) this.stream.close();
      for await (const event of this.stream) {
        if (this.stopped) break;
        events++;
        armIdle();
        this.apply(event);
      }
      // A stream that ends at once without anything in it is not healthy: back off rather than spin.
      const healthy = events > 0 || this.clock.now() - openedAt >= 1000;
      return { reason: idle ? 'idle' : 'closed', healthy };
    } catch (err) {
      if (isGone(err)) return { reason: 'gone', healthy: true };
      if (idle) return { reason: 'idle', healthy: true };
      return { reason: 'error', healthy: false, error: errorMessage(err) };
    } finally {
      idleTimer?.cancel();
      this.stream = undefined;
    }
  }

  private apply(event: WatchEvent<T>): void {
    const obj = event.object;
    const rv = obj.metadata?.resourceVersion;
    this.lastEventAt = this.clock.now();
    this.metrics?.watchEvents.inc({ resource: this.resource, type: event.type });
    this.metrics?.lastWatchEvent.set({ resource: this.resource }, this.lastEventAt / 1000);
    switch (event.type) {
      case 'BOOKMARK':
        break;
      case 'ADDED':
      case 'MODIFIED': {
        const old = this.store.set(obj);
        this.notifyUpsert(old, obj);
        break;
      }
      case 'DELETED': {
        const old = this.store.delete(objectKey(obj));
        if (old) this.emit((h) => h.onDelete?.(obj));
        break;
      }
    }
    if (rv) this.rv = rv;
    this.metrics?.informerObjects.set({ resource: this.resource }, this.store.size);
  }

  private emit(fn: (h: InformerHandlers<T>) => void): void {
    for (const h of this.handlers) this.call(() => fn(h));
  }

  private call(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.logger.error({ err: errorMessage(err) }, 'informer handler threw');
    }
  }
}

/** Resolve when every informer has synced. */
export async function waitForCacheSync(...informers: { synced: Promise<void> }[]): Promise<void> {
  await Promise.all(informers.map((i) => i.synced));
}
