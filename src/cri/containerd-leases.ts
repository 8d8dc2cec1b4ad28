// containerd's lease service (proto/containerd/leases.proto) on the runtime's socket, namespace k8s.io. The image
// puller pulls under a lease of its own (the `containerd-lease` header on CRI PullImage), so what a pull it cancels
// for kubelet has fetched stays in the content store and the next pull resumes from it; the lease is deleted when
// the pull has made the image (the image then holds its content) or is given up. Each lease is marked ours and
// carries containerd.io/gc.expire, so one left by an agent that died is collected by containerd on its own.
import { isRecord } from '../util/is-record.js';
import {
  ContainerdApiError,
  ContainerdChannel,
  containerdService,
  labelFilter,
  stringLabels,
} from './containerd-api.js';

export { CONTAINERD_LEASE_HEADER } from './client.js';
/** containerd removes a lease once this time (RFC 3339) has passed. */
export const CONTAINERD_GC_EXPIRE_LABEL = 'containerd.io/gc.expire';

export interface ContainerdLease {
  id: string;
  labels: Record<string, string>;
}

/** What the pull leases need of containerd: a port, so tests can give a map. */
export interface LeaseStore {
  create(id: string, labels: Record<string, string>): Promise<void>;
  /** Deleting a lease that is not there is no error. */
  delete(id: string): Promise<void>;
  listLabelled(key: string, value: string): Promise<ContainerdLease[]>;
  close?(): void;
}

const LEASES = ['Create', 'Delete', 'List'] as const;

function leaseService() {
  return containerdService('leases.proto', 'containerd.services.leases.v1.Leases', LEASES);
}

export class ContainerdLeases implements LeaseStore {
  private readonly channel: ContainerdChannel;

  constructor(socket: string | ContainerdChannel) {
    leaseService();
    this.channel = typeof socket === 'string' ? new ContainerdChannel(socket) : socket;
  }

  async create(id: string, labels: Record<string, string>): Promise<void> {
    await this.channel.unary(leaseService().Create, { id, labels });
  }

  async delete(id: string, sync = false): Promise<void> {
    try {
      await this.channel.unary(leaseService().Delete, { id, sync });
    } catch (err) {
      if (err instanceof ContainerdApiError && err.code === 'NotFound') return;
      throw err;
    }
  }

  async listLabelled(key: string, value: string): Promise<ContainerdLease[]> {
    const response = await this.channel.unary(leaseService().List, { filters: [labelFilter(key, value)] });
    const leases = isRecord(response) && Array.isArray(response.leases) ? response.leases : [];
    return leases.flatMap((lease) =>
      isRecord(lease) && typeof lease.id === 'string' && lease.id !== ''
        ? [{ id: lease.id, labels: stringLabels(lease) }]
        : [],
    );
  }

  close(): void {
    this.channel.close();
  }
}
