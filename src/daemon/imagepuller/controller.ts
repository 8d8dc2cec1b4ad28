// The image puller: watches this node's NodeImage only, keeps one TagPull per (image, tag) in spec, and reports
// every tag's state in the NodeImage status. Level-triggered: each reconcile compares the spec with what runs
// and what is already complete (a status for the same tag and version with a completionTime is never pulled
// again, which is what makes a restart cheap), starts what is missing and stops what is no longer wanted.
import {
  EVENT_REASON_IMAGE_REMOVED,
  EVENT_REASON_PIN_RELEASED_FOR_DISK,
  EVENT_REASON_PIN_IMAGE_FAILED,
  EVENT_REASON_PULL_IMAGE_FAILED,
  EVENT_REASON_PULL_IMAGE_SUCCEED,
  EVENT_SOURCE_IMAGE_PULLER,
  KRUISE_DAEMON_CONFIG_NAMESPACE,
} from '../../api/constants.js';
import { IMAGE_PULL_JOBS } from '../../api/imagepulljob.js';
import type { ObjectReference } from '../../api/meta.js';
import {
  NODE_IMAGES,
  type ImageSpec,
  type ImageTagStatus,
  type NodeImage,
  type NodeImageStatus,
} from '../../api/nodeimage.js';
import {
  apiVersionOf,
  ControllerLoop,
  CoreResources,
  EventRecorder,
  Informer,
  isNotFound,
  type KubeClient,
  type KubeMetrics,
  type KubeObject,
} from '../../kube/index.js';
import type { Logger } from '../../observability/logger.js';
import type { Clock } from '../../util/clock.js';
import { OwnNodeObject } from '../own-node-object.js';
import type { PullSecretObject } from './docker-keyring.js';
import type { ImagePullMetrics } from './metrics.js';
import { buildNodeImageStatus, countPhases, specTags } from './nodeimage-status.js';
import { PullSecretStore, type PullCredentialSource } from './pull-secrets.js';
import { ControllerPullCredentials, controllerCaReader } from './controller-credentials.js';
import type { LeaseStore } from '../../cri/containerd-leases.js';
import { PullLeases } from './pull-leases.js';
import { RunSlots } from '../run-slots.js';
import { StatusWriter } from '../status-writer.js';
import { tagSpecProblem } from './tag-spec-check.js';
import { TagPull, tagPullReference, type ImageRuntime, type TagPullResult, type TagPullSpec } from './tag-pull.js';
import { ImagePins, type PinState } from './image-pins.js';
import { ImagePresence } from './image-presence.js';
import type { KubeletPulls } from './kubelet-pulls.js';
import { ImageFsGuard, type FsSpace } from './image-fs.js';
import { DiskRelease } from './disk-release.js';
import type { ContentStore } from '../../cri/containerd-content.js';
import { ProgressReader } from './progress-reader.js';
import type { ImageLabelStore } from '../../cri/containerd-images.js';
import { rfc3339 } from '../../util/time.js';
import { isRecord } from '../../util/is-record.js';

export const DEFAULT_MAX_PARALLEL_PULLS = 2;

