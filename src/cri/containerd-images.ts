// containerd's own image metadata service (proto/containerd/images.proto) on the runtime's socket, in the CRI
// plugin's namespace (k8s.io): the image puller reads and writes the labels that pin an image. CRI has no call for
// pinning; containerd's CRI plugin reports an image pinned (CRI Image.pinned, which kubelet's image GC never
// removes) when one of its references carries io.cri-containerd.pinned=pinned, and it sees a label change at once
// (its event monitor refreshes the reference). Another runtime answers Unimplemented: `unsupported` then.
import { join } from 'node:path';
import { Client, Metadata, credentials, status as GrpcStatus } from '@grpc/grpc-js';
import type { ServiceError } from '@grpc/grpc-js';
import { loadSync, type MethodDefinition } from '@grpc/proto-loader';
import { packageRoot } from '../util/repo-root.js';
import { isRecord } from '../util/is-record.js';
import { socketPathOf } from './client.js';
import { PROTO_LOADER_OPTIONS } from './proto.js';

/** The namespace containerd's CRI plugin keeps Kubernetes' images in. */
export const CRI_CONTAINERD_NAMESPACE = 'k8s.io';
/** The label of an image reference that containerd's CRI plugin reads as pinned (with the value `pinned`). */
export const CONTAINERD_PINNED_LABEL = 'io.cri-containerd.pinned';
export const CONTAINERD_PINNED_VALUE = 'pinned';

const CALL_TIMEOUT_MS = 10_000;

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

/** A call to containerd's image service that failed, with gRPC's code name. */
export class ContainerdImagesError extends Error {
  constructor(
    readonly code: 'NotFound' | 'Unimplemented' | 'PermissionDenied' | 'Unavailable' | 'Other',
    message: string,
  ) {
    super(message);
    this.name = 'ContainerdImagesError';
  }
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

interface Definitions {
  Get: MethodDefinition<object, unknown, unknown, unknown>;
  List: MethodDefinition<object, unknown, unknown, unknown>;
  Update: MethodDefinition<object, unknown, unknown, unknown>;
}

let definitions: Definitions | undefined;

function imageService(): Definitions {
  if (!definitions) {
    const dir = join(packageRoot(), 'proto', 'containerd');
    const loaded = loadSync(join(dir, 'images.proto'), { ...PROTO_LOADER_OPTIONS, includeDirs: [dir] });
    const service = loaded['containerd.services.images.v1.Images'];
    if (!isRecord(service) || !isRecord(service.Get) || !isRecord(service.List) || !isRecord(service.Update)) {
      throw new Error('proto/containerd/images.proto has no Images service with Get, List and Update');
    }
    // proto-loader's service record holds a MethodDefinition per method (checked to exist just above)
    definitions = service as unknown as Definitions;
  }
  return definitions;
}

function codeOf(err: ServiceError): ContainerdImagesError['code'] {
  switch (err.code) {
    case GrpcStatus.NOT_FOUND:
      return 'NotFound';
    case GrpcStatus.UNIMPLEMENTED:
      return 'Unimplemented';
    case GrpcStatus.PERMISSION_DENIED:
      return 'PermissionDenied';
    case GrpcStatus.UNAVAILABLE:
      return 'Unavailable';
    default:
      return 'Other';
  }
}

function imageOf(value: unknown): ContainerdImage | undefined {
  if (!isRecord(value) || typeof value.name !== 'string' || value.name === '') return undefined;
  const labels: Record<string, string> = {};
  if (isRecord(value.labels)) {
    for (const [key, label] of Object.entries(value.labels)) if (typeof label === 'string') labels[key] = label;
  }
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
  private readonly channel: Client;
  readonly socketPath: string;

  constructor(socket: string) {
    this.socketPath = socketPathOf(socket);
    imageService();
    this.channel = new Client(`unix://${this.socketPath}`, credentials.createInsecure(), {
      'grpc.use_local_subchannel_pool': 1,
      'grpc.initial_reconnect_backoff_ms': 100,
      'grpc.max_reconnect_backoff_ms': 1_000,
    });
  }

  async get(name: string): Promise<ContainerdImage | undefined> {
    try {
      const response = await this.call('Get', { name });
      return isRecord(response) ? imageOf(response.image) : undefined;
    } catch (err) {
      if (err instanceof ContainerdImagesError && err.code === 'NotFound') return undefined;
      throw err;
    }
  }

  async listLabelled(key: string, value: string): Promise<ContainerdImage[]> {
    // containerd's filter syntax: a quoted field path, `==`, and a value that needs no quoting when it is a word
    const filter = `labels.${JSON.stringify(key)}==${/^[A-Za-z0-9_.-]+$/.test(value) ? value : JSON.stringify(value)}`;
    const response = await this.call('List', { filters: [filter] });
    const images = isRecord(response) && Array.isArray(response.images) ? response.images : [];
    return images.map(imageOf).filter((image): image is ContainerdImage => image !== undefined);
  }

  async setLabels(image: ContainerdImage, labels: Record<string, string>): Promise<void> {
    const paths = Object.keys(labels).map((key) => `labels.${key}`);
    if (paths.length === 0) return;
    if (image.target.digest === '') {
      // never send an Update without a target (see the interface): containerd would crash on it
      throw new ContainerdImagesError('Other', `image ${image.name} has no target in containerd; not updated`);
    }
    await this.call('Update', {
      image: { name: image.name, labels: { ...image.labels, ...labels }, target: image.target },
      update_mask: { paths },
    });
  }

  close(): void {
    this.channel.close();
  }

  private call(method: keyof Definitions, request: object): Promise<unknown> {
    const definition = imageService()[method];
    const metadata = new Metadata();
    metadata.set('containerd-namespace', CRI_CONTAINERD_NAMESPACE);
    return new Promise((resolve, reject) => {
      this.channel.makeUnaryRequest(
        definition.path,
        definition.requestSerialize,
        definition.responseDeserialize,
        request,
        metadata,
        { deadline: new Date(Date.now() + CALL_TIMEOUT_MS) },
        (err, response) => {
          if (err) {
            reject(
              new ContainerdImagesError(
                codeOf(err),
                `containerd image service ${method} on ${this.socketPath}: ${err.details || err.message}`,
              ),
            );
          } else resolve(response);
        },
      );
    });
  }
}
