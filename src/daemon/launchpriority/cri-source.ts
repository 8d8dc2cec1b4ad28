// The runtime poller's view of CRI: ListContainers (optionally by labels) and a container's start time.
import type { CriClient } from '../../cri/client.js';
import type { ContainerSource, ListedContainer } from './runtime-poller.js';

/** Short deadlines: a poll that cannot answer quickly is retried at the next tick. */
const LIST_TIMEOUT_MS = 5000;

export function criContainerSource(cri: Pick<CriClient, 'listContainers' | 'containerStatus'>): ContainerSource {
  return {
    async list(labelSelector) {
      const answer = await cri.listContainers(labelSelector ? { filter: { label_selector: labelSelector } } : {}, {
        timeoutMs: LIST_TIMEOUT_MS,
      });
      return answer.containers.map((c): ListedContainer => ({
        id: c.id,
        state: c.state,
        createdAtNs: c.created_at,
        attempt: c.metadata?.attempt ?? 0,
        labels: c.labels ?? {},
      }));
    },
    async startedAtMs(id) {
      const answer = await cri.containerStatus({ container_id: id }, { timeoutMs: LIST_TIMEOUT_MS });
      const ns = answer.status?.started_at;
      if (!ns || ns === '0') return undefined;
      return Number(BigInt(ns) / 1_000_000n);
    },
  };
}
