// Kubernetes Events (core/v1) for the objects we act on. Non-blocking and never throwing: event() queues and returns;
// a single sender creates Events, and repeats of the same object+type+reason+message become one Event whose count and
// lastTimestamp are patched. A per-object token bucket (client-go's: burst 25, one more each 5 min) filters spam.
import type { Logger } from 'pino';
import { silentLogger } from '../observability/logger.js';
import { systemClock, type Clock } from '../util/clock.js';
import type { KubeClient } from './client.js';
import { isNotFound } from './errors.js';
import { errorMessage } from '../util/error-message.js';
import type { KubeMetrics } from './metrics.js';
import type { KubeObject } from './object.js';
import { CoreResources, apiVersionOf, type ResourceType } from './resource.js';
import { rfc3339 } from '../util/time.js';

export type EventType = 'Normal' | 'Warning';

export interface ObjectReference {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  uid?: string;
  resourceVersion?: string;
  fieldPath?: string;
}

export interface CoreEvent extends KubeObject {
  involvedObject: ObjectReference;
  reason: string;
  message: string;
  type: EventType;
  count: number;
  firstTimestamp: string;
  lastTimestamp: string;
  source: { component: string; host?: string | undefined };
  reportingComponent: string;
  reportingInstance: string;
}

/** What the recorder needs from the API (KubeClient fits; tests may pass a fake). */
export type EventSink = Pick<KubeClient, 'create' | 'patch'>;

export interface EventRecorderOptions {
  /** source.component / reportingComponent, e.g. "kruise-daemon". */
  component: string;
  /** source.host / reportingInstance, e.g. the node name. */
  host?: string | undefined;
  clock?: Clock;
  logger?: Logger;
  metrics?: KubeMetrics | undefined;
  /** Events waiting to be sent; more are dropped (default 1000). */
  bufferSize?: number;
  /** Aggregation memory: how many distinct events are remembered (default 4096). */
  cacheSize?: number;
  /** Per-object spam filter (default burst 25, refill one per 300 s). */
  spamBurst?: number;
  spamRefillMs?: number;
  /** Send attempts per event for failures other than 4xx (default 3). */
  attempts?: number;
}

interface Pending {
  ref: ObjectReference;
  type: EventType;
  reason: string;
  message: string;
  at: number;
}

interface Aggregate {
  name: string;
  namespace: string;
  count: number;
  firstTimestamp: string;
}

interface Bucket {
  tokens: number;
  at: number;
}

const REASON = /^[A-Za-z][A-Za-z0-9]{0,127}$/;
const MAX_MESSAGE = 1024;

export class EventRecorder {
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly pending: Pending[] = [];
  private readonly aggregates = new Map<string, Aggregate>();
  private readonly buckets = new Map<string, Bucket>();
  private pumping?: Promise<void> | undefined;
  private seq = 0;
  private closed = false;

  constructor(
    private readonly sink: EventSink,
    private readonly options: EventRecorderOptions,
  ) {
    this.clock = options.clock ?? systemClock;
    this.logger = (options.logger ?? silentLogger).child({ component: 'event-recorder' });
  }

