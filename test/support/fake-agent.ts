// A test double of the node agent for controller tests and the scale benchmarks: for the nodes it serves, it watches
// NodeImages (one watch for every node) and answers every spec tag with a status for that tag's version — Succeeded
// after `delayMs` (or Failed when `fail` says so) — and keeps the counters as the agent does. It never pulls anything.
// A NodeImage deleted and made again (another controller's) is a new one: its tags wait `delayMs` again.
import { NODE_IMAGES, type NodeImage, type NodeImageStatus, type ImageTagStatus } from '../../src/api/nodeimage.js';
import type { KubeClient } from '../../src/kube/client.js';
import { isConflict, isNotFound } from '../../src/kube/errors.js';
import { Informer } from '../../src/kube/informer/informer.js';
import { WorkQueue } from '../../src/kube/workqueue/queue.js';
import { runWorkers } from '../../src/kube/workqueue/workers.js';

export interface FakeAgentOptions {
  client: KubeClient;
  /** The nodes served; a function to decide per node name (default: every node). */
  serves: (node: string) => boolean;
  /** Time from first seeing a tag version to its result (default 200 ms). */
  delayMs?: number;
  /** A failure message for this pull, or undefined for success. */
  fail?: (node: string, image: string, tag: string) => string | undefined;
  /** Status writes at once (default 8). */
  workers?: number;
}

export class FakeAgent {
  private readonly informer: Informer<NodeImage>;
  private readonly queue = new WorkQueue<string>({ name: 'fake-agent' });
  private readonly firstSeen = new Map<string, number>();
  private running?: Promise<void>;
  /** Status writes made, and when the last one was made (for the benchmark's figures). */
  writes = 0;
  lastWriteAt = 0;

  constructor(private readonly o: FakeAgentOptions) {
    this.informer = new Informer<NodeImage>(NODE_IMAGES, o.client, { name: 'fake-agent' });
    const enqueue = (ni: NodeImage): void => {
      const name = ni.metadata.name ?? '';
      if (o.serves(name)) this.queue.add(name);
    };
    this.informer.addHandlers({ onAdd: enqueue, onUpdate: (_, ni) => enqueue(ni) });
  }

  async start(): Promise<void> {
    this.informer.start();
    await this.informer.synced;
    this.running = runWorkers(this.queue, this.o.workers ?? 8, (name) => this.sync(name));
  }

  /** NodeImages in the agent's cache. */
  get nodeImages(): number {
    return this.informer.list().length;
  }

  /** NodeImages of the nodes it serves in the agent's cache. */
  get servedNodeImages(): number {
    return this.informer.list().filter((ni) => this.o.serves(ni.metadata.name ?? '')).length;
  }

  /** Distinct (node, image, tag, version) the agent has seen in NodeImage specs. */
  get tagsSeen(): number {
    return this.firstSeen.size;
  }

  async stop(): Promise<void> {
    this.queue.shutDown();
    await this.running;
    await this.informer.stop();
  }

  private async sync(name: string): Promise<{ requeueAfter: number } | void> {
    const ni = this.informer.get(name);
    if (!ni || ni.metadata.deletionTimestamp) return;
    const delay = this.o.delayMs ?? 200;
    const now = Date.now();
    const status: NodeImageStatus = { desired: 0, succeeded: 0, failed: 0, pulling: 0, waiting: 0, imageStatuses: {} };
    let pendingIn: number | undefined;
    for (const [image, spec] of Object.entries(ni.spec?.images ?? {})) {
      const tags: ImageTagStatus[] = [];
      for (const tag of spec.tags ?? []) {
        status.desired++;
        const version = tag.version ?? 0;
        const known = ni.status?.imageStatuses?.[image]?.tags?.find((t) => t.tag === tag.tag);
        if (known && (known.version ?? 0) === version && known.completionTime) {
          tags.push(known);
          continue;
        }
        const key = `${ni.metadata.uid ?? name}/${image}:${tag.tag}@${version}`;
        const seen = this.firstSeen.get(key) ?? now;
        this.firstSeen.set(key, seen);
        const left = seen + delay - now;
        if (left > 0) {
          pendingIn = Math.min(pendingIn ?? Infinity, left);
          if (known) tags.push(known);
          continue;
        }
        const message = this.o.fail?.(name, image, tag.tag);
        const at = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
        tags.push(
          message
            ? { tag: tag.tag, phase: 'Failed', version, startTime: at, completionTime: at, message }
            : { tag: tag.tag, phase: 'Succeeded', version, startTime: at, completionTime: at, progress: 100 },
        );
      }
      if (tags.length > 0) status.imageStatuses![image] = { tags };
    }
    for (const s of Object.values(status.imageStatuses ?? {})) {
      for (const t of s.tags) {
        if (t.phase === 'Succeeded') status.succeeded!++;
        else if (t.phase === 'Failed') status.failed!++;
        else if (t.phase === 'Pulling') status.pulling!++;
        else status.waiting!++;
      }
    }
    if (Object.keys(status.imageStatuses ?? {}).length === 0) delete status.imageStatuses;
    if (JSON.stringify(status) !== JSON.stringify(ni.status ?? {})) {
      try {
        await this.o.client.updateStatus<NodeImage>(NODE_IMAGES, { ...ni, status });
        this.writes++;
        this.lastWriteAt = Date.now();
      } catch (err) {
        if (isNotFound(err)) return;
        if (!isConflict(err)) throw err;
        // a newer object is on its way through the watch; it brings us back
      }
    }
    if (pendingIn !== undefined) return { requeueAfter: Math.max(pendingIn, 1) };
  }
}
