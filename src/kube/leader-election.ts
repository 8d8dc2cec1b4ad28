// Leader election over a coordination.k8s.io/v1 Lease, as client-go's: a candidate takes a lease that is free or
// not renewed for its duration (measured on our own clock from when we last saw it change, so clock skew between
// nodes does not matter), renews it every retry period, and gives up leading when it could not renew within the
// renew deadline. Defaults 15/10/2 s. On stop the lease is released so another candidate takes over at once.
import type { Logger } from 'pino';
import { silentLogger } from '../observability/logger.js';
import { systemClock, type Clock } from '../util/clock.js';
import type { KubeClient } from './client.js';
import { isNotFound } from './errors.js';
import { errorMessage } from '../util/error-message.js';
import type { KubeObject } from './object.js';
import { CoreResources } from './resource.js';
import { microTime } from '../util/time.js';

export interface LeaseRecord {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

export interface Lease extends KubeObject {
  spec?: LeaseRecord;
}

/** Read and conditionally write one lease; KubeLeaseLock in production, an in-memory store in unit tests. */
export interface LeaseLock {
  get(): Promise<{ record: LeaseRecord; resourceVersion: string } | undefined>;
  /** Create the lease; throws when it already exists. */
  create(record: LeaseRecord): Promise<void>;
  /** Replace the lease if it is still at `resourceVersion`; throws on a conflict. */
  update(record: LeaseRecord, resourceVersion: string): Promise<void>;
  describe(): string;
}

export class KubeLeaseLock implements LeaseLock {
  constructor(
    private readonly client: KubeClient,
    readonly namespace: string,
    readonly name: string,
  ) {}