  /**
   * Record an event about `obj`. `rt` supplies apiVersion/kind when the object lacks them (list items do).
   * Returns at once; never throws.
   */
  event(obj: KubeObject, type: EventType, reason: string, message: string, rt?: ResourceType): void {
    try {
      if (this.closed) return;
      const ref = referenceTo(obj, rt);
      if (!ref) {
        this.logger.warn({ reason }, 'event dropped: the object has no name, kind or apiVersion');
        this.drop('invalid');
        return;
      }
      if (!REASON.test(reason)) {
        this.logger.warn({ reason }, 'event dropped: reason must be UpperCamelCase letters and digits');
        this.drop('invalid');
        return;
      }
      if (!this.allow(ref)) {
        this.drop('spam');
        return;
      }
      if (this.pending.length >= (this.options.bufferSize ?? 1000)) {
        this.drop('buffer-full');
        return;
      }
      const text = message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE - 3)}...` : message;
      this.pending.push({ ref, type, reason, message: text, at: this.clock.now() });
      this.pumping ??= this.pump().finally(() => {
        this.pumping = undefined;
      });
    } catch (err) {
      this.logger.warn({ err: errorMessage(err) }, 'event dropped');
    }
  }

  /** Resolve when every queued event has been sent (or given up on). */
  async flush(): Promise<void> {
    while (this.pumping) await this.pumping;
  }

  /** Stop taking events and send what is queued. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  private drop(reason: string): void {
    this.options.metrics?.eventsDropped.inc({ reason });
  }

  /** Per-object token bucket. */
  private allow(ref: ObjectReference): boolean {
    const key = `${ref.kind}/${ref.namespace ?? ''}/${ref.name}/${ref.uid ?? ''}`;
    const burst = this.options.spamBurst ?? 25;
    const refillMs = this.options.spamRefillMs ?? 300_000;
    const now = this.clock.now();
    const bucket = this.buckets.get(key) ?? { tokens: burst, at: now };
    bucket.tokens = Math.min(burst, bucket.tokens + (now - bucket.at) / refillMs);
    bucket.at = now;
    this.touch(this.buckets, key, bucket);
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }

  /** Insert as most recent and keep the map within cacheSize (oldest first out). */
  private touch<V>(map: Map<string, V>, key: string, value: V): void {
    map.delete(key);
    map.set(key, value);
    const limit = this.options.cacheSize ?? 4096;
    while (map.size > limit) map.delete(map.keys().next().value as string);
  }

  private async pump(): Promise<void> {
    while (this.pending.length > 0) {
      const next = this.pending.shift() as Pending;
      try {
        await this.send(next);
      } catch (err) {
        this.drop('error');
        this.logger.warn({ reason: next.reason, err: errorMessage(err) }, 'event not recorded');
      }
    }
  }

  private async send(p: Pending): Promise<void> {
    const key = [p.ref.kind, p.ref.namespace, p.ref.name, p.ref.uid, p.type, p.reason, p.message].join('\u0000');
    const known = this.aggregates.get(key);
    const last = rfc3339(p.at);
    if (known) {
      const count = known.count + 1;
      try {
        await this.retrying(() =>
          this.sink.patch(
            CoreResources.events,
            known.name,
            { count, lastTimestamp: last },
            {
              type: 'merge',
              namespace: known.namespace,
            },
          ),
        );
        known.count = count;
        this.touch(this.aggregates, key, known);
        return;
      } catch (err) {
        // The Event expired (TTL) or was deleted: start a new one.
        if (!isNotFound(err)) throw err;
        this.aggregates.delete(key);
      }
    }
    const namespace = p.ref.namespace || 'default';
    const name = `${p.ref.name}.${(BigInt(p.at) * 1_000_000n + BigInt(this.seq++ % 1_000_000)).toString(16)}`;
    const event: CoreEvent = {
      metadata: { name, namespace },
      involvedObject: p.ref,
      reason: p.reason,
      message: p.message,
      type: p.type,
      count: 1,
      firstTimestamp: last,
      lastTimestamp: last,
      source: { component: this.options.component, host: this.options.host },
      reportingComponent: this.options.component,
      reportingInstance: this.options.host ?? '',
    };
    await this.retrying(() => this.sink.create(CoreResources.events, event, { namespace }));
    this.touch(this.aggregates, key, { name, namespace, count: 1, firstTimestamp: last });
  }

  /** Retry failures that are not answers about the request itself (4xx). */
  private async retrying<R>(fn: () => Promise<R>): Promise<R> {
    const attempts = this.options.attempts ?? 3;
    for (let i = 1; ; i++) {
      try {
        return await fn();
      } catch (err) {
        const code = (err as { code?: unknown }).code;
        const clientError = typeof code === 'number' && code >= 400 && code < 500 && code !== 429;
        if (clientError || i >= attempts) throw err;
        await this.clock.sleep(1000 * i);
      }
    }
  }
}

/** An ObjectReference for `obj`; undefined when kind, apiVersion or name cannot be known. */
export function referenceTo(obj: KubeObject, rt?: ResourceType): ObjectReference | undefined {
  const kind = obj.kind ?? rt?.kind;
  const apiVersion = obj.apiVersion ?? (rt ? apiVersionOf(rt) : undefined);
  const name = obj.metadata?.name;
  if (!kind || !apiVersion || !name) return undefined;
  const ref: ObjectReference = { apiVersion, kind, name };
  if (obj.metadata?.namespace) ref.namespace = obj.metadata.namespace;
  if (obj.metadata?.uid) ref.uid = obj.metadata.uid;
  if (obj.metadata?.resourceVersion) ref.resourceVersion = obj.metadata.resourceVersion;
  return ref;
}
