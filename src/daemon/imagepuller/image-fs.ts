// The disk comes first: pins and pre-pulls must never push the node's image filesystem into kubelet's image GC or
// DiskPressure. Every `intervalMs` (and on demand) the runtime names its image filesystem (CRI ImageFsInfo: the
// mountpoint and the bytes its images use) and statfs(2) of that mountpoint, seen under `fsRoot`, gives the
// capacity and what is free, as kubelet's cadvisor reads them (usage = capacity - available). At or above kubelet's
// imageGCHighThresholdPercent (our flag of the same name, kubelet's default 85: kubelet's own setting is not
// readable without the node proxy API, which the agent is not given) a new pre-pull waits, and the controller
// releases pins until what they hold would bring the filesystem down to the low threshold (80) once kubelet's GC
// removes them. A pull already running whose manifest says it would cross the high threshold is stopped and Failed
// (wouldCross; the size comes from its manifest in containerd's content store, progress-reader.ts). A runtime that
// names no filesystem, or a mountpoint the agent cannot see, turns the check off, said once in the log and in
// `problem()`.
import { statfs } from 'node:fs/promises';
import { join } from 'node:path';
import type { CriCallOptions } from '../../cri/client.js';
import type { ImageFsInfoRequest, ImageFsInfoResponse__Output } from '../../cri/types.js';
import type { Logger } from '../../observability/logger.js';
import { repeatEvery, type Clock } from '../../util/clock.js';
import { WakeList } from '../../util/wake-list.js';
import { errorMessage } from '../../util/error-message.js';

export const DEFAULT_IMAGE_GC_HIGH_THRESHOLD_PERCENT = 85;
export const DEFAULT_IMAGE_GC_LOW_THRESHOLD_PERCENT = 80;
export const IMAGE_FS_CHECK_INTERVAL_MS = 10_000;

export interface ImageFsRuntime {
  imageFsInfo(request?: ImageFsInfoRequest, options?: CriCallOptions): Promise<ImageFsInfoResponse__Output>;
}

export interface FsSpace {
  capacityBytes: number;
  availableBytes: number;
}

export interface ImageFsUsage extends FsSpace {
  mountpoint: string;
  /** Bytes the runtime's images use (ImageFsInfo). */
  imagesBytes: number;
  /** (capacity - available) / capacity, in percent, as kubelet computes it. */
  percent: number;
}

export interface ImageFsGuardOptions {
  runtime: (signal: AbortSignal) => Promise<ImageFsRuntime>;
  clock: Clock;
  logger: Logger;
  highPercent?: number;
  lowPercent?: number;
  /** Where the host's root is seen (the mountpoint is looked up below it); default `/`. */
  fsRoot?: string;
  /** statfs(2) of a path; a test gives its own. */
  space?: (path: string) => Promise<FsSpace>;
  /** The usage was read again (the controller decides on pins then). */
  onUsage?: (usage: ImageFsUsage) => void;
  /** The usage could not be read: the check is off (`problem()` says why). */
  onOff?: () => void;
  intervalMs?: number;
}

function mebibytes(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(bytes < 10 * 1024 * 1024 ? 1 : 0);
}

async function statfsSpace(path: string): Promise<FsSpace> {
  const stats = await statfs(path);
  return { capacityBytes: stats.blocks * stats.bsize, availableBytes: stats.bavail * stats.bsize };
}

export class ImageFsGuard {
  private last: ImageFsUsage | undefined;
  private lastProblem: string | undefined;
  /** The reading in flight, if any. */
  private reading: Promise<void> | undefined;
  private readonly waiters = new WakeList();
  private readonly stopping = new AbortController();
  private loop: Promise<void> | undefined;
  private readonly log: Logger;
  readonly highPercent: number;
  readonly lowPercent: number;

  constructor(private readonly options: ImageFsGuardOptions) {
    this.log = options.logger.child({ component: 'image-fs' });
    this.highPercent = options.highPercent ?? DEFAULT_IMAGE_GC_HIGH_THRESHOLD_PERCENT;
    this.lowPercent = Math.min(options.lowPercent ?? DEFAULT_IMAGE_GC_LOW_THRESHOLD_PERCENT, this.highPercent);
  }

  /** The last reading, if any. */
  usage(): ImageFsUsage | undefined {
    return this.last;
  }

  /** Why the check is off, if it is. */
  problem(): string | undefined {
    return this.lastProblem;
  }

