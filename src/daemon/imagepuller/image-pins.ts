// Pins on the images the agent pre-pulled, so kubelet's image GC (by disk threshold, or by age since KEP-4210)
// never removes an image whose tag is in the node's NodeImage and Succeeded. The controller says which references
// it wants pinned (want()); this keeps the runtime's labels in step, one change at a time:
// - a wanted reference is pinned and marked ours (apps.kruise.io/pinned-by=kruise-daemon beside the runtime's
//   pinned label); one the runtime or an admin pinned already (the sandbox image) is left as it is, never marked;
// - a reference of ours that is no longer wanted is unpinned: both labels removed, and only when the mark is ours;
// - what is ours is read back from the runtime when the agent starts, so pins made by an earlier agent are kept
//   while still wanted and released when not (an agent killed between pull and pin pins at its first reconcile).
// A pin or unpin that fails is a state with its message (the tag's status says it; the pull stays Succeeded),
// tried again after `retryMs`.
import type { ImageLabelStore } from '../../cri/containerd-images.js';
import { CONTAINERD_PINNED_LABEL, CONTAINERD_PINNED_VALUE } from '../../cri/containerd-images.js';
import type { Logger } from '../../observability/logger.js';
import type { Clock, TimerHandle } from '../../util/clock.js';
import { errorMessage } from '../../util/error-message.js';
import { SerialRun } from '../../util/serial-run.js';

/** The mark on a reference the agent pinned; a pin without it is the runtime's or an admin's, never touched. */
export const PINNED_BY_LABEL = 'apps.kruise.io/pinned-by';
export const PINNED_BY_VALUE = 'kruise-daemon';

export const PIN_RETRY_MS = 30_000;

/** A wanted reference's pin. */
export type PinState =
  | { kind: 'pinned' }
  /** Pinned by the runtime or an admin (no mark of ours): left alone, and kept pinned. */
  | { kind: 'pinned-by-others' }
  /** The runtime has no such reference (removed since it was pulled); pinned once it is pulled again. */
  | { kind: 'missing' }
  | { kind: 'failed'; message: string }
  /** The runtime offers no way to pin (its reason). */
  | { kind: 'unsupported'; message: string };

export type PinStore = ImageLabelStore | { unsupported: string };

export type PinCounts = Record<PinState['kind'], number>;

export interface ImagePinsOptions {
  /** containerd's image labels, or why the runtime cannot pin; asked once, when the runtime is connected. */
  store: (signal: AbortSignal) => Promise<PinStore>;
  clock: Clock;
  logger: Logger;
  /** A wanted reference's state changed. */
  onChange: () => void;
  /** A pin or unpin failed (once per reference and message). */
  onFailure?: (reference: string, action: 'pin' | 'unpin', message: string) => void;
  retryMs?: number;
}

export class ImagePins {
  private wanted = new Set<string>();
  private readonly states = new Map<string, PinState>();
  /** References carrying our mark, as far as we know; read from the runtime on the first sync. */
  private ours: Set<string> | undefined;
  /** Unpins that failed, by reference (tried again with the next sync). */
  private readonly unpinFailures = new Map<string, string>();
  private readonly sync = new SerialRun(
    () => this.syncOnce(),
    () => !this.closed,
  );
  private retry: TimerHandle | undefined;
  private closed = false;
  private readonly closing = new AbortController();
  private store: PinStore | undefined;
  private readonly log: Logger;

  constructor(private readonly options: ImagePinsOptions) {
    this.log = options.logger.child({ component: 'image-pins' });
  }

  /** The pin of a wanted reference; undefined until its first pin attempt ended. */
  state(reference: string): PinState | undefined {
    return this.states.get(reference);
  }

  /** References of ours the runtime holds, as far as known (for metrics and tests). */
  pinnedByUs(): ReadonlySet<string> {
    return this.ours ?? new Set();
  }

  counts(): PinCounts {
    const counts: PinCounts = { pinned: 0, 'pinned-by-others': 0, missing: 0, failed: 0, unsupported: 0 };
    for (const reference of this.wanted) {
      const state = this.states.get(reference);
      if (state) counts[state.kind]++;
    }
    return counts;
  }

  /** The references to keep pinned now (every tag in the spec and Succeeded); the rest of ours are released. */
  want(references: Iterable<string>): void {
    const next = new Set(references);
    const same = next.size === this.wanted.size && [...next].every((r) => this.wanted.has(r));
    const unsettled = [...next].some((r) => {
      const kind = this.states.get(r)?.kind;
      return kind === undefined || kind === 'missing';
    });
    if (same && !unsettled && this.ours !== undefined) return;
    this.wanted = next;
    for (const reference of [...this.states.keys()]) if (!next.has(reference)) this.states.delete(reference);
    this.kick();
  }

  /** Settled: no sync running or queued (tests and shutdown). */
  async idle(): Promise<void> {
    await this.sync.idle();
  }

  close(): void {
    this.closed = true;
    this.closing.abort(new Error('the image puller stopped'));
    this.retry?.cancel();
    if (this.store && !('unsupported' in this.store)) this.store.close?.();
  }

