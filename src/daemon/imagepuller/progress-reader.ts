// The running pulls, read from containerd's content store (pull-progress.ts) every second for all of them at once
// (local calls, and only while something pulls). Each reading tells the disk check what each pull will still add:
// taken in the order the pulls started, one that would take the image filesystem past kubelet's GC threshold, on
// top of the ones before it, is refused (stopped, Failed) within a second of its manifest landing, before its
// layers are unpacked. Progress is published every `intervalMs` (5 s) only: `onMoved` once per publication when
// any pull moved (the controller then writes one status). A runtime without a content store gives neither; a
// reading that fails keeps what each pull said.
import type { ContentStore } from '../../cri/containerd-content.js';
import type { Logger } from '../../observability/logger.js';
import { repeatEvery, type Clock } from '../../util/clock.js';
import { errorMessage } from '../../util/error-message.js';
import { bytesStillToLand, percentOf, pullBytes } from './pull-progress.js';
import type { ImageFsGuard } from './image-fs.js';
import type { TagPull } from './tag-pull.js';

/** Progress of running pulls is written at most this often. */
export const PROGRESS_INTERVAL_MS = 5_000;
/** Running pulls are read this often (their size against the disk). */
export const PULL_READ_INTERVAL_MS = 1_000;

export interface ProgressReaderOptions {
  store: (signal: AbortSignal) => Promise<ContentStore | undefined>;
  running: () => Iterable<Pick<TagPull, 'pullingSince' | 'setProgress' | 'spec' | 'refuse'>>;
  onMoved: () => void;
  /** The disk check, read afresh at each reading: a pull whose bytes would cross the threshold is refused. */
  disk?: Pick<ImageFsGuard, 'wouldCross' | 'check'>;
  clock: Clock;
  logger: Logger;
  intervalMs?: number;
}

export class ProgressReader {
  private readonly stopping = new AbortController();
  private loop: Promise<void> | undefined;
  private store: ContentStore | undefined | null = null;
  /** When progress was last due for publication (every intervalMs from the start). */
  private publishedAt = 0;

  constructor(private readonly options: ProgressReaderOptions) {}

  start(): void {
    this.publishedAt = this.options.clock.now();
    this.loop ??= repeatEvery(this.options.clock, PULL_READ_INTERVAL_MS, this.stopping.signal, () => this.read());
  }

  async stop(): Promise<void> {
    this.stopping.abort(new Error('the image puller stopped'));
    await this.loop;
    this.store?.close?.();
  }

  private async read(): Promise<void> {
    const now = this.options.clock.now();
    const publish = now - this.publishedAt >= (this.options.intervalMs ?? PROGRESS_INTERVAL_MS);
    if (publish) this.publishedAt = now;
    const running = [...this.options.running()].filter((pull) => pull.pullingSince !== undefined);
    if (running.length === 0) return;
    try {
      if (this.store === null) this.store = await this.options.store(this.stopping.signal);
      const store = this.store;
      if (!store) return;
      // the filesystem as it is now (the guard's own reading is every 10 s; pulls fill it faster)
      await this.options.disk?.check(this.stopping.signal);
      let moved = false;
      let ahead = 0; // what the pulls started before this one will still add
      running.sort((a, b) => (a.pullingSince ?? 0) - (b.pullingSince ?? 0));
      for (const pull of running) {
        const since = pull.pullingSince;
        if (since === undefined) continue;
        const bytes = await pullBytes(store, pull.spec, since);
        if (bytes === undefined) continue;
        const toLand = bytesStillToLand(bytes);
        const crossing = this.options.disk?.wouldCross(ahead + toLand);
        if (crossing !== undefined && bytes.totalBytes > 0) {
          pull.refuse(
            `not pulled: its manifest names ${(bytes.totalBytes / 1024 / 1024).toFixed(1)} MiB of layers, and ` +
              `with them unpacked ${crossing}`,
          );
          continue;
        }
        ahead += toLand;
        if (publish && pull.setProgress(percentOf(bytes))) moved = true;
      }
      if (moved) this.options.onMoved();
    } catch (err) {
      if (!this.stopping.signal.aborted) {
        this.options.logger.debug({ err: errorMessage(err) }, 'cannot read the progress of the running pulls');
      }
    }
  }
}
