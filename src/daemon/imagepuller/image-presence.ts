// Is every image the NodeImage reports Succeeded still on the node? kubelet's image GC (of an image that could not
// be pinned), `crictl rmi` or an admin may remove one at any time; the status must not go on saying Succeeded.
// One CRI ListImages every `intervalMs` while there is a Succeeded tag (a local call: the runtime answers from
// memory), compared with the references the tags were pulled as; what is missing is handed to `onGone`.
// Runtime-neutral: the same on containerd and CRI-O.
import type { CriCallOptions } from '../../cri/client.js';
import type { ListImagesRequest, ListImagesResponse__Output } from '../../cri/types.js';
import type { Logger } from '../../observability/logger.js';
import { repeatEvery, type Clock } from '../../util/clock.js';
import { errorMessage } from '../../util/error-message.js';

export const PRESENCE_CHECK_INTERVAL_MS = 5_000;
const LIST_TIMEOUT_MS = 10_000;

export interface ImageListRuntime {
  listImages(request?: ListImagesRequest, options?: CriCallOptions): Promise<ListImagesResponse__Output>;
}

export interface ImagePresenceOptions {
  runtime: (signal: AbortSignal) => Promise<ImageListRuntime>;
  clock: Clock;
  logger: Logger;
  /** The references of the Succeeded tags now. */
  references: () => ReadonlySet<string>;
  /** References the runtime no longer has. */
  onGone: (references: string[]) => void;
  intervalMs?: number;
}

/** Every name the runtime knows an image by: its tags, its digests and its id. */
export function namesOnNode(response: ListImagesResponse__Output): Set<string> {
  const names = new Set<string>();
  for (const image of response.images ?? []) {
    if (image.id) names.add(image.id);
    for (const tag of image.repo_tags ?? []) names.add(tag);
    for (const digest of image.repo_digests ?? []) names.add(digest);
  }
  return names;
}

export class ImagePresence {
  private readonly stopping = new AbortController();
  private loop: Promise<void> | undefined;
  private lastError = '';
  private readonly log: Logger;

  constructor(private readonly options: ImagePresenceOptions) {
    this.log = options.logger.child({ component: 'image-presence' });
  }

  start(): void {
    const signal = this.stopping.signal;
    this.loop ??= repeatEvery(this.options.clock, this.options.intervalMs ?? PRESENCE_CHECK_INTERVAL_MS, signal, () =>
      this.check(signal),
    );
  }

  async stop(): Promise<void> {
    this.stopping.abort(new Error('stopping'));
    await this.loop;
  }

  /** One check now (the loop's step; tests call it directly). */
  async check(signal: AbortSignal = this.stopping.signal): Promise<void> {
    const wanted = this.options.references();
    if (wanted.size === 0) return;
    try {
      const runtime = await this.options.runtime(signal);
      const names = namesOnNode(await runtime.listImages({}, { timeoutMs: LIST_TIMEOUT_MS, signal }));
      this.lastError = '';
      // the set may have changed while the runtime answered: only what is still wanted counts
      const current = this.options.references();
      const gone = [...wanted].filter((reference) => current.has(reference) && !names.has(reference));
      if (gone.length > 0) this.options.onGone(gone);
    } catch (err) {
      if (signal.aborted) return;
      const message = errorMessage(err);
      if (message !== this.lastError) {
        this.lastError = message;
        this.log.warn({ err: message }, 'cannot list the images on the node; checking again later');
      }
    }
  }
}
