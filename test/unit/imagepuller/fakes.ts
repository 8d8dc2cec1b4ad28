// Fakes for the image puller's unit tests: a CRI image service whose pulls the test scripts (succeed, fail, hang
// until cancelled) and a secret reader backed by a map.
import { status as GrpcStatus } from '@grpc/grpc-js';
import type { CriCallOptions } from '../../../src/cri/client.js';
import { toCriError } from '../../../src/cri/errors.js';
import type {
  ListImagesResponse__Output,
  ImageFsInfoResponse__Output,
  ImageStatusRequest,
  ImageStatusResponse__Output,
  PullImageRequest,
  PullImageResponse__Output,
} from '../../../src/cri/types.js';
import type { ContainerdImage, ImageLabelStore } from '../../../src/cri/containerd-images.js';
import type { ContentInfo, ContentStore, IngestStatus } from '../../../src/cri/containerd-content.js';
import type { PullSecretObject } from '../../../src/daemon/imagepuller/docker-keyring.js';
import type { ImageRuntime } from '../../../src/daemon/imagepuller/tag-pull.js';

/** What one PullImage call does: resolve with an image id, fail with a runtime message, or hang until cancelled. */
export type PullBehaviour = { id: string } | { fail: string; code?: number } | 'hang';

export interface RecordedPull {
  request: PullImageRequest;
  timeoutMs?: number | undefined;
  /** The containerd lease the call was made under. */
  lease?: string | undefined;
  /** Set when the call ended: ok, error or cancelled. */
  outcome?: 'ok' | 'error' | 'cancelled' | undefined;
}

export class FakeImageRuntime implements ImageRuntime {
  readonly pulls: RecordedPull[] = [];
  readonly present = new Map<string, string>();
  /** Per image reference, the behaviour of successive calls (the last one repeats); default succeed. */
  readonly script = new Map<string, PullBehaviour[]>();
  private readonly calls = new Map<string, number>();
  private readonly hanging = new Set<() => void>();
  inFlight = 0;
  maxInFlight = 0;

  pullImage(request: PullImageRequest, options: CriCallOptions = {}): Promise<PullImageResponse__Output> {
    const image = request.image?.image ?? '';
    const record: RecordedPull = { request, timeoutMs: options.timeoutMs, lease: options.containerdLease };
    this.pulls.push(record);
    const n = this.calls.get(image) ?? 0;
    this.calls.set(image, n + 1);
    const steps = this.script.get(image) ?? [{ id: `sha256:${'a'.repeat(64)}` }];
    const step = steps[Math.min(n, steps.length - 1)]!;
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    const end = (outcome: RecordedPull['outcome']): void => {
      record.outcome = outcome;
      this.inFlight--;
    };
    const context = { method: 'PullImage', image, withCredentials: Boolean(request.auth) };
    return new Promise((resolve, reject) => {
      const cancel = (): void => {
        end('cancelled');
        reject(toCriError({ code: GrpcStatus.CANCELLED, details: 'Cancelled on client' }, context));
      };
      if (options.signal?.aborted) {
        cancel();
        return;
      }
      if (step === 'hang') {
        const onAbort = (): void => {
          this.hanging.delete(onAbort);
          cancel();
        };
        this.hanging.add(onAbort);
        options.signal?.addEventListener('abort', onAbort, { once: true });
        return;
      }
      queueMicrotask(() => {
        if ('id' in step) {
          end('ok');
          this.present.set(image, step.id);
          resolve({ image_ref: step.id });
        } else {
          end('error');
          reject(toCriError({ code: step.code ?? GrpcStatus.UNKNOWN, details: step.fail }, context));
        }
      });
    });
  }

  imageStatus(request: ImageStatusRequest): Promise<ImageStatusResponse__Output> {
    const id = this.present.get(request.image?.image ?? '');
    return Promise.resolve({
      image: id ? ({ id } as ImageStatusResponse__Output['image']) : null,
      info: {},
    });
  }

  /** Every image present, each under the reference it was pulled as (its only repo tag). */
  listImages(): Promise<ListImagesResponse__Output> {
    this.lists++;
    const images = [...this.present].map(
      ([reference, id]) =>
        ({
          id,
          repo_tags: [reference],
          repo_digests: [],
          size: String(this.sizes.get(reference) ?? 0),
        }) as unknown as ListImagesResponse__Output['images'][number],
    );
    return Promise.resolve({ images });
  }

  lists = 0;
  /** Bytes of each image by the reference it was pulled as (ListImages' size). */
  readonly sizes = new Map<string, number>();

  /** The image filesystem: none unless a test sets one (the disk check is then off). */
  imageFs: { mountpoint: string; usedBytes: number } | undefined;

