// The source secrets that running ImagePullJobs name, each followed by a watch of its own: list + watch in the
// secret's namespace with fieldSelector metadata.name=<name>. kube-apiserver authorizes such a request as one on the
// named secret, so RBAC `resourceNames: [<name>]` with get, list, watch is enough: no namespace-wide or cluster-wide
// secret read, and nothing but the named secrets is ever cached. A watch starts with the first job referencing its
// source and stops when the last one lets go. The referencing jobs are told (listeners) when the source is added,
// changed (data or type) or deleted, when its watch has first synced, and when the watch starts or stops failing
// (a 403 from a revoked or missing grant, API trouble; retried with the informer's backoff, 1 s → 30 s, so a new
// grant is seen within about 30 s).
import type { Logger } from 'pino';
import type { KubeClient } from '../../kube/client.js';
import { Informer, listWatcherFor, type ListWatcher } from '../../kube/informer/informer.js';
import { jsonEqual } from '../../kube/merge-patch.js';
import { CoreResources } from '../../kube/resource.js';
import { silentLogger } from '../../observability/logger.js';
import { systemClock, type Clock } from '../../util/clock.js';
import type { SecretObject } from '../resources.js';

export interface SourceWatchesOptions {
  client: KubeClient;
  clock?: Clock | undefined;
  logger?: Logger | undefined;
  /** Told the number of open watches whenever it changes. */
  onCount?(watches: number): void;
}

/** What the watch of a source knows: the secret (absent when it does not exist), or nothing reliable (yet). */
export type WatchedSource = { known: true; secret?: SecretObject | undefined } | { known: false };

interface SourceWatch {
  key: string;
  /** `ns/name` of the jobs referencing the source. */
  jobs: Set<string>;
  /** The last list or watch request for the source failed: its cache may be stale. */
  failing: boolean;
  informer: Informer<SecretObject>;
}

export class SourceWatches {
  private readonly watches = new Map<string, SourceWatch>();
  private readonly listeners = new Set<(jobKey: string) => void>();
  private readonly clock: Clock;
  private readonly logger: Logger;

  constructor(private readonly options: SourceWatchesOptions) {
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? silentLogger;
  }

  /** `listener(jobKey)` for each job referencing a source whenever that source changes; returns the remover. */
  onChange(listener: (jobKey: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** `jobKey` references the secret `namespace/name` (its watch starts with the first reference); what it knows. */
  reference(namespace: string, name: string, jobKey: string): WatchedSource {
    const key = `${namespace}/${name}`;
    let watch = this.watches.get(key);
    if (!watch) {
      watch = this.start(namespace, name);
      this.watches.set(key, watch);
      this.options.onCount?.(this.watches.size);
    }
    watch.jobs.add(jobKey);
    if (watch.failing || !watch.informer.hasSynced()) return { known: false };
    return { known: true, secret: watch.informer.get(key) };
  }

  /** Drop `jobKey` from every source but those in `keep` (`ns/name`); a watch no job references any more stops. */
  async release(jobKey: string, keep: ReadonlySet<string> = new Set()): Promise<void> {
    const stopping: SourceWatch[] = [];
    for (const watch of this.watches.values()) {
      if (keep.has(watch.key) || !watch.jobs.delete(jobKey) || watch.jobs.size > 0) continue;
      stopping.push(watch);
    }
    await this.stopWatches(stopping);
  }

  async stop(): Promise<void> {
    await this.stopWatches([...this.watches.values()]);
  }

  /** Open watches (one per referenced source). */
  get size(): number {
    return this.watches.size;
  }

  private async stopWatches(watches: SourceWatch[]): Promise<void> {
    if (watches.length === 0) return;
    for (const watch of watches) this.watches.delete(watch.key);
    this.options.onCount?.(this.watches.size);
    await Promise.all(watches.map((w) => w.informer.stop()));
  }

  private start(namespace: string, name: string): SourceWatch {
    const key = `${namespace}/${name}`;
    const byName = listWatcherFor<SecretObject>(this.options.client, CoreResources.secrets, {
      namespace,
      fieldSelector: `metadata.name=${name}`,
    });
    const tracked = async <R>(request: Promise<R>): Promise<R> => {
      try {
        const answer = await request;
        this.setFailing(watch, false);
        return answer;
      } catch (err) {
        this.setFailing(watch, true);
        throw err;
      }
    };
    const lw: ListWatcher<SecretObject> = {
      list: (opts) => tracked(byName.list(opts)),
      watch: (opts) => tracked(byName.watch(opts)),
    };
    const informer = new Informer<SecretObject>(CoreResources.secrets, lw, {
      name: `pull-secret ${key}`,
      clock: this.clock,
      logger: this.logger,
    });
    const watch: SourceWatch = { key, jobs: new Set(), failing: false, informer };
    informer.addHandlers({
      onAdd: () => this.tell(watch),
      onUpdate: (old, secret) => {
        if (old.type !== secret.type || !jsonEqual(old.data ?? {}, secret.data ?? {})) this.tell(watch);
      },
      onDelete: () => this.tell(watch),
    });
    informer.synced.then(
      () => this.tell(watch),
      () => undefined, // stopped before it synced
    );
    informer.start();
    return watch;
  }

  private setFailing(watch: SourceWatch, failing: boolean): void {
    if (watch.failing === failing) return;
    watch.failing = failing;
    this.tell(watch);
  }

  private tell(watch: SourceWatch): void {
    if (this.watches.get(watch.key) !== watch) return; // stopped
    for (const jobKey of watch.jobs) for (const listener of this.listeners) listener(jobKey);
  }
}