  async get(): Promise<{ record: LeaseRecord; resourceVersion: string } | undefined> {
    try {
      const lease = await this.client.get<Lease>(CoreResources.leases, this.name, { namespace: this.namespace });
      return { record: lease.spec ?? {}, resourceVersion: lease.metadata?.resourceVersion ?? '' };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async create(record: LeaseRecord): Promise<void> {
    await this.client.create<Lease>(CoreResources.leases, {
      metadata: { name: this.name, namespace: this.namespace },
      spec: record,
    });
  }

  async update(record: LeaseRecord, resourceVersion: string): Promise<void> {
    await this.client.update<Lease>(CoreResources.leases, {
      metadata: { name: this.name, namespace: this.namespace, resourceVersion },
      spec: record,
    });
  }

  describe(): string {
    return `lease ${this.namespace}/${this.name}`;
  }
}

export interface LeaderCallbacks {
  /** Leading starts; `signal` aborts when leading ends. */
  onStartedLeading(signal: AbortSignal): void;
  /** Leading ended (lost or stopped). Called only after onStartedLeading. */
  onStoppedLeading(): void;
  /** Someone (maybe us) was seen holding the lease. */
  onNewLeader?(identity: string): void;
}

export interface LeaderElectorOptions {
  lock: LeaseLock;
  identity: string;
  callbacks: LeaderCallbacks;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** Give the lease up on stop() (default true). */
  releaseOnStop?: boolean;
  clock?: Clock;
  logger?: Logger;
  random?: () => number;
}

const JITTER = 1.2;

function sameRecord(a: LeaseRecord | undefined, b: LeaseRecord): boolean {
  return (
    a !== undefined &&
    a.holderIdentity === b.holderIdentity &&
    a.renewTime === b.renewTime &&
    a.acquireTime === b.acquireTime &&
    a.leaseTransitions === b.leaseTransitions &&
    a.leaseDurationSeconds === b.leaseDurationSeconds
  );
}

class DeadlineError extends Error {}

export class LeaderElector {
  readonly identity: string;
  private readonly lock: LeaseLock;
  private readonly callbacks: LeaderCallbacks;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly releaseOnStop: boolean;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly random: () => number;
  private readonly stopController = new AbortController();
  private observed?: LeaseRecord;
  private observedAt = 0;
  private leading = false;
  private running?: Promise<void>;
  private lastLeader?: string;

  constructor(options: LeaderElectorOptions) {
    if (!options.identity) throw new Error('leader election needs a non-empty identity');
    this.identity = options.identity;
    this.lock = options.lock;
    this.callbacks = options.callbacks;
    this.leaseDurationMs = options.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = options.retryPeriodMs ?? 2_000;
    if (!(this.leaseDurationMs > this.renewDeadlineMs))
      throw new Error('leaseDuration must be greater than renewDeadline');
    if (!(this.renewDeadlineMs > JITTER * this.retryPeriodMs)) {
      throw new Error(`renewDeadline must be greater than ${JITTER} x retryPeriod`);
    }
    if (!(this.retryPeriodMs > 0)) throw new Error('retryPeriod must be positive');
    this.releaseOnStop = options.releaseOnStop ?? true;
    this.clock = options.clock ?? systemClock;
    this.logger = (options.logger ?? silentLogger).child({ lease: this.lock.describe(), identity: this.identity });
    this.random = options.random ?? Math.random;
  }

  isLeader(): boolean {
    return this.leading;
  }

  /**
   * Campaign, lead, and resolve when leading is lost or stop() is called. Call once; to campaign again after a
   * loss, make a new LeaderElector (a process that lost leadership usually exits).
   */
  run(): Promise<void> {
    this.running ??= this.campaignAndLead();
    return this.running;
  }

  /** Stop campaigning or leading; releases the lease if we hold it (releaseOnStop). */
  async stop(): Promise<void> {
    this.stopController.abort(new Error('leader election stopped'));
    await this.running;
  }

  private get stopped(): boolean {
    return this.stopController.signal.aborted;
  }

  private async sleep(ms: number): Promise<void> {
    try {
      await this.clock.sleep(ms, this.stopController.signal);
    } catch {
      // stopped
    }
  }

  private async campaignAndLead(): Promise<void> {
    while (!this.stopped) {
      if (await this.attempt(this.retryPeriodMs * JITTER)) break;
      await this.sleep(this.retryPeriodMs * (1 + (JITTER - 1) * this.random()));
    }
    if (this.stopped) return;
    this.leading = true;
    this.logger.info('became leader');
    const leadership = new AbortController();
    this.call(() => this.callbacks.onStartedLeading(leadership.signal));
    await this.renewLoop();
    this.leading = false;
    leadership.abort(new Error('leadership ended'));
    this.logger.info({ stopped: this.stopped }, 'stopped leading');
    if (this.stopped && this.releaseOnStop) await this.release();
    this.call(() => this.callbacks.onStoppedLeading());
  }

  /** Renew every retry period; return when a renewal did not succeed within the renew deadline, or on stop. */
  private async renewLoop(): Promise<void> {
    while (!this.stopped) {
      await this.sleep(this.retryPeriodMs);
      if (this.stopped) return;
      const deadline = this.clock.now() + this.renewDeadlineMs;
      let renewed = false;
      while (!this.stopped) {
        const left = deadline - this.clock.now();
        if (left <= 0) break;
        if (await this.attempt(left)) {
          renewed = true;
          break;
        }
        const wait = Math.min(this.retryPeriodMs, deadline - this.clock.now());
        if (wait <= 0) break;
        await this.sleep(wait);
      }
      if (!renewed && !this.stopped) {
        this.logger.warn(
          { renewDeadlineMs: this.renewDeadlineMs },
          'could not renew the lease in time; leadership lost',
        );
        return;
      }
    }
  }

  /** One tryAcquireOrRenew bounded by `timeoutMs`; false on any failure. */
  private async attempt(timeoutMs: number): Promise<boolean> {
    let timer: { cancel(): void } | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = this.clock.setTimer(() => reject(new DeadlineError('lease request timed out')), timeoutMs);
    });
    try {
      return await Promise.race([this.tryAcquireOrRenew(), deadline]);
    } catch (err) {
      this.logger.debug({ err: errorMessage(err) }, 'lease attempt failed');
      return false;
    } finally {
      timer?.cancel();
      deadline.catch(() => undefined);
    }
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = this.clock.now();
    const durationSeconds = Math.ceil(this.leaseDurationMs / 1000);
    const current = await this.lock.get();
    if (!current) {
      const record: LeaseRecord = {
        holderIdentity: this.identity,
        leaseDurationSeconds: durationSeconds,
        acquireTime: microTime(now),
        renewTime: microTime(now),
        leaseTransitions: 0,
      };
      await this.lock.create(record);
      this.observe(record, now);
      return true;
    }
    const old = current.record;
    if (!sameRecord(this.observed, old)) this.observe(old, now);
    const holder = old.holderIdentity ?? '';
    const iHold = holder === this.identity;
    if (holder && !iHold) {
      const durationMs = (old.leaseDurationSeconds ?? durationSeconds) * 1000;
      if (this.observedAt + durationMs > now) return false;
    }
    const record: LeaseRecord = {
      holderIdentity: this.identity,
      leaseDurationSeconds: durationSeconds,
      acquireTime: iHold && old.acquireTime ? old.acquireTime : microTime(now),
      renewTime: microTime(now),
      leaseTransitions: iHold ? (old.leaseTransitions ?? 0) : (old.leaseTransitions ?? 0) + 1,
    };
    await this.lock.update(record, current.resourceVersion);
    this.observe(record, now);
    return true;
  }

  private observe(record: LeaseRecord, now: number): void {
    this.observed = record;
    this.observedAt = now;
    const holder = record.holderIdentity;
    if (holder && holder !== this.lastLeader) {
      this.lastLeader = holder;
      this.call(() => this.callbacks.onNewLeader?.(holder));
    }
  }

  /** Hand the lease back: empty holder, 1 s duration, so any candidate may take it now. */
  private async release(): Promise<void> {
    try {
      const current = await this.lock.get();
      if (!current || current.record.holderIdentity !== this.identity) return;
      const now = this.clock.now();
      await this.lock.update(
        {
          holderIdentity: '',
          leaseDurationSeconds: 1,
          acquireTime: microTime(now),
          renewTime: microTime(now),
          leaseTransitions: current.record.leaseTransitions ?? 0,
        },
        current.resourceVersion,
      );
      this.logger.info('released the lease');
    } catch (err) {
      this.logger.warn({ err: errorMessage(err) }, 'could not release the lease');
    }
  }

  private call(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.logger.error({ err: errorMessage(err) }, 'leader election callback threw');
    }
  }
}