export interface ImagePullControllerOptions {
  nodeName: string;
  client: KubeClient;
  /** The CRI image service once connected; rejects if `signal` aborts first. */
  runtime: (signal: AbortSignal) => Promise<ImageRuntime>;
  clock: Clock;
  logger: Logger;
  metrics: ImagePullMetrics;
  kubeMetrics?: KubeMetrics;
  maxParallelPulls?: number;
  /** Ask kruise-controller here for pull secrets; unset: read the copies in kruise-daemon-config directly. */
  pullCredentialsUrl?: string;
  /** Where pins are kept (containerd's image labels), or why the runtime cannot pin; once connected. */
  pinStore: (signal: AbortSignal) => Promise<ImageLabelStore | { unsupported: string }>;
  /** How often the Succeeded tags' images are looked for on the node (ms, default 5 s). */
  presenceIntervalMs?: number;
  /** kubelet's pulls for this node's pods; new pre-pulls wait for them, resumable ones pause. Unset: neither. */
  kubeletFirst?: Pick<KubeletPulls, 'whenClear' | 'pulling' | 'onStart'>;
  /** containerd's lease service, so a pull paused for kubelet resumes; undefined on another runtime. */
  leaseStore?: (signal: AbortSignal) => Promise<LeaseStore | undefined>;
  /** containerd's content store, for pull progress; undefined on a runtime without one (no progress then). */
  contentStore?: (signal: AbortSignal) => Promise<ContentStore | undefined>;
  /** How often the progress of running pulls is read and written (ms, default 5 s: one write per 5 s at most). */
  progressIntervalMs?: number;
  /** The disk check: kubelet's image GC thresholds (percent) and where the host's root is seen. */
  disk?: { highPercent?: number; lowPercent?: number; fsRoot?: string; space?: (path: string) => Promise<FsSpace> };
}

/** The note on a tag pulled again because its image left the node while the tag was Succeeded. */
export const PULLED_AGAIN_NOTE = 'pulled again: the image had been removed from the node';

/** A tag that failed before it could start (its spec is unusable), kept until the spec changes. */
interface StaticTag {
  version: number;
  status: ImageTagStatus;
}

export class ImagePullController {
  readonly informer: Informer<NodeImage>;
  private readonly loop: ControllerLoop;
  private readonly slots: RunSlots;
  private readonly secrets: PullCredentialSource;
  private readonly writer: StatusWriter;
  private readonly events: EventRecorder;
  /** Running and finished pulls by tag key. */
  private readonly pulls = new Map<string, TagPull>();
  /** Completed statuses adopted from the object (earlier runs of the agent, or the central controller). */
  private readonly adopted = new Map<string, ImageTagStatus>();
  private readonly invalid = new Map<string, StaticTag>();
  /** Tags whose image left the node while Succeeded, by key: the version whose reported status is not adopted. */
  private readonly gone = new Map<string, number>();
  /** Tags whose image kubelet removed after their pin was released for disk space: Failed until the spec changes. */
  private readonly evicted = new Map<string, StaticTag>();
  private readonly disk: ImageFsGuard;
  private readonly diskRelease: DiskRelease;
  private readonly stopping = new AbortController();
  private readonly progress: ProgressReader | undefined;
  private readonly leases: PullLeases | undefined;
  private readonly pins: ImagePins;
  private readonly presence: ImagePresence;
  /** The NodeImage to build the status on, and its status patch. */
  private readonly own: OwnNodeObject<NodeImage>;
  private readonly log: Logger;

