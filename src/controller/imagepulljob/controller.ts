// imagepulljob controller: fans a job out into NodeImage tags, at most `parallelism` nodes in flight, and
// aggregates the nodes' results into the job's status. Completion (Always), deadline, TTL deletion, the protection
// finalizer (released with the pull-secret copies when the job completes, is deleted or vanishes). A job is
// requeued when a source secret it names changes (each source has its own watch, see pullsecrets/), so the change
// reaches its copy at once.
import { KRUISE_SYSTEM_NAMESPACE, PROTECTION_FINALIZER } from '../../api/constants.js';
import { type ReferenceObject, NODE_IMAGES, type NodeImage } from '../../api/nodeimage.js';
import { ignoreNotFound } from '../../kube/errors.js';
import type { Informer } from '../../kube/informer/informer.js';
import { jsonEqual } from '../../kube/merge-patch.js';
import { objectKey, splitKey } from '../../kube/object.js';
import { patchStatus } from '../../kube/status-patch.js';
import type { ReconcileResult } from '../../kube/workqueue/workers.js';
import { referencesOf, type PullSecretSync } from '../pullsecrets/secret-sync.js';
import {
  forbiddenMessage,
  notFoundMessage,
  PULL_SECRET_FORBIDDEN_REASON,
  PULL_SECRET_NOT_FOUND_REASON,
  withSecretProblems,
  type SecretProblems,
} from '../pullsecrets/source-access.js';
import { IMAGE_PULL_JOBS, type ImagePullJob } from '../../api/imagepulljob.js';
import type { SecretObject } from '../resources.js';
import type { WirePod } from '../../api/wire.js';
import { ControllerLoop } from '../../kube/controller-loop.js';
import type { ControllerParts } from '../shared/controller-parts.js';
import type { OwnWriteExpectations } from '../../kube/own-writes.js';
import { updateFromFresh } from '../../kube/fresh-update.js';
import { parseTime } from '../../util/time.js';
import { isActiveJob, jobImageOf, parallelismOf, type JobImage } from './job-image.js';
import { calculateJobStatus } from './job-status.js';
import { jobMayTarget, selectNodeImages } from './node-selection.js';
import { writeJobTag } from './tag-write.js';

/** Index of the job cache by uid (NodeImage tag owners point at jobs by uid). */
export const UID_INDEX = 'uid';
export const byUid = (o: { metadata?: { uid?: string | undefined } }): string[] =>
  o.metadata?.uid ? [o.metadata.uid] : [];

export interface ImagePullJobControllerOptions extends ControllerParts {
  jobs: Informer<ImagePullJob>;
  nodeImages: Informer<NodeImage>;
  pods?: Informer<WirePod>;
  /** The pull-secret copies (secrets informer on kruise-daemon-config only). */
  secretCopies: Informer<SecretObject>;
  /** Copies the jobs' pull secrets; tells which jobs to requeue when a source changes. */
  secretSync: PullSecretSync;
  /** The controller's own namespace, for the grant command in 403 messages (default kruise-system). */
  controllerNamespace?: string | undefined;
  /** Shared with anything else writing NodeImages: the caches must show our writes before we count. */
  nodeImageExpectations: OwnWriteExpectations;
  jobExpectations: OwnWriteExpectations;
  /** --default-ttlseconds-for-always-nodeimage (300). */
  defaultTagTtlSeconds?: number | undefined;
  random?: () => number;
  /** NodeImage writes in flight per reconcile (default 16). */
  writeConcurrency?: number;
}

/** How soon to look again while the job's cache has not caught up with our write of it. */
const CACHE_WAIT_MS = 100;
/**
 * A job waiting for the NodeImage cache to show writes (its own or other jobs') is woken by that NodeImage's next
 * event; this is only the fallback. Polling at CACHE_WAIT_MS instead made 198 jobs writing the same 1,000 NodeImages
 * hundreds of passes a second that did nothing (the openkruise-scale bench).
 */
const NODE_IMAGE_CACHE_FALLBACK_MS = 1000;

export class ImagePullJobController {
  private readonly loop: ControllerLoop;
  /** Jobs waiting for the cache of a NodeImage (by name) to catch up: enqueued on its next event. */
  private readonly waitingForNodeImage = new Map<string, Set<string>>();

  constructor(private readonly o: ImagePullJobControllerOptions) {
    this.loop = new ControllerLoop('imagepulljob', o, (key) => this.reconcile(key));
  }

