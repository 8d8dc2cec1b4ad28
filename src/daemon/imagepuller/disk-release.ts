// Which pins the image puller gives up for disk space. At each reading of the image filesystem (image-fs.ts) above
// kubelet's high threshold, pins are released, oldest tags first (a NodeImage tag has no priority; its createdAt
// orders them), until the images they hold add up to what kubelet's GC must free to reach the low threshold (the
// image sizes from CRI ListImages); pins released at an earlier reading count, since kubelet's GC may not have run
// since. Below the low threshold again, every released pin is taken back (those whose images are still here).
// The controller asks `reasonFor` when it decides what to pin and what a tag's status says.
import type { Logger } from '../../observability/logger.js';
import { errorMessage } from '../../util/error-message.js';
import type { ImageFsGuard } from './image-fs.js';
import type { ImageListRuntime } from './image-presence.js';

export interface DiskReleaseOptions {
  disk: Pick<ImageFsGuard, 'usage' | 'lowPercent' | 'excessBytes' | 'full'>;
  runtime: (signal: AbortSignal) => Promise<ImageListRuntime>;
  signal: AbortSignal;
  logger: Logger;
  /** The references whose pins are held now, each with when its oldest tag was added to the spec (ms). */
  pinned: () => Map<string, number>;
  /** A pin was released (an event is due). */
  onReleased: (reference: string, reason: string) => void;
  /** The released set changed: the pins and the statuses follow. */
  onChange: () => void;
}

export class DiskRelease {
  /** References whose pin was released for disk space, with the reason (not pinned again while it holds). */
  private readonly released = new Map<string, string>();
  private following = false;

  constructor(private readonly options: DiskReleaseOptions) {}

  /** Why the pin of `reference` was released for disk space, if it was. */
  reasonFor(reference: string): string | undefined {
    return this.released.get(reference);
  }

  /** The image of `reference` left the node: forget its release, returning the reason it had. */
  take(reference: string): string | undefined {
    const reason = this.released.get(reference);
    this.released.delete(reference);
    return reason;
  }

  clear(): void {
    this.released.clear();
  }

  /** Decide on the pins after a reading of the image filesystem (one decision at a time). */
  async follow(): Promise<void> {
    if (this.following) return;
    this.following = true;
    try {
      await this.decide();
    } catch (err) {
      this.options.logger.warn({ err: errorMessage(err) }, 'cannot decide which pins to release for disk space');
    } finally {
      this.following = false;
    }
  }

  private async decide(): Promise<void> {
    const { disk } = this.options;
    const usage = disk.usage();
    if (!usage) return;
    if (usage.percent < disk.lowPercent && this.released.size > 0) {
      this.options.logger.info(
        { percent: usage.percent.toFixed(1) },
        'the image filesystem has room again; pinning again',
      );
      this.released.clear();
      this.options.onChange();
      return;
    }
    const excess = disk.excessBytes();
    if (excess <= 0) return;
    const pinned = this.options.pinned();
    const candidates = [...pinned.keys()].filter((reference) => !this.released.has(reference));
    if (candidates.length === 0) return;
    const sizes = new Map<string, number>();
    const runtime = await this.options.runtime(this.options.signal);
    for (const image of (await runtime.listImages({})).images ?? []) {
      for (const name of [...(image.repo_tags ?? []), ...(image.repo_digests ?? [])]) {
        sizes.set(name, Number(image.size ?? 0));
      }
    }
    candidates.sort((a, b) => (pinned.get(a) ?? 0) - (pinned.get(b) ?? 0) || a.localeCompare(b));
    const reason = disk.full() ?? `the image filesystem is ${usage.percent.toFixed(1)}% full`;
    let freed = [...this.released.keys()].reduce((sum, reference) => sum + (sizes.get(reference) ?? 0), 0);
    for (const reference of candidates) {
      if (freed >= excess) break;
      this.released.set(reference, reason);
      freed += sizes.get(reference) ?? 0;
      this.options.logger.warn({ reference, reason }, 'pin released for disk space');
      this.options.onReleased(reference, reason);
    }
    this.options.onChange();
  }
}