  constructor(private readonly options: ImagePullControllerOptions) {
    this.log = options.logger;
    this.informer = new Informer<NodeImage>(NODE_IMAGES, options.client, {
      fieldSelector: `metadata.name=${options.nodeName}`,
      name: NODE_IMAGES.resource,
      clock: options.clock,
      logger: options.logger,
      metrics: options.kubeMetrics,
    });
    this.own = new OwnNodeObject({
      client: options.client,
      rt: NODE_IMAGES,
      name: options.nodeName,
      informer: this.informer,
      clock: options.clock,
      logger: options.logger,
    });
    // one worker: the node's one NodeImage is the only key
    this.loop = new ControllerLoop(
      'imagepuller',
      {
        workers: 1,
        clock: options.clock,
        logger: options.logger,
        kubeMetrics: options.kubeMetrics,
      },
      () => this.reconcile(),
    );
    this.slots = new RunSlots(options.maxParallelPulls ?? DEFAULT_MAX_PARALLEL_PULLS);
    this.leases = options.leaseStore
      ? new PullLeases({ store: options.leaseStore, clock: options.clock, logger: options.logger })
      : undefined;
    this.secrets =
      options.pullCredentialsUrl !== undefined
        ? new ControllerPullCredentials({
            url: options.pullCredentialsUrl,
            token: bearerTokenOf(options.client),
            readCa: controllerCaReader(options.client),
            clock: options.clock,
          })
        : new PullSecretStore((name) => this.readSecret(name), options.clock);
    this.writer = new StatusWriter({
      clock: options.clock,
      logger: options.logger,
      subject: 'NodeImage status',
      write: () => this.writeStatus(),
    });
    this.events = new EventRecorder(options.client, {
      component: EVENT_SOURCE_IMAGE_PULLER,
      host: options.nodeName,
      clock: options.clock,
      logger: options.logger,
      metrics: options.kubeMetrics,
    });
    this.pins = new ImagePins({
      store: options.pinStore,
      clock: options.clock,
      logger: options.logger,
      onChange: () => this.changed(),
      onFailure: (reference, action, message) => this.pinFailed(reference, action, message),
    });
    this.presence = new ImagePresence({
      runtime: options.runtime,
      clock: options.clock,
      logger: options.logger,
      references: () => new Set(this.succeededReferences().keys()),
      onGone: (references) => this.imagesGone(references),
      ...(options.presenceIntervalMs !== undefined && { intervalMs: options.presenceIntervalMs }),
    });
    this.disk = new ImageFsGuard({
      runtime: options.runtime,
      clock: options.clock,
      logger: options.logger,
      ...(options.disk?.highPercent !== undefined && { highPercent: options.disk.highPercent }),
      ...(options.disk?.lowPercent !== undefined && { lowPercent: options.disk.lowPercent }),
      ...(options.disk?.fsRoot !== undefined && { fsRoot: options.disk.fsRoot }),
      ...(options.disk?.space !== undefined && { space: options.disk.space }),
      onUsage: (usage) => {
        options.metrics.setImageFsPercent(usage.percent);
        void this.diskRelease.follow();
      },
      onOff: () => options.metrics.setImageFsPercent(undefined),
    });
    this.diskRelease = new DiskRelease({
      disk: this.disk,
      runtime: options.runtime,
      signal: this.stopping.signal,
      logger: options.logger,
      pinned: () => this.pinnedByAge(),
      onReleased: (reference, reason) => this.pinReleasedForDisk(reference, reason),
      onChange: () => this.changed(),
    });
    const contentStore = options.contentStore;
    this.progress = contentStore
      ? new ProgressReader({
          store: contentStore,
          running: () => this.pulls.values(),
          onMoved: () => this.writer.request(),
          disk: this.disk,
          clock: options.clock,
          logger: options.logger,
          ...(options.progressIntervalMs !== undefined && { intervalMs: options.progressIntervalMs }),
        })
      : undefined;
    this.informer.addHandlers({
      onAdd: () => this.loop.add(options.nodeName),
      onUpdate: (before, after) => {
        if (JSON.stringify(before.spec ?? {}) !== JSON.stringify(after.spec ?? {})) this.loop.add(options.nodeName);
        else this.writer.request(); // someone else wrote the status: put ours back if it differs
      },
      onDelete: () => this.loop.add(options.nodeName),
    });
  }

  start(): void {
    this.informer.start();
    this.loop.start();
    this.presence.start();
    this.disk.start();
    this.progress?.start();
  }

  /** Health check: fails until the NodeImage informer has listed once, saying why the last list failed. */
  readonly checkSynced = (): void => {
    const reason = this.informer.notSyncedReason();
    if (reason !== undefined)
      throw new Error(`the NodeImage informer (metadata.name=${this.options.nodeName}) ${reason}`);
  };