  /** Why a new pre-pull must wait now (the filesystem at or above the high threshold), or undefined. */
  full(): string | undefined {
    const usage = this.last;
    if (!usage || usage.percent < this.highPercent) return undefined;
    return (
      `the image filesystem (${usage.mountpoint}) is ${usage.percent.toFixed(1)}% full; kubelet's image GC starts ` +
      `at ${this.highPercent}% (--image-gc-high-threshold-percent)`
    );
  }

  /**
   * Why `bytes` more on the image filesystem would take it to kubelet's high threshold (a pre-pull of that size must
   * not go on), or undefined when they fit or nothing is known of the filesystem.
   */
  wouldCross(bytes: number): string | undefined {
    const usage = this.last;
    if (!usage || bytes <= 0) return undefined;
    const after = ((usage.capacityBytes - usage.availableBytes + bytes) * 100) / usage.capacityBytes;
    if (after < this.highPercent) return undefined;
    return (
      `it would add about ${mebibytes(bytes)} MiB to the image filesystem (${usage.mountpoint}), ` +
      `${usage.percent.toFixed(1)}% full now, ${after.toFixed(1)}% after; kubelet's image GC starts at ` +
      `${this.highPercent}% (--image-gc-high-threshold-percent)`
    );
  }

  /** Bytes kubelet's GC would have to free to bring the filesystem down to the low threshold (0 when below high). */
  excessBytes(): number {
    const usage = this.last;
    if (!usage || usage.percent < this.highPercent) return 0;
    const used = usage.capacityBytes - usage.availableBytes;
    return Math.max(0, used - (usage.capacityBytes * this.lowPercent) / 100);
  }

  /** Resolves once the filesystem is below the high threshold (at once when it is); rejects when `signal` aborts. */
  async whenRoom(signal: AbortSignal): Promise<void> {
    if (this.full() === undefined) return;
    await this.waiters.wait(signal);
  }

  start(): void {
    const signal = this.stopping.signal;
    this.loop ??= repeatEvery(
      this.options.clock,
      this.options.intervalMs ?? IMAGE_FS_CHECK_INTERVAL_MS,
      signal,
      () => this.check(signal),
      true,
    );
  }

  async stop(): Promise<void> {
    this.stopping.abort(new Error('stopping'));
    await this.loop;
  }

  /**
   * Read the usage now. Callers at the same moment (the guard's own loop, the progress reader every second while
   * pulls run) share one reading.
   */
  check(signal: AbortSignal = this.stopping.signal): Promise<void> {
    this.reading ??= this.read(signal).finally(() => {
      this.reading = undefined;
    });
    return this.reading;
  }

  private async read(signal: AbortSignal): Promise<void> {
    try {
      const runtime = await this.options.runtime(signal);
      const info = await runtime.imageFsInfo({}, { signal, timeoutMs: 10_000 });
      const fs = info.image_filesystems?.[0];
      const mountpoint = fs?.fs_id?.mountpoint ?? '';
      if (mountpoint === '') throw new Error('the runtime names no image filesystem (CRI ImageFsInfo)');
      const path = join(this.options.fsRoot ?? '/', mountpoint);
      let space: FsSpace;
      try {
        space = await (this.options.space ?? statfsSpace)(path);
      } catch (err) {
        throw new Error(`cannot read the capacity of the image filesystem at ${path}: ${errorMessage(err)}`);
      }
      if (!(space.capacityBytes > 0)) throw new Error(`the image filesystem at ${path} reports no capacity`);
      const used = space.capacityBytes - space.availableBytes;
      this.last = {
        mountpoint,
        imagesBytes: Number(fs?.used_bytes?.value ?? 0),
        capacityBytes: space.capacityBytes,
        availableBytes: space.availableBytes,
        percent: (used / space.capacityBytes) * 100,
      };
      if (this.lastProblem !== undefined) this.log.info({ mountpoint }, 'the image filesystem can be read again');
      this.lastProblem = undefined;
      this.options.onUsage?.(this.last);
      if (this.full() === undefined) this.waiters.wakeAll();
    } catch (err) {
      if (signal.aborted) return;
      const message = errorMessage(err);
      if (message !== this.lastProblem) {
        this.log.warn({ err: message }, 'the disk check is off until the image filesystem can be read');
      }
      this.lastProblem = message;
      // without a reading nothing is held back: the check must never stop pre-pulls on its own failure
      this.last = undefined;
      this.options.onOff?.();
      this.waiters.wakeAll();
    }
  }
}
