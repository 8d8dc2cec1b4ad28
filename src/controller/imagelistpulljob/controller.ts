// imagelistpulljob controller: one ImagePullJob per listed image (owned by the list job, labelled with a hash of the
// job template); a child whose template hash is stale is replaced, a child whose image left the list deleted.
// Status aggregates the children; an Always list job completes when every child has, and is deleted after its TTL
// (the children go with it through garbage collection).
import { createHash } from 'node:crypto';
import { CONTROLLER_REVISION_HASH_LABEL } from '../../api/constants.js';
import {
  type ImageListPullJobStatus,
  IMAGE_LIST_PULL_JOBS,
  type ImageListPullJob,
} from '../../api/imagelistpulljob.js';
import { type ImagePullJobTemplate, IMAGE_PULL_JOBS, type ImagePullJob } from '../../api/imagepulljob.js';
import { ignoreNotFound } from '../../kube/errors.js';
import type { Informer } from '../../kube/informer/informer.js';
import { jsonEqual } from '../../kube/merge-patch.js';
import { objectKey } from '../../kube/object.js';
import { patchStatus } from '../../kube/status-patch.js';
import type { ReconcileResult } from '../../kube/workqueue/workers.js';
import { apiVersionOf } from '../../kube/resource.js';
import { ControllerLoop } from '../../kube/controller-loop.js';
import type { ControllerParts } from '../shared/controller-parts.js';
import { parseTime, rfc3339 } from '../../util/time.js';

/** Index of the ImagePullJob cache: uid of the controller owner. */
export const CONTROLLER_UID_INDEX = 'controllerUid';
export const byControllerUid = (o: ImagePullJob): string[] => {
  const ref = (o.metadata.ownerReferences ?? []).find((r) => r.controller);
  return ref ? [ref.uid] : [];
};

export const FAILED_IMAGE_MESSAGE = "Please check for details which nodes failed by 'kubectl get ImagePullJob <name>'.";

const TEMPLATE_FIELDS: (keyof ImagePullJobTemplate)[] = [
  'pullSecrets',
  'selector',
  'podSelector',
  'parallelism',
  'pullPolicy',
  'completionPolicy',
  'sandboxConfig',
  'imagePullPolicy',
];

/** A stable hash of the job template (canonical JSON, sorted keys), as a label value. */
export function templateHash(spec: ImagePullJobTemplate): string {
  return createHash('sha256')
    .update(canonical(templateOf(spec)))
    .digest('hex')
    .slice(0, 10);
}