  async stop(): Promise<void> {
    this.stopping.abort(new Error('the image puller stopped'));
    await this.progress?.stop();
    await this.presence.stop();
    await this.disk.stop();
    await this.loop.stop();
    // pins stay: they hold while the tags are in the spec, and the next agent releases what is no longer wanted
    this.pins.close();
    for (const pull of this.pulls.values()) pull.abort();
    await this.informer.stop();
    await Promise.all([...this.pulls.values()].map((p) => p.done));
    this.leases?.close();
    await this.writer.close().catch(() => undefined);
    await this.events.close();
  }

  private reconcile(): void {
    const nodeImage = this.informer.get(this.options.nodeName);
    if (!nodeImage || nodeImage.metadata?.deletionTimestamp) {
      this.stopAll();
      this.own.forget();
      return;
    }
    const images = isRecord(nodeImage.spec?.images) ? nodeImage.spec.images : {};
    const wanted = new Set<string>();
    for (const [name, image] of Object.entries(images)) {
      if (!isRecord(image)) continue;
      for (const tag of specTags(image)) {
        const key = tagKey(name, tag.tag);
        wanted.add(key);
        this.reconcileTag(nodeImage, name, image, tag, key);
      }
    }
    for (const [key, pull] of this.pulls) {
      if (wanted.has(key)) continue;
      pull.abort();
      this.pulls.delete(key);
      this.log.info(
        { image: `${pull.spec.imageName}:${pull.spec.tag}` },
        'tag removed from the NodeImage; its pull stopped',
      );
    }
    for (const key of this.adopted.keys()) if (!wanted.has(key)) this.adopted.delete(key);
    for (const key of this.invalid.keys()) if (!wanted.has(key)) this.invalid.delete(key);
    for (const key of this.gone.keys()) if (!wanted.has(key)) this.gone.delete(key);
    for (const key of this.evicted.keys()) if (!wanted.has(key)) this.evicted.delete(key);
    this.changed();
  }

  private reconcileTag(
    nodeImage: NodeImage,
    name: string,
    image: ImageSpec & Record<string, unknown>,
    tag: Record<string, unknown> & { tag: string },
    key: string,
  ): void {
    const version = typeof tag.version === 'number' && Number.isInteger(tag.version) ? tag.version : 0;
    const problem = tagSpecProblem(name, image, tag);
    if (problem !== undefined) {
      this.pulls.get(key)?.abort();
      this.pulls.delete(key);
      this.adopted.delete(key);
      const known = this.invalid.get(key);
      if (known?.status.message === problem) return;
      const status: ImageTagStatus = {
        tag: tag.tag,
        phase: 'Failed',
        completionTime: rfc3339(this.options.clock.now()),
        version,
        message: problem,
      };
      this.invalid.set(key, { version, status });
      this.log.warn({ image: `${name}:${tag.tag}`, err: problem }, 'tag cannot be pulled as written');
      this.emitFinished(nodeImage, { imageName: name, tag: tag.tag, version, ownerReferences: ownersOf(tag) }, status);
      return;
    }
    // a tag whose image kubelet took after its pin was released for disk space stays Failed until its version moves
    const evicted = this.evicted.get(key);
    if (evicted && evicted.version === version) return;
    this.evicted.delete(key);
    // a tag whose spec was just fixed is pulled, even though the object still shows the failure we reported
    const fixed = this.invalid.delete(key) || evicted !== undefined;
    const running = this.pulls.get(key);
    if (running && running.spec.version === version) return;
    if (running) {
      running.abort();
      this.pulls.delete(key);
      this.log.info(
        { image: `${name}:${tag.tag}`, from: running.spec.version, to: version },
        'tag version changed; pulling again',
      );
    }
    const adopted = this.adopted.get(key);
    if (adopted && (adopted.version ?? 0) === version) return;
    this.adopted.delete(key);
    const reported = nodeImage.status?.imageStatuses?.[name]?.tags?.find(
      (s) => s.tag === tag.tag && (s.version ?? 0) === version && Boolean(s.completionTime),
    );
    const pullAgain = this.gone.get(key) === version;
    this.gone.delete(key);
    if (reported && !fixed && !pullAgain) {
      // what an earlier agent said of the pin is said again from this agent's own pins, never twice
      const message = withoutPinNote(reported.message);
      const { message: _old, ...rest } = reported;
      this.adopted.set(key, message === undefined ? rest : { ...rest, message });
      return;
    }
    const spec: TagPullSpec = {
      imageName: name,
      tag: tag.tag,
      version,
      pullPolicy: isRecord(tag.pullPolicy) ? tag.pullPolicy : undefined,
      imagePullPolicy: typeof tag.imagePullPolicy === 'string' ? tag.imagePullPolicy : undefined,
      pullSecrets: Array.isArray(image.pullSecrets) ? image.pullSecrets : undefined,
      sandboxConfig: isRecord(image.sandboxConfig) ? image.sandboxConfig : undefined,
      ownerReferences: ownersOf(tag),
      ...(Number.isSafeInteger(nodeImage.metadata.generation) && { generation: nodeImage.metadata.generation }),
      ...(pullAgain && { note: PULLED_AGAIN_NOTE }),
    };
    this.pulls.set(
      key,
      new TagPull(spec, {
        runtime: this.options.runtime,
        slots: this.slots,
        secrets: this.secrets,
        clock: this.options.clock,
        logger: this.log,
        metrics: this.options.metrics,
        onChange: () => this.changed(),
        onFinished: (result) => this.onFinished(result),
        kubeletFirst: this.options.kubeletFirst,
        leases: this.leases,
        disk: this.disk,
      }),
    );
  }