  start(): void {
    const activeJobs = (): ImagePullJob[] => this.o.jobs.list().filter(isActiveJob);
    const enqueueMatching = (ni: NodeImage): void => {
      for (const job of activeJobs()) if (jobMayTarget(job, ni)) this.loop.add(objectKey(job));
    };
    const wakeWaiting = (ni: NodeImage): void => {
      const name = ni.metadata.name ?? '';
      const waiting = this.waitingForNodeImage.get(name);
      if (!waiting) return;
      this.waitingForNodeImage.delete(name);
      for (const key of waiting) this.loop.add(key);
    };
    this.loop.watch(
      this.o.jobExpectations.follow(this.o.jobs, objectKey),
      this.o.nodeImageExpectations.follow(this.o.nodeImages, (ni) => ni.metadata.name ?? ''),
      this.o.jobs.addHandlers({
        onAdd: (job) => this.loop.add(objectKey(job)),
        onUpdate: (_, job) => this.loop.add(objectKey(job)),
        onDelete: (job) => this.loop.add(objectKey(job)),
      }),
      // after nodeImageExpectations.follow (registered above): a job woken here finds the cache fresh
      this.o.nodeImages.addHandlers({
        onAdd: (ni) => {
          wakeWaiting(ni);
          enqueueMatching(ni);
        },
        onDelete: (ni) => {
          wakeWaiting(ni);
          enqueueMatching(ni);
        },
        onUpdate: (old, ni) => {
          wakeWaiting(ni);
          if (!jsonEqual(old.metadata.labels ?? {}, ni.metadata.labels ?? {})) enqueueMatching(ni);
          for (const uid of changedTagOwners(old, ni)) {
            for (const job of this.o.jobs.store.byIndex(UID_INDEX, uid)) this.loop.add(objectKey(job));
          }
        },
      }),
      // A copy edited or deleted by someone else: its jobs put it back (our own writes cost one quiet reconcile).
      this.o.secretCopies.addHandlers({
        onUpdate: (old, s) => {
          if (!jsonEqual(old.data ?? {}, s.data ?? {}) || old.type !== s.type) this.enqueueCopyUsers(s);
        },
        onDelete: (s) => this.enqueueCopyUsers(s),
      }),
      // A source secret changed (or became readable, or not): the jobs naming it copy it again.
      this.o.secretSync.onSourceChange((key) => this.loop.add(key)),
    );
    if (this.o.pods) {
      const enqueuePodJobs = (pod: WirePod): void => {
        for (const job of activeJobs()) {
          if (job.spec?.podSelector && job.metadata.namespace === pod.metadata?.namespace)
            this.loop.add(objectKey(job));
        }
      };
      this.loop.watch(
        this.o.pods.addHandlers({
          onAdd: enqueuePodJobs,
          onDelete: enqueuePodJobs,
          onUpdate: (old, pod) => {
            if (
              old.spec?.nodeName !== pod.spec?.nodeName ||
              !jsonEqual(old.metadata?.labels ?? {}, pod.metadata?.labels ?? {}) ||
              old.status?.phase !== pod.status?.phase
            ) {
              enqueuePodJobs(pod);
            }
          },
        }),
      );
    }
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  private enqueueCopyUsers(copy: SecretObject): void {
    for (const key of referencesOf(copy)) {
      const job = this.o.jobs.get(key);
      if (job && isActiveJob(job)) this.loop.add(key);
    }
  }

  async reconcile(key: string): Promise<ReconcileResult | void> {
    const job = this.o.jobs.get(key);
    if (!job) {
      this.o.jobExpectations.forget(key);
      // Gone without its finalizer having run (removed by hand): its copies and source watches go too.
      await this.o.secretSync.release(key);
      return;
    }
    if (!this.o.jobExpectations.isFresh(key, job.metadata.resourceVersion)) return { requeueAfter: CACHE_WAIT_MS };
    const now = this.o.clock.now();
    if (job.metadata.deletionTimestamp) {
      await this.finalize(job);
      return;
    }
    if (job.status?.completionTime) {
      await this.finalize(job);
      const ttl = job.spec?.completionPolicy?.ttlSecondsAfterFinished;
      if (ttl === undefined || ttl === null) return;
      const left = (parseTime(job.status.completionTime) ?? now) + ttl * 1000 - now;
      if (left > 0) return { requeueAfter: left };
      await this.o.client
        .delete(IMAGE_PULL_JOBS, job.metadata.name ?? '', {
          namespace: job.metadata.namespace,
          propagationPolicy: 'Background',
          preconditions: { uid: job.metadata.uid },
        })
        .catch(ignoreNotFound);
      this.loop.logger.info({ job: key }, 'ImagePullJob deleted after ttlSecondsAfterFinished');
      return;
    }
    if (!(job.metadata.finalizers ?? []).includes(PROTECTION_FINALIZER)) {
      await this.editJob(job, (draft) => {
        if (draft.metadata.deletionTimestamp || draft.metadata.finalizers?.includes(PROTECTION_FINALIZER)) return false;
        draft.metadata.finalizers = [...(draft.metadata.finalizers ?? []), PROTECTION_FINALIZER];
        return true;
      });
      return; // the update brings the job back
    }

    const image = jobImageOf(job);
    if ('error' in image) {
      await this.writeStatus(job, { desired: 0, message: image.error, startTime: job.status?.startTime });
      return;
    }
    const nodeImages = selectNodeImages(job, this.o.nodeImages, this.o.pods);
    for (const ni of nodeImages) {
      const name = ni.metadata.name ?? '';
      if (!this.o.nodeImageExpectations.isFresh(name, ni.metadata.resourceVersion)) {
        const waiting = this.waitingForNodeImage.get(name) ?? new Set<string>();
        this.waitingForNodeImage.set(name, waiting.add(key));
        return { requeueAfter: NODE_IMAGE_CACHE_FALLBACK_MS };
      }
    }
    let refs: ReferenceObject[] = [];
    const problems: SecretProblems = { namespace: job.metadata.namespace ?? '', missing: [], forbidden: [] };
    if ((job.spec?.pullSecrets ?? []).length > 0) {
      const synced = await this.o.secretSync.claim(problems.namespace, key, job.spec.pullSecrets ?? []);
      refs = synced.refs;
      problems.missing = synced.missing;
      problems.forbidden = synced.forbidden;
      this.reportSecretProblems(job, problems);
    }
    const result = calculateJobStatus(job, image, nodeImages, refs, now);
    result.status.message = withSecretProblems(result.status.message, problems, this.controllerNamespace());
    if (!result.deadlineExceeded) {
      const room = Math.max(0, parallelismOf(job) - (result.status.active ?? 0));
      const targets = [
        ...result.notSynced.slice(0, room),
        ...result.drifted.filter((n) => !result.notSynced.includes(n)),
      ];
      await this.writeTags(job, image, refs, targets, now);
    }
    await this.writeStatus(job, result.status);
    if (result.status.completionTime) {
      this.o.events.event(
        job,
        'Normal',
        'Completed',
        `ImagePullJob ${key} completed: ${result.status.succeeded ?? 0} succeeded, ${result.status.failed ?? 0} failed`,
        IMAGE_PULL_JOBS,
      );
      return;
    }
    const deadline = job.spec?.completionPolicy?.activeDeadlineSeconds;
    if (job.spec?.completionPolicy?.type !== 'Never' && deadline !== undefined && deadline !== null) {
      const started = parseTime(result.status.startTime) ?? now;
      return { requeueAfter: Math.max(1000, started + deadline * 1000 - now) };
    }
  }

  private controllerNamespace(): string {
    return this.o.controllerNamespace ?? KRUISE_SYSTEM_NAMESPACE;
  }

  /** Missing or unreadable pull secrets: the job carries on without them (as for an unknown secret). */
  private reportSecretProblems(job: ImagePullJob, problems: SecretProblems): void {
    if (problems.missing.length > 0) {
      this.o.events.event(job, 'Warning', PULL_SECRET_NOT_FOUND_REASON, notFoundMessage(problems), IMAGE_PULL_JOBS);
    }
    if (problems.forbidden.length > 0) {
      const message = forbiddenMessage(problems, this.controllerNamespace());
      this.o.events.event(job, 'Warning', PULL_SECRET_FORBIDDEN_REASON, message, IMAGE_PULL_JOBS);
      this.loop.logger.debug({ job: objectKey(job), namespace: problems.namespace }, message);
    }
  }

  private async writeTags(
    job: ImagePullJob,
    image: JobImage,
    refs: ReferenceObject[],
    names: string[],
    now: number,
  ): Promise<void> {
    const policy = { defaultTtlSeconds: this.o.defaultTagTtlSeconds ?? 300, random: this.o.random ?? Math.random };
    const queue = [...names];
    const work = async (): Promise<void> => {
      // on stop the writes not begun are left (the next leader writes them), so the lease is let go in time
      for (let name = queue.shift(); name !== undefined && !this.loop.stopping; name = queue.shift()) {
        // start from the cache when it holds our last write (no read); a conflict reads fresh
        const cached = this.o.nodeImages.get(name);
        const fresh = cached && this.o.nodeImageExpectations.isFresh(name, cached.metadata.resourceVersion);
        const { written, object } = await updateFromFresh<NodeImage>(
          this.o.client,
          NODE_IMAGES,
          name,
          undefined,
          (draft) => writeJobTag(draft, job, image, refs, now, policy),
          { start: fresh ? cached : undefined },
        );
        if (written) {
          this.o.nodeImageExpectations.expect(name, object?.metadata.resourceVersion);
          this.o.metrics.nodeImageWrites.inc({ controller: 'imagepulljob', reason: 'tag' });
        }
      }
    };
    const n = Math.min(this.o.writeConcurrency ?? 16, queue.length);
    await Promise.all(Array.from({ length: n }, () => work()));
  }

  private async writeStatus(job: ImagePullJob, status: NonNullable<ImagePullJob['status']>): Promise<void> {
    if (jsonEqual(JSON.parse(JSON.stringify(job.status ?? {})), JSON.parse(JSON.stringify(status)))) return;
    const result = await patchStatus(this.o.client, IMAGE_PULL_JOBS, job, () => status);
    if (result.patched) this.o.jobExpectations.expect(objectKey(job), result.object.metadata?.resourceVersion);
  }

  /** Release the pull-secret copies and the protection finalizer. */
  private async finalize(job: ImagePullJob): Promise<void> {
    const key = objectKey(job);
    await this.o.secretSync.release(key);
    if (!(job.metadata.finalizers ?? []).includes(PROTECTION_FINALIZER)) return;
    await this.editJob(job, (draft) => {
      const left = (draft.metadata.finalizers ?? []).filter((f) => f !== PROTECTION_FINALIZER);
      if (left.length === (draft.metadata.finalizers ?? []).length) return false;
      draft.metadata.finalizers = left;
      return true;
    });
  }

  private async editJob(job: ImagePullJob, mutate: (draft: ImagePullJob) => boolean): Promise<void> {
    const { name, namespace } = splitKey(objectKey(job));
    const { object, written } = await updateFromFresh<ImagePullJob>(
      this.o.client,
      IMAGE_PULL_JOBS,
      name,
      namespace,
      (draft) => (draft.metadata.uid === job.metadata.uid ? mutate(draft) : false),
    );
    if (written) this.o.jobExpectations.expect(objectKey(job), object?.metadata.resourceVersion);
  }
}

/** UIDs of jobs owning a tag whose spec or reported status differs between two versions of a NodeImage. */
export function changedTagOwners(old: NodeImage, next: NodeImage): Set<string> {
  const uids = new Set<string>();
  const names = new Set([...Object.keys(old.spec?.images ?? {}), ...Object.keys(next.spec?.images ?? {})]);
  for (const name of names) {
    const a = old.spec?.images?.[name];
    const b = next.spec?.images?.[name];
    const imageLevel = !jsonEqual(a?.pullSecrets ?? [], b?.pullSecrets ?? []) || !a || !b;
    const tags = new Set([...(a?.tags ?? []).map((t) => t.tag), ...(b?.tags ?? []).map((t) => t.tag)]);
    for (const tag of tags) {
      const sa = a?.tags?.find((t) => t.tag === tag);
      const sb = b?.tags?.find((t) => t.tag === tag);
      const ra = old.status?.imageStatuses?.[name]?.tags?.find((t) => t.tag === tag);
      const rb = next.status?.imageStatuses?.[name]?.tags?.find((t) => t.tag === tag);
      if (imageLevel || !jsonEqual(toPlain(sa), toPlain(sb)) || !jsonEqual(toPlain(ra), toPlain(rb))) {
        for (const ref of [...(sa?.ownerReferences ?? []), ...(sb?.ownerReferences ?? [])])
          if (ref.uid) uids.add(ref.uid);
      }
    }
  }
  return uids;
}

function toPlain(value: unknown): unknown {
  return value === undefined ? null : (JSON.parse(JSON.stringify(value)) as unknown);
}
