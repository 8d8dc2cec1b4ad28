// containerd's content store (proto/containerd/content.proto) on the runtime's socket, namespace k8s.io: what the
// image puller reads to tell how far a pull has come (the blobs being written, the manifest it fetched).
import { isRecord } from '../util/is-record.js';
import {
  ContainerdApiError,
  ContainerdChannel,
  containerdService,
  labelFilter,
  stringLabels,
} from './containerd-api.js';

/** A committed blob. */
export interface ContentInfo {
  digest: string;
  size: number;
  /** ms since the epoch (0 when containerd gave none). */
  updatedAt: number;
  labels: Record<string, string>;
}

/** A blob being written (an ingest): its ref names the digest it is expected to have. */
export interface IngestStatus {
  ref: string;
  offset: number;
  total: number;
  expected: string;
}

/** What the pull progress needs of containerd's content store: a port, so tests can give a map. */
export interface ContentStore {
  /** Committed blobs with this label set to this value. */
  listLabelled(key: string, value: string): Promise<ContentInfo[]>;
  /** A committed blob, or undefined. */
  info(digest: string): Promise<ContentInfo | undefined>;
  /** A committed blob's bytes (small ones: manifests). */
  read(digest: string): Promise<Buffer>;
  /** Every blob being written now. */
  ingests(): Promise<IngestStatus[]>;
  /** Let go of the connection, if the store holds one. */
  close?(): void;
}

const CONTENT = ['Info', 'List', 'Read', 'ListStatuses'] as const;

function contentService() {
  return containerdService('content.proto', 'containerd.services.content.v1.Content', CONTENT);
}

function millis(value: unknown): number {
  if (!isRecord(value)) return 0;
  return Number(value.seconds ?? 0) * 1000 + Math.floor(Number(value.nanos ?? 0) / 1e6);
}

function infoOf(value: unknown): ContentInfo | undefined {
  if (!isRecord(value) || typeof value.digest !== 'string') return undefined;
  const labels = stringLabels(value);
  return { digest: value.digest, size: Number(value.size ?? 0), updatedAt: millis(value.updated_at), labels };
}

export class ContainerdContent implements ContentStore {
  constructor(private readonly channel: ContainerdChannel) {
    contentService();
  }

  async listLabelled(key: string, value: string): Promise<ContentInfo[]> {
    const messages = await this.channel.stream(contentService().List, { filters: [labelFilter(key, value)] });
    return messages.flatMap((message) =>
      isRecord(message) && Array.isArray(message.info)
        ? message.info.map(infoOf).filter((info): info is ContentInfo => info !== undefined)
        : [],
    );
  }

  async info(digest: string): Promise<ContentInfo | undefined> {
    try {
      const response = await this.channel.unary(contentService().Info, { digest });
      return isRecord(response) ? infoOf(response.info) : undefined;
    } catch (err) {
      if (err instanceof ContainerdApiError && err.code === 'NotFound') return undefined;
      throw err;
    }
  }

  async read(digest: string): Promise<Buffer> {
    const messages = await this.channel.stream(contentService().Read, { digest, offset: 0, size: 0 });
    return Buffer.concat(
      messages.map((message) => (isRecord(message) && Buffer.isBuffer(message.data) ? message.data : Buffer.alloc(0))),
    );
  }

  close(): void {
    this.channel.close();
  }

  async ingests(): Promise<IngestStatus[]> {
    const response = await this.channel.unary(contentService().ListStatuses, { filters: [] });
    const statuses = isRecord(response) && Array.isArray(response.statuses) ? response.statuses : [];
    return statuses.filter(isRecord).map((s) => ({
      ref: typeof s.ref === 'string' ? s.ref : '',
      offset: Number(s.offset ?? 0),
      total: Number(s.total ?? 0),
      expected: typeof s.expected === 'string' ? s.expected : '',
    }));
  }
}