  private stopAll(): void {
    for (const pull of this.pulls.values()) pull.abort();
    this.pulls.clear();
    this.adopted.clear();
    this.invalid.clear();
    this.gone.clear();
    this.evicted.clear();
    this.diskRelease.clear();
    this.pins.want([]);
  }

  /** A tag's status changed or the spec did: a status write is due, and the pins follow the Succeeded tags. */
  private changed(): void {
    this.writer.request();
    this.pins.want(
      [...this.succeededReferences().keys()].filter((reference) => this.diskRelease.reasonFor(reference) === undefined),
    );
  }

  /** The reference each Succeeded tag was pulled as, with the tags (keys) pulled as it. */
  private succeededReferences(): Map<string, string[]> {
    const references = new Map<string, string[]>();
    const add = (key: string, status: ImageTagStatus | undefined): void => {
      if (status?.phase !== 'Succeeded') return;
      const [name = '', tag = ''] = key.split('\u0000');
      const reference = tagPullReference(name, tag);
      if (reference === undefined) return;
      references.set(reference, [...(references.get(reference) ?? []), key]);
    };
    for (const [key, pull] of this.pulls) add(key, pull.status);
    for (const [key, status] of this.adopted) if (!this.pulls.has(key)) add(key, status);
    return references;
  }

  private tagStatus(name: string, tag: string): ImageTagStatus | undefined {
    const key = tagKey(name, tag);
    const status =
      this.invalid.get(key)?.status ??
      this.evicted.get(key)?.status ??
      this.pulls.get(key)?.status ??
      this.adopted.get(key);
    if (status?.phase !== 'Succeeded') return status;
    const reference = tagPullReference(name, tag);
    const released = reference === undefined ? undefined : this.diskRelease.reasonFor(reference);
    const problem =
      released !== undefined
        ? `pin released for disk space (${released}); kubelet's image GC may remove it`
        : reference === undefined
          ? undefined
          : pinProblem(this.pins.state(reference));
    if (problem === undefined) return status;
    return { ...status, message: status.message ? `${status.message}; ${problem}` : problem };
  }