/** The job-template fields the spec sets (a list job's own fields, such as its images, left out). */
function templateOf(spec: ImagePullJobTemplate): Partial<ImagePullJobTemplate> {
  const template: Partial<ImagePullJobTemplate> = {};
  const copy = <K extends keyof ImagePullJobTemplate>(field: K): void => {
    template[field] = spec[field];
  };
  for (const field of TEMPLATE_FIELDS) if (spec[field] !== undefined) copy(field);
  return template;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The list job's status from its children (pure). */
export function listJobStatus(
  job: ImageListPullJob,
  children: readonly ImagePullJob[],
  now: number,
): ImageListPullJobStatus {
  const status: ImageListPullJobStatus = {
    startTime: job.status?.startTime ?? rfc3339(now),
    desired: (job.spec?.images ?? []).length,
    active: 0,
    completed: 0,
    succeeded: 0,
  };
  const failed: NonNullable<ImageListPullJobStatus['failedImageStatuses']> = [];
  for (const child of children) {
    const s = child.status;
    if (!s?.startTime) continue;
    if ((s.active ?? 0) > 0) status.active! += 1;
    if ((s.failed ?? 0) > 0) {
      failed.push({ imagePullJob: child.metadata.name, name: child.spec?.image, message: FAILED_IMAGE_MESSAGE });
    }
    if (s.completionTime || s.desired === (s.failed ?? 0) + (s.succeeded ?? 0)) status.completed! += 1;
    if (s.desired === (s.succeeded ?? 0)) status.succeeded! += 1;
  }
  if (failed.length > 0) status.failedImageStatuses = failed.sort((a, b) => ((a.name ?? '') < (b.name ?? '') ? -1 : 1));
  if (job.spec?.completionPolicy?.type !== 'Never' && status.desired === status.completed) {
    status.completionTime = job.status?.completionTime ?? rfc3339(now);
  }
  return status;
}

export interface ImageListPullJobControllerOptions extends ControllerParts {
  listJobs: Informer<ImageListPullJob>;
  jobs: Informer<ImagePullJob>;
}

/** A child created but not yet in the cache is remembered this long (then the cache is trusted again). */
const PENDING_CHILD_MS = 30_000;

export class ImageListPullJobController {
  private readonly loop: ControllerLoop;
  /** `<list uid>/<image>` → when we created a child for it (cache may not show it yet). */
  private readonly pendingChildren = new Map<string, number>();

  constructor(private readonly o: ImageListPullJobControllerOptions) {
    this.loop = new ControllerLoop('imagelistpulljob', o, (key) => this.reconcile(key));
  }

  start(): void {
    const enqueueOwner = (child: ImagePullJob): void => {
      const ref = (child.metadata.ownerReferences ?? []).find(
        (r) => r.controller && r.kind === IMAGE_LIST_PULL_JOBS.kind,
      );
      if (!ref) return;
      this.pendingChildren.delete(`${ref.uid}/${child.spec?.image ?? ''}`);
      this.loop.add(`${child.metadata.namespace ?? ''}/${ref.name}`);
    };
    this.loop.watch(
      this.o.listJobs.addHandlers({
        onAdd: (j) => this.loop.add(objectKey(j)),
        onUpdate: (_, j) => this.loop.add(objectKey(j)),
        onDelete: (j) => this.loop.add(objectKey(j)),
      }),
      this.o.jobs.addHandlers({
        onAdd: enqueueOwner,
        onUpdate: (_, j) => enqueueOwner(j),
        onDelete: enqueueOwner,
      }),
    );
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  async reconcile(key: string): Promise<ReconcileResult | void> {
    const job = this.o.listJobs.get(key);
    if (!job || job.metadata.deletionTimestamp) return;
    const now = this.o.clock.now();
    const namespace = job.metadata.namespace ?? '';
    const uid = job.metadata.uid ?? '';
    const hash = templateHash(job.spec ?? { completionPolicy: {} });

    if (job.status?.completionTime) {
      const ttl = job.spec?.completionPolicy?.ttlSecondsAfterFinished;
      if (ttl === undefined || ttl === null) return;
      const left = (parseTime(job.status.completionTime) ?? now) + ttl * 1000 - now;
      if (left > 0) return { requeueAfter: left };
      await this.o.client
        .delete(IMAGE_LIST_PULL_JOBS, job.metadata.name ?? '', {
          namespace,
          propagationPolicy: 'Background',
          preconditions: { uid },
        })
        .catch(ignoreNotFound);
      return;
    }
    if (job.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] !== hash) {
      await this.o.client.patch(
        IMAGE_LIST_PULL_JOBS,
        job.metadata.name ?? '',
        { metadata: { labels: { [CONTROLLER_REVISION_HASH_LABEL]: hash } } },
        { type: 'merge', namespace },
      );
    }

    const children = this.o.jobs.store.byIndex(CONTROLLER_UID_INDEX, uid).filter((c) => !c.metadata.deletionTimestamp);
    const images = [...new Set(job.spec?.images ?? [])];
    const byImage = new Map<string, ImagePullJob>();
    let waiting = false;
    for (const child of children) {
      const image = child.spec?.image ?? '';
      const stale =
        !images.includes(image) ||
        child.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] !== hash ||
        byImage.has(image);
      if (stale) {
        await this.o.client
          .delete(IMAGE_PULL_JOBS, child.metadata.name ?? '', {
            namespace,
            propagationPolicy: 'Background',
            preconditions: { uid: child.metadata.uid },
          })
          .catch(ignoreNotFound);
        this.childEvent(job, 'delete', child);
        continue;
      }
      byImage.set(image, child);
    }
    for (const image of images) {
      if (byImage.has(image)) continue;
      const pendingKey = `${uid}/${image}`;
      const pendingSince = this.pendingChildren.get(pendingKey);
      if (pendingSince !== undefined && now - pendingSince < PENDING_CHILD_MS) {
        waiting = true;
        continue;
      }
      const created = await this.o.client.create<ImagePullJob>(IMAGE_PULL_JOBS, childFor(job, image, hash));
      this.pendingChildren.set(pendingKey, now);
      waiting = true;
      this.childEvent(job, 'create', created);
    }

    const status = listJobStatus(job, [...byImage.values()], now);
    if (waiting) delete status.completionTime;
    if (!jsonEqual(JSON.parse(JSON.stringify(job.status ?? {})), JSON.parse(JSON.stringify(status)))) {
      await patchStatus(this.o.client, IMAGE_LIST_PULL_JOBS, job, () => status);
    }
    if (waiting) return { requeueAfter: 1000 };
  }

  /** The Normal event recorded on the list job for each child it creates or deletes (OpenKruise's reasons and words). */
  private childEvent(job: ImageListPullJob, verb: 'create' | 'delete', child: ImagePullJob): void {
    const reason = verb === 'create' ? 'SuccessfulCreate' : 'SuccessfulDelete';
    const message = `Successful ${verb} ImagePullJob ${child.metadata.name ?? ''}`;
    this.o.events.event(job, 'Normal', reason, message, IMAGE_LIST_PULL_JOBS);
  }
}

function childFor(job: ImageListPullJob, image: string, hash: string): ImagePullJob {
  const spec = structuredClone(job.spec);
  const template = templateOf(spec);
  // The list job owns the TTL: a child deleted on its own TTL would be created again while its siblings still pull.
  const completionPolicy = { ...(spec.completionPolicy ?? {}) };
  delete completionPolicy.ttlSecondsAfterFinished;
  return {
    metadata: {
      generateName: `${job.metadata.name ?? 'list'}-`,
      namespace: job.metadata.namespace,
      labels: { [CONTROLLER_REVISION_HASH_LABEL]: hash },
      ownerReferences: [
        {
          apiVersion: apiVersionOf(IMAGE_LIST_PULL_JOBS),
          kind: IMAGE_LIST_PULL_JOBS.kind,
          name: job.metadata.name ?? '',
          uid: job.metadata.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: { ...template, completionPolicy, image },
  };
}
