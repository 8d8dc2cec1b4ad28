// containerd's own image metadata service (proto/containerd/images.proto) on the runtime's socket, in the CRI
// plugin's namespace (k8s.io): the image puller reads and writes the labels that pin an image. CRI has no call for
// pinning; containerd's CRI plugin reports an image pinned (CRI Image.pinned, which kubelet's image GC never
// removes) when one of its references carries io.cri-containerd.pinned=pinned, and it sees a label change a moment
// later (its event monitor refreshes the reference on the runtime's ImageUpdate event). Another runtime answers Unimplemented: `unsupported` then.
import { isRecord } from '../util/is-record.js';
import {
  ContainerdApiError,
  ContainerdChannel,
  containerdService,
  labelFilter,
  stringLabels,
} from './containerd-api.js';

export { CRI_CONTAINERD_NAMESPACE } from './containerd-api.js';
/** The label of an image reference that containerd's CRI plugin reads as pinned (with the value `pinned`). */
export const CONTAINERD_PINNED_LABEL = 'io.cri-containerd.pinned';
export const CONTAINERD_PINNED_VALUE = 'pinned';

/** An image reference's target (its manifest or index) as containerd describes it. */
export interface ContainerdDescriptor {
  media_type: string;
  digest: string;
  /** Bytes, as a decimal string (int64). */
  size: string;
}

/** An image reference's record in containerd's metadata (the fields the agent reads). */
export interface ContainerdImage {
  name: string;
  labels: Record<string, string>;
  target: ContainerdDescriptor;
}

/** What the pins need of containerd's image metadata: a port, so tests can give a map. */
export interface ImageLabelStore {
  /** The reference's record; undefined when containerd has no such reference. */
  get(name: string): Promise<ContainerdImage | undefined>;
  /** Every reference with this label set to this value. */
  listLabelled(key: string, value: string): Promise<ContainerdImage[]>;
  /**
   * Set each label of the image (as `get` returned it) to its value; an empty value removes the label. The record is
   * sent whole, target included: containerd 2.4.2 dereferences the target of every Update and crashes without one.
   */
  setLabels(image: ContainerdImage, labels: Record<string, string>): Promise<void>;
  /** Let go of the connection, if the store holds one. */
  close?(): void;
}

const IMAGES = ['Get', 'List', 'Update'] as const;

function imageService() {
  return containerdService('images.proto', 'containerd.services.images.v1.Images', IMAGES);
}

function imageOf(value: unknown): ContainerdImage | undefined {
  if (!isRecord(value) || typeof value.name !== 'string' || value.name === '') return undefined;
  const labels = stringLabels(value);
  const target = isRecord(value.target) ? value.target : {};
  const text = (field: unknown): string => (typeof field === 'string' ? field : '');
  return {
    name: value.name,
    labels,
    target: { media_type: text(target.media_type), digest: text(target.digest), size: text(target.size) || '0' },
  };
}

/** containerd's Images service on a unix socket (the CRI socket of a containerd node), namespace k8s.io. */
export class ContainerdImages implements ImageLabelStore {
  private readonly channel: ContainerdChannel;

  constructor(socket: string | ContainerdChannel) {
    imageService();
    this.channel = typeof socket === 'string' ? new ContainerdChannel(socket) : socket;
  }

  get socketPath(): string {
    return this.channel.socketPath;
  }

  async get(name: string): Promise<ContainerdImage | undefined> {
    try {
      const response = await this.channel.unary(imageService().Get, { name });
      return isRecord(response) ? imageOf(response.image) : undefined;
    } catch (err) {
      if (err instanceof ContainerdApiError && err.code === 'NotFound') return undefined;
      throw err;
    }
  }

  async listLabelled(key: string, value: string): Promise<ContainerdImage[]> {
    const response = await this.channel.unary(imageService().List, { filters: [labelFilter(key, value)] });
    const images = isRecord(response) && Array.isArray(response.images) ? response.images : [];
    return images.map(imageOf).filter((image): image is ContainerdImage => image !== undefined);
  }

  async setLabels(image: ContainerdImage, labels: Record<string, string>): Promise<void> {
    const paths = Object.keys(labels).map((key) => `labels.${key}`);
    if (paths.length === 0) return;
    if (image.target.digest === '') {
      // never send an Update without a target (see the interface): containerd would crash on it
      throw new ContainerdApiError('Other', `image ${image.name} has no target in containerd; not updated`);
    }
    await this.channel.unary(imageService().Update, {
      image: { name: image.name, labels: { ...image.labels, ...labels }, target: image.target },
      update_mask: { paths },
    });
  }

  close(): void {
    this.channel.close();
  }
}