  /** Images of Succeeded tags that left the node (GC of an unpinned image, `crictl rmi`): pulled again. */
  private imagesGone(references: string[]): void {
    const byReference = this.succeededReferences();
    const nodeImage = this.own.current();
    for (const reference of references) {
      const releasedFor = this.diskRelease.take(reference);
      for (const key of byReference.get(reference) ?? []) {
        const status = this.pulls.get(key)?.status ?? this.adopted.get(key);
        const version = status?.version ?? 0;
        this.pulls.get(key)?.abort();
        this.pulls.delete(key);
        this.adopted.delete(key);
        if (releasedFor !== undefined && status) {
          // kubelet's GC took it under disk pressure: pulling it again would fight kubelet; reported instead
          this.evicted.set(key, {
            version,
            status: {
              ...status,
              phase: 'Failed',
              completionTime: rfc3339(this.options.clock.now()),
              message: `removed by kubelet's image GC after its pin was released for disk space (${releasedFor})`,
            },
          });
        } else {
          this.gone.set(key, version);
        }
      }
      this.options.metrics.imageGone();
      if (releasedFor !== undefined) {
        this.log.warn({ reference }, "kubelet's image GC removed an image whose pin was released for disk space");
        continue;
      }
      this.log.warn(
        { reference },
        'a pre-pulled image left the node while its tag is in the NodeImage; pulling it again',
      );
      if (nodeImage) {
        this.events.event(
          nodeImage,
          'Warning',
          EVENT_REASON_IMAGE_REMOVED,
          `Image ${reference} was removed from the node (kubelet's image GC, or by hand) while its tag is in the NodeImage; pulling it again`,
          NODE_IMAGES,
        );
      }
    }
    this.loop.add(this.options.nodeName);
  }

  /** The references whose pins are held now, each with when its oldest tag was added to the spec (ms). */
  private pinnedByAge(): Map<string, number> {
    const nodeImage = this.own.current();
    const now = this.options.clock.now();
    const byAge = new Map<string, number>();
    for (const [reference, keys] of this.succeededReferences()) {
      if (this.pins.state(reference)?.kind !== 'pinned') continue;
      byAge.set(reference, Math.min(...keys.map((key) => tagCreatedAt(nodeImage, key, now))));
    }
    return byAge;
  }

  private pinReleasedForDisk(reference: string, reason: string): void {
    const nodeImage = this.own.current();
    if (!nodeImage) return;
    this.events.event(
      nodeImage,
      'Warning',
      EVENT_REASON_PIN_RELEASED_FOR_DISK,
      `Pin of image ${reference} released: ${reason}; kubelet's image GC may remove it`,
      NODE_IMAGES,
    );
  }

  private pinFailed(reference: string, action: 'pin' | 'unpin', message: string): void {
    const nodeImage = this.own.current();
    if (!nodeImage) return;
    this.events.event(
      nodeImage,
      'Warning',
      EVENT_REASON_PIN_IMAGE_FAILED,
      `${action === 'pin' ? 'Pinning' : 'Unpinning'} image ${reference} failed: ${message}`,
      NODE_IMAGES,
    );
  }

  private async writeStatus(): Promise<void> {
    let computed: NodeImageStatus | undefined;
    await this.own.patchStatus((draft) => {
      computed = buildNodeImageStatus(draft.spec, (name, tag) => this.tagStatus(name, tag));
      return computed;
    });
    if (computed) this.options.metrics.setTagsByPhase(countPhases(computed));
    this.options.metrics.setPins(this.pins.counts());
  }

  private onFinished(result: TagPullResult): void {
    const nodeImage = this.own.current();
    this.options.metrics.pullFinished(
      result.status.phase === 'Failed' ? 'failed' : result.present ? 'present' : 'succeeded',
      result.seconds,
    );
    if (nodeImage) this.emitFinished(nodeImage, result.spec, result.status, result.seconds);
  }