  imageFsInfo(): Promise<ImageFsInfoResponse__Output> {
    const fs = this.imageFs;
    return Promise.resolve({
      image_filesystems: fs
        ? [
            {
              timestamp: '0',
              fs_id: { mountpoint: fs.mountpoint },
              used_bytes: { value: String(fs.usedBytes) },
              inodes_used: null,
            },
          ]
        : [],
      container_filesystems: [],
    });
  }

  pullsOf(image: string): RecordedPull[] {
    return this.pulls.filter((p) => p.request.image?.image === image);
  }
}

export function secretReader(secrets: Record<string, PullSecretObject>): {
  read: (name: string) => Promise<PullSecretObject | undefined>;
  reads: string[];
} {
  const reads: string[] = [];
  return {
    reads,
    read: (name) => {
      reads.push(name);
      return Promise.resolve(secrets[name]);
    },
  };
}

/** A kubernetes.io/dockerconfigjson secret in kruise-daemon-config. */
export function dockerConfigSecret(
  name: string,
  auths: Record<string, { username?: string; password?: string; auth?: string }>,
): PullSecretObject {
  return {
    metadata: { name, namespace: 'kruise-daemon-config' },
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': Buffer.from(JSON.stringify({ auths })).toString('base64') },
  };
}

const FAKE_TARGET = { media_type: 'application/vnd.oci.image.index.v1+json', digest: 'sha256:0', size: '1' };

/** containerd's image labels as a map (reference → labels); `failNext` makes calls fail with a message. */
export class FakeLabelStore implements ImageLabelStore {
  readonly images = new Map<string, Record<string, string>>();

  /** With a runtime: its present images are the references (labels kept here), as on containerd. */
  constructor(private readonly runtime?: FakeImageRuntime) {}

  readonly writes: { name: string; labels: Record<string, string> }[] = [];
  /** When set, every setLabels fails with this message. */
  failWrites: string | undefined;
  closed = false;

  get(name: string): Promise<ContainerdImage | undefined> {
    if (this.runtime) {
      if (!this.runtime.present.has(name)) this.images.delete(name);
      else if (!this.images.has(name)) this.images.set(name, {});
    }
    const labels = this.images.get(name);
    return Promise.resolve(labels ? { name, labels: { ...labels }, target: FAKE_TARGET } : undefined);
  }

  listLabelled(key: string, value: string): Promise<ContainerdImage[]> {
    return Promise.resolve(
      [...this.images]
        .filter(([, labels]) => labels[key] === value)
        .map(([name, labels]) => ({ name, labels: { ...labels }, target: FAKE_TARGET })),
    );
  }

  setLabels(image: ContainerdImage, labels: Record<string, string>): Promise<void> {
    const name = image.name;
    if (image.target.digest === '') return Promise.reject(new Error('no target'));
    if (this.failWrites !== undefined) return Promise.reject(new Error(this.failWrites));
    const current = this.images.get(name);
    if (!current) return Promise.reject(new Error(`image "${name}": not found`));
    this.writes.push({ name, labels });
    for (const [key, value] of Object.entries(labels)) {
      if (value === '') delete current[key];
      else current[key] = value;
    }
    return Promise.resolve();
  }

  close(): void {
    this.closed = true;
  }
}

/** A sha256 digest made of one repeated character. */
export const fakeDigest = (c: string): string => `sha256:${c.repeat(64)}`;

/** containerd's content store as maps: committed blobs (with labels), their bytes, and ingests. */
export class FakeContent implements ContentStore {
  readonly blobs = new Map<string, ContentInfo>();
  readonly bytes = new Map<string, Buffer>();
  ingestList: IngestStatus[] = [];
  listLabelled(key: string, value: string): Promise<ContentInfo[]> {
    return Promise.resolve([...this.blobs.values()].filter((b) => b.labels[key] === value));
  }
  info(d: string): Promise<ContentInfo | undefined> {
    return Promise.resolve(this.blobs.get(d));
  }
  read(d: string): Promise<Buffer> {
    return Promise.resolve(this.bytes.get(d) ?? Buffer.alloc(0));
  }
  ingests(): Promise<IngestStatus[]> {
    return Promise.resolve(this.ingestList);
  }
  manifest(c: string, source: Record<string, string>, layers: { d: string; size: number }[], updatedAt: number): void {
    const m = {
      config: { digest: fakeDigest('c'), size: 100 },
      layers: layers.map((l) => ({ digest: l.d, size: l.size })),
    };
    const labels: Record<string, string> = { ...source };
    layers.forEach((l, i) => (labels[`containerd.io/gc.ref.content.l.${i}`] = l.d));
    this.blobs.set(fakeDigest(c), { digest: fakeDigest(c), size: 300, updatedAt, labels });
    this.bytes.set(fakeDigest(c), Buffer.from(JSON.stringify(m)));
  }
}