  private kick(): void {
    this.sync.run();
  }

  private async syncOnce(): Promise<void> {
    if (this.store === undefined) {
      try {
        this.store = await this.options.store(this.closing.signal);
      } catch {
        return; // closed before the runtime was connected
      }
    }
    const store = this.store;
    if ('unsupported' in store) {
      let changed = false;
      for (const reference of this.wanted) {
        if (this.states.get(reference)?.kind === 'unsupported') continue;
        this.states.set(reference, { kind: 'unsupported', message: store.unsupported });
        changed = true;
      }
      if (changed) this.options.onChange();
      return;
    }
    if (this.ours === undefined) {
      try {
        const listed = await store.listLabelled(PINNED_BY_LABEL, PINNED_BY_VALUE);
        this.ours = new Set(listed.map((image) => image.name));
        if (this.ours.size > 0) this.log.info({ pins: this.ours.size }, 'pins of an earlier agent found');
      } catch (err) {
        // without knowing what is ours nothing is released; pins are still made
        this.log.warn({ err: errorMessage(err) }, 'cannot list the pins of an earlier agent; trying again later');
        this.scheduleRetry();
      }
    }
    let changed = false;
    let failed = false;
    for (const reference of this.wanted) {
      if (this.closed) return;
      const before = this.states.get(reference);
      if (before?.kind === 'pinned' || before?.kind === 'pinned-by-others') continue;
      if (before?.kind === 'failed' && this.retry !== undefined) continue; // waits for the retry
      const after = await this.pin(store, reference);
      if (after.kind === 'failed') failed = true;
      if (JSON.stringify(after) !== JSON.stringify(before)) {
        this.states.set(reference, after);
        changed = true;
      }
    }
    for (const reference of [...(this.ours ?? [])]) {
      if (this.closed) return;
      if (this.wanted.has(reference)) continue;
      if (!(await this.unpin(store, reference))) failed = true;
    }
    if (failed) this.scheduleRetry();
    if (changed) this.options.onChange();
  }

  private async pin(store: ImageLabelStore, reference: string): Promise<PinState> {
    try {
      const image = await store.get(reference);
      if (!image) return { kind: 'missing' };
      const pinned = image.labels[CONTAINERD_PINNED_LABEL] === CONTAINERD_PINNED_VALUE;
      const markedOurs = image.labels[PINNED_BY_LABEL] === PINNED_BY_VALUE;
      if (pinned && !markedOurs) return { kind: 'pinned-by-others' };
      if (!pinned || !markedOurs) {
        await store.setLabels(image, {
          [CONTAINERD_PINNED_LABEL]: CONTAINERD_PINNED_VALUE,
          [PINNED_BY_LABEL]: PINNED_BY_VALUE,
        });
        this.log.info({ reference }, 'image pinned (kubelet image GC skips it)');
      }
      this.ours?.add(reference);
      return { kind: 'pinned' };
    } catch (err) {
      const message = errorMessage(err);
      const before = this.states.get(reference);
      if (before?.kind !== 'failed' || before.message !== message) {
        this.log.warn({ reference, err: message }, 'pinning the image failed; kubelet image GC may remove it');
        this.options.onFailure?.(reference, 'pin', message);
      }
      return { kind: 'failed', message };
    }
  }

  /** Release a pin of ours; false when it failed (tried again later). */
  private async unpin(store: ImageLabelStore, reference: string): Promise<boolean> {
    try {
      const image = await store.get(reference);
      if (image && image.labels[PINNED_BY_LABEL] === PINNED_BY_VALUE) {
        await store.setLabels(image, { [CONTAINERD_PINNED_LABEL]: '', [PINNED_BY_LABEL]: '' });
        this.log.info({ reference }, 'image unpinned (its tag left the NodeImage)');
      }
      this.ours?.delete(reference);
      this.unpinFailures.delete(reference);
      return true;
    } catch (err) {
      const message = errorMessage(err);
      if (this.unpinFailures.get(reference) !== message) {
        this.unpinFailures.set(reference, message);
        this.log.warn({ reference, err: message }, 'unpinning the image failed; trying again later');
        this.options.onFailure?.(reference, 'unpin', message);
      }
      return false;
    }
  }

  private scheduleRetry(): void {
    if (this.retry || this.closed) return;
    this.retry = this.options.clock.setTimer(() => {
      this.retry = undefined;
      this.kick();
    }, this.options.retryMs ?? PIN_RETRY_MS);
  }
}

/** Release every pin of ours on this runtime (`kruise-daemon pins release`); the references released. */
export async function releaseAllPins(store: ImageLabelStore): Promise<string[]> {
  const ours = await store.listLabelled(PINNED_BY_LABEL, PINNED_BY_VALUE);
  for (const image of ours) {
    await store.setLabels(image, { [CONTAINERD_PINNED_LABEL]: '', [PINNED_BY_LABEL]: '' });
  }
  return ours.map((image) => image.name).sort();
}
