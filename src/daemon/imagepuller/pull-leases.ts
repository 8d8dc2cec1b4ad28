// Leases of the image puller's pulls on containerd (src/cri/containerd-leases.ts): each tag pull runs its CRI
// PullImage under a lease of its own, so what a pull fetched stays when the agent cancels it (to let kubelet's pull go
// first) and the next attempt fetches only the rest. The lease is let go when the pull ends: the image then holds its
// content, and a failed or stopped pull's content is left to containerd's collector. Leases carry our mark and
// containerd.io/gc.expire (24 h, the expiry containerd gives its own pull leases), and the first use deletes those an
// earlier agent left. Another runtime has no leases: pulls run without one and are not paused for kubelet.
import { randomUUID } from 'node:crypto';
import { CONTAINERD_GC_EXPIRE_LABEL, type LeaseStore } from '../../cri/containerd-leases.js';
import type { Logger } from '../../observability/logger.js';
import type { Clock } from '../../util/clock.js';
import { errorMessage } from '../../util/error-message.js';

/** The mark on a lease of the image puller. */
export const LEASE_OF_LABEL = 'apps.kruise.io/lease-of';
export const LEASE_OF_VALUE = 'kruise-daemon';
export const PULL_LEASE_TTL_MS = 24 * 3600_000;

export interface PullLease {
  id: string;
  /** Delete the lease (errors are logged, never thrown). */
  release(): Promise<void>;
}

export interface PullLeasesOptions {
  /** containerd's lease service once the runtime is connected; undefined on a runtime without leases. */
  store: (signal: AbortSignal) => Promise<LeaseStore | undefined>;
  clock: Clock;
  logger: Logger;
}

export class PullLeases {
  private store: Promise<LeaseStore | undefined> | undefined;
  private readonly log: Logger;
  private warned = '';
  private closed = false;

  constructor(private readonly options: PullLeasesOptions) {
    this.log = options.logger.child({ component: 'pull-leases' });
  }

  /** A new lease for one pull; undefined when the runtime has none or it could not be made (the pull goes on). */
  async take(signal: AbortSignal): Promise<PullLease | undefined> {
    const store = await this.connected(signal);
    if (!store || this.closed) return undefined;
    const id = `${LEASE_OF_VALUE}-pull-${randomUUID()}`;
    const expires = new Date(this.options.clock.now() + PULL_LEASE_TTL_MS).toISOString();
    try {
      await store.create(id, { [LEASE_OF_LABEL]: LEASE_OF_VALUE, [CONTAINERD_GC_EXPIRE_LABEL]: expires });
    } catch (err) {
      this.warnOnce(
        errorMessage(err),
        'cannot make a lease for a pull; it runs without one and is not paused for kubelet',
      );
      return undefined;
    }
    return {
      id,
      release: async () => {
        try {
          await store.delete(id);
        } catch (err) {
          this.log.warn(
            { lease: id, err: errorMessage(err) },
            'cannot delete a pull lease; containerd drops it when it expires',
          );
        }
      },
    };
  }

  close(): void {
    this.closed = true;
    void this.store?.then((store) => store?.close?.());
  }

  private connected(signal: AbortSignal): Promise<LeaseStore | undefined> {
    this.store ??= this.connect(signal);
    const store = this.store;
    // a connect cancelled by one pull's stop is tried again by the next
    store.catch(() => {
      if (this.store === store) this.store = undefined;
    });
    return store;
  }

  private async connect(signal: AbortSignal): Promise<LeaseStore | undefined> {
    const store = await this.options.store(signal);
    if (!store) return undefined;
    try {
      const earlier = await store.listLabelled(LEASE_OF_LABEL, LEASE_OF_VALUE);
      for (const lease of earlier) await store.delete(lease.id);
      if (earlier.length > 0) this.log.info({ leases: earlier.length }, 'pull leases of an earlier agent deleted');
    } catch (err) {
      this.warnOnce(errorMessage(err), 'cannot list the pull leases of an earlier agent; they expire on their own');
    }
    return store;
  }

  private warnOnce(err: string, message: string): void {
    if (this.warned === err) return;
    this.warned = err;
    this.log.warn({ err }, message);
  }
}
