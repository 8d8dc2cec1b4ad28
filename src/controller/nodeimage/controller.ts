// nodeimage controller: one NodeImage per Node (created once the Node has been Ready for a delay, labels copied,
// deleted with its Node), spec garbage collection (tags without createdAt, tags whose ImagePullJobs are gone, tags
// past their TTL, pull-secret references to copies that were deleted) and the status fallback (tags whose node never answered or overran the deadline marked Failed).
// Every spec write is a fresh read + resourceVersion-checked update; status writes are resourceVersion-checked too.
import {
  EVENT_REASON_PULL_IMAGE_FAILED,
  FAKE_NODE_IMAGE_LABEL,
  KRUISE_DAEMON_CONFIG_NAMESPACE,
  VIRTUAL_KUBELET_LABEL,
} from '../../api/constants.js';
import { VIRTUAL_KUBELET_LABEL_VALUE } from '../../api/constants.js';
import { isAlreadyExists, ignoreNotFound, isNotFound } from '../../kube/errors.js';
import type { Informer } from '../../kube/informer/informer.js';
import { CoreResources } from '../../kube/resource.js';
import type { ReconcileResult } from '../../kube/workqueue/workers.js';
import { IMAGE_PULL_JOBS, type ImagePullJob } from '../../api/imagepulljob.js';
import { NODE_IMAGES, type NodeImage } from '../../api/nodeimage.js';
import type { SecretObject } from '../resources.js';
import type { WireNode } from '../../api/wire.js';
import { ControllerLoop } from '../../kube/controller-loop.js';
import type { ControllerParts } from '../shared/controller-parts.js';
import { updateFromFresh } from '../../kube/fresh-update.js';
import { parseTime } from '../../util/time.js';
import { collectSpecGarbage, isImagePullJobRef, isSecretCopyRef } from './spec-gc.js';
import { RESPONSE_TIMEOUT_MS, statusWithFallback } from './status-fallback.js';

/** Index of the NodeImage cache: UIDs of the ImagePullJobs owning any of its tags. */
export const OWNER_UID_INDEX = 'ownerUid';

/** Index of the NodeImage cache: names of the pull-secret copies its images name. */
export const SECRET_COPY_INDEX = 'secretCopy';

export function secretCopiesOf(nodeImage: NodeImage): string[] {
  const names = new Set<string>();
  for (const image of Object.values(nodeImage.spec?.images ?? {})) {
    for (const ref of Array.isArray(image.pullSecrets) ? image.pullSecrets : []) {
      if (isSecretCopyRef(ref)) names.add(ref.name ?? '');
    }
  }
  return [...names];
}

export function ownerUidsOf(nodeImage: NodeImage): string[] {
  const uids = new Set<string>();
  for (const image of Object.values(nodeImage.spec?.images ?? {})) {
    for (const tag of image.tags ?? []) for (const ref of tag.ownerReferences ?? []) if (ref.uid) uids.add(ref.uid);
  }
  return [...uids];
}

export interface NodeImageControllerOptions extends ControllerParts {
  nodes: Informer<WireNode>;
  nodeImages: Informer<NodeImage>;
  jobs: Informer<ImagePullJob>;
  /** The pull-secret copies (the secrets informer on kruise-daemon-config). */
  secretCopies: Informer<SecretObject>;
  /** How long a Node must have been Ready before its NodeImage is created (default 30 s). */
  creationDelayMs?: number | undefined;
  /** How long after a tag's createdAt a missing status counts as "not responded" (default 10 min). */
  responseTimeoutMs?: number | undefined;
}

/** Shortest requeue for a pending timer (OpenKruise: 3 s; we keep 1 s so TTLs are honoured closely). */
const MIN_REQUEUE_MS = 1000;

export class NodeImageController {
  private readonly loop: ControllerLoop;
  private readonly creationDelayMs: number;
  private readonly responseTimeoutMs: number;

  constructor(private readonly o: NodeImageControllerOptions) {
    this.creationDelayMs = o.creationDelayMs ?? 30_000;
    this.responseTimeoutMs = o.responseTimeoutMs ?? RESPONSE_TIMEOUT_MS;
    this.loop = new ControllerLoop('nodeimage', o, (key) => this.reconcile(key));
  }