  private emitFinished(
    nodeImage: NodeImage,
    spec: Pick<TagPullSpec, 'imageName' | 'tag' | 'ownerReferences'> & { version: number },
    status: ImageTagStatus,
    seconds?: number,
  ): void {
    const image = `${spec.imageName}:${spec.tag}`;
    const [type, reason, message] =
      status.phase === 'Succeeded'
        ? ([
            'Normal',
            EVENT_REASON_PULL_IMAGE_SUCCEED,
            `Image ${image}, elapsedTime ${(seconds ?? 0).toFixed(3)}s${status.message ? ` (${status.message})` : ''}`,
          ] as const)
        : (['Warning', EVENT_REASON_PULL_IMAGE_FAILED, `Image ${image} ${status.message ?? 'failed'}`] as const);
    this.events.event(nodeImage, type, reason, message, NODE_IMAGES);
    for (const owner of spec.ownerReferences ?? []) {
      const target = ownerObject(owner);
      if (target) this.events.event(target, type, reason, message);
    }
  }

  private async readSecret(name: string): Promise<PullSecretObject | undefined> {
    try {
      return await this.options.client.get<PullSecretObject & KubeObject>(CoreResources.secrets, name, {
        namespace: KRUISE_DAEMON_CONFIG_NAMESPACE,
      });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }
}

/** The agent's bearer token, as its Kubernetes client sends it (the controller reviews it). */
function bearerTokenOf(client: KubeClient): () => Promise<string> {
  return async () => {
    const auth = client.connection.auth;
    if (auth.kind !== 'token') {
      throw new Error(
        'asking kruise-controller for pull credentials needs a ServiceAccount token (the agent has none)',
      );
    }
    return await auth.source.token();
  };
}

/** The start of what tagStatus() appends about a pin (after `; ` when the status has a message of its own). */
const PIN_NOTE = /(?:^|; )(?:not pinned\b|pin released for disk space\b)/;

/** A status message without the pin note an agent appended to it (undefined when nothing else is left). */
export function withoutPinNote(message: string | undefined): string | undefined {
  if (message === undefined) return undefined;
  const note = PIN_NOTE.exec(message);
  if (!note) return message;
  const rest = message.slice(0, note.index);
  return rest === '' ? undefined : rest;
}

/** What a Succeeded tag's status says of its pin, when it is not held. */
function pinProblem(state: PinState | undefined): string | undefined {
  switch (state?.kind) {
    case 'failed':
      return `not pinned (kubelet's image GC may remove it): ${state.message}`;
    case 'unsupported':
      return `not pinned: ${state.message}`;
    default:
      return undefined;
  }
}

/** When a tag was added to the spec (its createdAt), ms; unknown ones count as `now`. */
function tagCreatedAt(nodeImage: NodeImage | undefined, key: string, now: number): number {
  const [name = '', tag = ''] = key.split('\u0000');
  const image = nodeImage?.spec?.images?.[name];
  const spec =
    isRecord(image) && Array.isArray(image.tags) ? image.tags.find((t) => isRecord(t) && t.tag === tag) : undefined;
  const text = isRecord(spec) && typeof spec.createdAt === 'string' ? spec.createdAt : '';
  const at = Date.parse(text);
  return Number.isFinite(at) ? at : now;
}

function tagKey(name: string, tag: string): string {
  return `${name}\u0000${tag}`;
}

function ownersOf(tag: Record<string, unknown>): ObjectReference[] | undefined {
  const owners = tag.ownerReferences;
  return Array.isArray(owners) ? owners.filter(isRecord) : undefined;
}

/** An ImagePullJob named in a tag's ownerReferences, as an object events can point at. */
function ownerObject(ref: ObjectReference): KubeObject | undefined {
  if (!ref.name || !ref.namespace) return undefined;
  return {
    apiVersion: ref.apiVersion || apiVersionOf(IMAGE_PULL_JOBS),
    kind: ref.kind || IMAGE_PULL_JOBS.kind,
    metadata: { name: ref.name, namespace: ref.namespace, ...(ref.uid && { uid: ref.uid }) },
  };
}