  start(): void {
    const enqueueNode = (node: WireNode): void => {
      if (node.metadata?.labels?.[VIRTUAL_KUBELET_LABEL] === VIRTUAL_KUBELET_LABEL_VALUE) return;
      const name = node.metadata?.name;
      if (!name) return;
      const nodeImage = this.o.nodeImages.get(name);
      if (!nodeImage || node.metadata?.deletionTimestamp || !sameLabels(nodeImage, node)) this.loop.add(name);
    };
    this.loop.watch(
      this.o.nodes.addHandlers({
        onAdd: enqueueNode,
        onUpdate: (_, node) => enqueueNode(node),
        onDelete: (node) => node.metadata?.name && this.loop.add(node.metadata.name),
      }),
      this.o.nodeImages.addHandlers({
        onAdd: (ni) => this.loop.add(ni.metadata.name ?? ''),
        onUpdate: (_, ni) => this.loop.add(ni.metadata.name ?? ''),
        onDelete: (ni) => ni.metadata.name && this.loop.add(ni.metadata.name),
      }),
      this.o.jobs.addHandlers({
        // A job that goes (or finishes) releases its tags: look at the NodeImages it owned tags in.
        onUpdate: (_, job) => {
          if (job.metadata.deletionTimestamp) this.enqueueOwnedBy(job);
        },
        onDelete: (job) => this.enqueueOwnedBy(job),
      }),
      // A copy deleted (no job needs it any more): the NodeImages naming it drop the reference.
      this.o.secretCopies.addHandlers({
        onDelete: (copy) => {
          const name = copy.metadata?.name;
          if (!name) return;
          for (const ni of this.o.nodeImages.store.byIndex(SECRET_COPY_INDEX, name))
            this.loop.add(ni.metadata.name ?? '');
        },
      }),
    );
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  private enqueueOwnedBy(job: ImagePullJob): void {
    const uid = job.metadata.uid;
    if (!uid) return;
    for (const ni of this.o.nodeImages.store.byIndex(OWNER_UID_INDEX, uid)) this.loop.add(ni.metadata.name ?? '');
  }

  async reconcile(name: string): Promise<ReconcileResult | void> {
    if (!name) return;
    const node = this.o.nodes.get(name);
    const nodeImage = this.o.nodeImages.get(name);
    const now = this.o.clock.now();

    if (!node || node.metadata?.deletionTimestamp) {
      if (nodeImage && !nodeImage.metadata.deletionTimestamp && !nodeImage.metadata.labels?.[FAKE_NODE_IMAGE_LABEL]) {
        // The cache may lag behind a Node that was just created: confirm before deleting.
        if (!node && (await this.nodeExists(name))) return { requeueAfter: MIN_REQUEUE_MS };
        await this.o.client
          .delete(NODE_IMAGES, name, { preconditions: { uid: nodeImage.metadata.uid } })
          .catch(ignoreNotFound);
        this.loop.logger.info({ node: name }, 'NodeImage deleted with its Node');
      }
      return;
    }
    if (node.metadata?.labels?.[VIRTUAL_KUBELET_LABEL] === VIRTUAL_KUBELET_LABEL_VALUE) return;

    if (!nodeImage) {
      const readySince = readySinceOf(node);
      if (readySince === undefined) return; // not Ready: the Node's next update brings us back
      const wait = readySince + this.creationDelayMs - now;
      if (wait > 0) return { requeueAfter: wait };
      try {
        await this.o.client.create<NodeImage>(NODE_IMAGES, {
          metadata: { name, labels: { ...(node.metadata?.labels ?? {}) } },
          spec: {},
        });
        this.loop.logger.info({ node: name }, 'NodeImage created');
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
      return;
    }
    if (nodeImage.metadata.deletionTimestamp) return;

    const goneJobUids = await this.goneJobUids(nodeImage);
    const goneSecretCopies = await this.goneSecretCopies(nodeImage);
    const gcInput = { nodeLabels: node.metadata?.labels ?? {}, goneJobUids, goneSecretCopies, now };
    const plan = collectSpecGarbage(structuredClone(nodeImage), gcInput);
    if (plan.changed) {
      const { written } = await updateFromFresh<NodeImage>(this.o.client, NODE_IMAGES, name, undefined, (draft) => {
        const fresh = collectSpecGarbage(draft, { ...gcInput, now });
        for (const c of fresh.collected) this.o.metrics.tagsCollected.inc({ reason: c.reason });
        if (fresh.collected.length > 0)
          this.loop.logger.info({ node: name, collected: fresh.collected }, 'NodeImage tags collected');
        if (fresh.droppedSecrets.length > 0) {
          this.loop.logger.info(
            { node: name, pullSecrets: fresh.droppedSecrets },
            'NodeImage pull-secret references to deleted copies dropped',
          );
        }
        return fresh.changed;
      });
      if (written) this.o.metrics.nodeImageWrites.inc({ controller: 'nodeimage', reason: 'gc' });
      return; // the write brings us back with the new object; status next round
    }

    const fallback = statusWithFallback(nodeImage, now, this.responseTimeoutMs);
    if (fallback.changed) {
      await this.o.client.updateStatus<NodeImage>(NODE_IMAGES, { ...nodeImage, status: fallback.status });
      this.o.metrics.nodeImageWrites.inc({ controller: 'nodeimage', reason: 'status-fallback' });
      for (const failed of fallback.failed) {
        this.o.metrics.tagsMarkedFailed.inc({ reason: failed.reason });
        const message = `Failed to pull image ${failed.image}:${failed.tag} on node ${name} for ${failed.message}`;
        this.o.events.event(nodeImage, 'Warning', EVENT_REASON_PULL_IMAGE_FAILED, message, NODE_IMAGES);
        for (const owner of failed.owners) {
          if (!owner.name || !owner.namespace || !isImagePullJobRef(owner)) continue;
          const job = this.o.jobs.get(`${owner.namespace}/${owner.name}`);
          if (job && job.metadata.uid === owner.uid) {
            this.o.events.event(job, 'Warning', EVENT_REASON_PULL_IMAGE_FAILED, message, IMAGE_PULL_JOBS);
          }
        }
      }
    }
    const next = Math.min(plan.requeueAfterMs ?? Infinity, fallback.requeueAfterMs ?? Infinity);
    if (Number.isFinite(next)) return { requeueAfter: Math.max(next, MIN_REQUEUE_MS) };
  }

  /** Owners of kind ImagePullJob that no longer exist (cache miss confirmed by a GET, or another uid). */
  private async goneJobUids(nodeImage: NodeImage): Promise<Set<string>> {
    const gone = new Set<string>();
    const checked = new Set<string>();
    for (const image of Object.values(nodeImage.spec?.images ?? {})) {
      for (const tag of image.tags ?? []) {
        for (const ref of tag.ownerReferences ?? []) {
          if (!isImagePullJobRef(ref) || !ref.uid || !ref.name || checked.has(ref.uid)) continue;
          checked.add(ref.uid);
          const cached = this.o.jobs.get(`${ref.namespace ?? ''}/${ref.name}`);
          if (cached) {
            if (cached.metadata.uid !== ref.uid) gone.add(ref.uid);
            continue;
          }
          try {
            const live = await this.o.client.get<ImagePullJob>(IMAGE_PULL_JOBS, ref.name, {
              namespace: ref.namespace,
            });
            if (live.metadata.uid !== ref.uid) gone.add(ref.uid);
          } catch (err) {
            if (isNotFound(err)) gone.add(ref.uid);
            // other errors: keep the owner (we cannot tell)
          }
        }
      }
    }
    return gone;
  }

  /**
   * Pull-secret copies named in the spec that are gone: not in the cache and a GET says 404 (a copy just created
   * may not be cached yet). The controller deletes a copy only once no job references it; a job that needs it
   * again makes a new copy and puts the reference back.
   */
  private async goneSecretCopies(nodeImage: NodeImage): Promise<Set<string>> {
    const gone = new Set<string>();
    for (const name of secretCopiesOf(nodeImage)) {
      if (this.o.secretCopies.get(`${KRUISE_DAEMON_CONFIG_NAMESPACE}/${name}`)) continue;
      try {
        await this.o.client.get<SecretObject>(CoreResources.secrets, name, {
          namespace: KRUISE_DAEMON_CONFIG_NAMESPACE,
        });
      } catch (err) {
        if (isNotFound(err)) gone.add(name);
        // other errors: keep the reference (we cannot tell)
      }
    }
    return gone;
  }

  private async nodeExists(name: string): Promise<boolean> {
    try {
      await this.o.client.get<WireNode>(
        { group: '', version: 'v1', resource: 'nodes', namespaced: false, kind: 'Node' },
        name,
      );
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }
}

/** When the Node's Ready condition last became True; undefined when it is not Ready. */
export function readySinceOf(node: WireNode): number | undefined {
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  if (ready?.status !== 'True') return undefined;
  return parseTime(ready.lastTransitionTime) ?? parseTime(node.metadata?.creationTimestamp) ?? 0;
}

function sameLabels(nodeImage: NodeImage, node: WireNode): boolean {
  const a = nodeImage.metadata.labels ?? {};
  const b = node.metadata?.labels ?? {};
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}
