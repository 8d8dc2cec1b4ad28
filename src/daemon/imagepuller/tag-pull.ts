// One (image, tag, version) of the NodeImage being pulled: Waiting (for a node slot) → Pulling (startTime) →
// Succeeded (imageID, completionTime, progress 100) or Failed (message). backoffLimit+1 attempts with a 1 s → 30 s
// backoff between them; timeoutSeconds bounds each attempt (the CRI deadline), activeDeadlineSeconds the whole
// pull from its start. abort() stops it at once: the CRI call is cancelled and nothing more is reported. A pull
// secret that does not exist is skipped (a warning, and the tag's status message names it). On containerd the pull
// runs under a lease of its own (pull-leases.ts), so when kubelet starts pulling for a pod of this node the running
// attempt is cancelled, the tag waits again (Waiting, saying so) and then resumes: no attempt is spent, and only
// what was not fetched yet is fetched.
import {
  KRUISE_DAEMON_CONFIG_NAMESPACE,
  PULLING_IMAGE_BY_ANNOTATION,
  PULLING_IMAGE_BY_VALUE,
} from '../../api/constants.js';
import { pullReference, repositoryName, tryParseNameAndTag, type ImageReference } from '../../api/image-reference.js';
import type { ObjectReference } from '../../api/meta.js';
import {
  TAG_RETRY_FIRST_WAIT_MS,
  TAG_RETRY_MAX_WAIT_MS,
  type ImageTagPullPolicy,
  type ImageTagStatus,
  type ReferenceObject,
  type SandboxConfig,
} from '../../api/nodeimage.js';
import type { CriCallOptions } from '../../cri/client.js';
import { isCriError } from '../../cri/errors.js';
import type {
  AuthConfig,
  ImageStatusRequest,
  ImageStatusResponse__Output,
  PullImageRequest,
  PullImageResponse__Output,
} from '../../cri/types.js';
import type { Logger } from '../../observability/logger.js';
import type { Clock } from '../../util/clock.js';
import { credentialsFor, type RegistryCredential } from './docker-keyring.js';
import type { ImageListRuntime } from './image-presence.js';
import type { KubeletPulls } from './kubelet-pulls.js';
import type { PullLease, PullLeases } from './pull-leases.js';
import type { ImageFsGuard, ImageFsRuntime } from './image-fs.js';
import type { ImagePullMetrics } from './metrics.js';
import {
  PullSecretProblem,
  skippedSecretsMessage,
  type PullCredentialSource,
  type PullSecretCredentials,
} from './pull-secrets.js';
import type { RunSlots, ReleaseSlot } from '../run-slots.js';
import { errorMessage } from '../../util/error-message.js';
import { rfc3339 } from '../../util/time.js';

export const DEFAULT_TIMEOUT_SECONDS = 600;
export const DEFAULT_BACKOFF_LIMIT = 3;
/** Deadline of the ImageStatus call that IfNotPresent makes. */
const IMAGE_STATUS_TIMEOUT_MS = 10_000;

/** What the puller needs of the CRI image service (CriClient has it). */
export interface ImageRuntime extends ImageListRuntime, ImageFsRuntime {
  pullImage(request: PullImageRequest, options?: CriCallOptions): Promise<PullImageResponse__Output>;
  imageStatus(request: ImageStatusRequest, options?: CriCallOptions): Promise<ImageStatusResponse__Output>;
}

/** Everything a tag pull needs from the NodeImage spec, copied when it starts. */
export interface TagPullSpec {
  /** The NodeImage key (familiar name, no tag). */
  imageName: string;
  tag: string;
  version: number;
  pullPolicy?: ImageTagPullPolicy | undefined;
  /** An ImagePullPolicy (`Always`, `IfNotPresent`), or any other string as written in the spec. */
  imagePullPolicy?: string | undefined;
  pullSecrets?: ReferenceObject[] | undefined;
  sandboxConfig?: SandboxConfig | undefined;
  ownerReferences?: ObjectReference[] | undefined;
  /** metadata.generation of the NodeImage the spec was copied from. */
  generation?: number | undefined;
  /** Said in the status message when the pull succeeds (why this tag was pulled again). */
  note?: string | undefined;
}

export interface TagPullResult {
  spec: TagPullSpec;
  status: ImageTagStatus;
  /** Seconds from startTime to completion (0 when it failed before starting). */
  seconds: number;
  /** True when IfNotPresent found the image and nothing was pulled. */
  present: boolean;
}

export interface TagPullDependencies {
  /** The runtime, once connected (may wait). */
  runtime: (signal: AbortSignal) => Promise<ImageRuntime>;
  slots: RunSlots;
  secrets: PullCredentialSource;
  clock: Clock;
  /** The image puller's logger; the pull binds `image` (name:tag) to it, so its lines do not repeat it. */
  logger: Logger;
  metrics?: ImagePullMetrics;
  /** The status changed (a write is due). */
  onChange: () => void;
  /** The pull ended (Succeeded or Failed) and was not aborted. */
  onFinished?: (result: TagPullResult) => void;
  /** kubelet's pulls for this node's pods, which a new pull waits for and a resumable one pauses for. */
  kubeletFirst?: Pick<KubeletPulls, 'whenClear' | 'pulling' | 'onStart'> | undefined;
  /** Leases that make a pull resumable (containerd); none: pulls are not paused for kubelet. */
  leases?: Pick<PullLeases, 'take'> | undefined;
  /** The image filesystem, which a new pull waits for while it is at kubelet's GC threshold (image-fs.ts). */
  disk?: Pick<ImageFsGuard, 'whenRoom' | 'full'> | undefined;
}

class AttemptTimeout extends Error {
  constructor(
    message: string,
    readonly byDeadline: boolean,
  ) {
    super(message);
  }
}

/** An error the next attempt would get again: no point retrying. */
class PermanentPullError extends Error {}

/** The attempt was cancelled so kubelet's pull goes first; the pull resumes under its lease. */
class PausedForKubelet extends Error {}

export class TagPull {
  private current: ImageTagStatus;
  private readonly stop = new AbortController();
  /** Aborted with the reason when the pull must not go on (refuse()): Failed with it, never retried. */
  private readonly refusal = new AbortController();
  private readonly log: Logger;
  /** Pull secrets the last attempt went without (told in the status message). */
  private skipped = '';
  /** Missing pull secrets already logged by this pull (one warning each). */
  private readonly warnedSecrets = new Set<string>();
  /** Resolves when the pull has ended (finished or aborted) and let go of its slot. */
  readonly done: Promise<void>;

  constructor(
    readonly spec: TagPullSpec,
    private readonly deps: TagPullDependencies,
  ) {
    this.current = { tag: spec.tag, phase: 'Waiting', version: spec.version };
    this.log = deps.logger.child({ image: `${spec.imageName}:${spec.tag}` });
    // started on a microtask, so the owner has stored this object before the first status change arrives
    this.done = Promise.resolve()
      .then(() => this.run())
      .catch((err: unknown) => {
        // run() handles its own failures; this is a safety net so a bug never becomes an unhandled rejection
        if (!this.stop.signal.aborted) this.fail(`internal error: ${errorMessage(err)}`, 0);
      });
  }

  /** The status to report for this tag now. */
  get status(): ImageTagStatus {
    return this.current;
  }

  /**
   * While Pulling: how far it has come (percent of bytes, below 100). No change is announced: the image puller writes
   * progress on its own, slower, clock. True when it changed.
   */
  setProgress(percent: number): boolean {
    if (this.stop.signal.aborted || this.current.phase !== 'Pulling' || this.current.progress === percent) return false;
    this.current = { ...this.current, progress: percent };
    return true;
  }

  /** When the current attempt's pull began (ms), while Pulling. */
  get pullingSince(): number | undefined {
    return this.current.phase === 'Pulling' && this.current.startTime !== undefined
      ? Date.parse(this.current.startTime)
      : undefined;
  }

  /** Stop the running attempt and fail with `message`, without retrying (the disk check: it would not fit). */
  refuse(message: string): void {
    if (!this.stop.signal.aborted && !this.refusal.signal.aborted) this.refusal.abort(new PermanentPullError(message));
  }

  /** Stop: cancel the CRI call, release the slot, report nothing more. */
  abort(): void {
    if (!this.stop.signal.aborted)
      this.stop.abort(new Error(`pull of ${this.spec.imageName}:${this.spec.tag} stopped`));
  }

  private async run(): Promise<void> {
    const parsed = tryParseNameAndTag(this.spec.imageName, this.spec.tag);
    if (!parsed.ok) {
      this.fail(`invalid image ${this.spec.imageName}:${this.spec.tag}: ${parsed.error}`, 0);
      return;
    }
    const reference = parsed.reference;
    const pullRef = pullReference(reference);
    const policy = this.spec.pullPolicy ?? {};
    const attempts = backoffLimitOf(policy) + 1;
    const timeoutMs = timeoutSecondsOf(policy) * 1000;
    const deadlineSeconds = policy.activeDeadlineSeconds;
    const hasDeadline = typeof deadlineSeconds === 'number' && deadlineSeconds > 0;

    let release: ReleaseSlot | undefined;
    try {
      // stay Waiting while the runtime is not connected (agent start, runtime restart): no attempt is spent on it
      await this.deps.runtime(this.stop.signal);
      release = await this.acquireWhenNodeAllows(pullRef);
    } catch {
      return; // aborted while waiting
    }
    const startedAt = this.deps.clock.now();
    const deadlineAt = hasDeadline ? startedAt + deadlineSeconds * 1000 : Infinity;
    this.update({ tag: this.spec.tag, phase: 'Pulling', startTime: rfc3339(startedAt), version: this.spec.version });
    // the reference asked of the runtime, when it differs from what the spec wrote (a registry or tag filled in)
    const resolved = pullRef === `${this.spec.imageName}:${this.spec.tag}` ? {} : { reference: pullRef };
    this.log.info({ ...resolved, attempts, timeoutMs, activeDeadlineSeconds: deadlineSeconds }, 'pulling image');

    let lastError = '';
    let backoffMs = TAG_RETRY_FIRST_WAIT_MS;
    let lease: PullLease | undefined;
    try {
      try {
        lease = await this.deps.leases?.take(this.stop.signal);
      } catch {
        if (this.stop.signal.aborted) return;
      }
      for (let attempt = 1; attempt <= attempts; attempt++) {
        const left = deadlineAt - this.deps.clock.now();
        if (left <= 0) {
          lastError = deadlineMessage(pullRef, deadlineSeconds ?? 0, lastError);
          break;
        }
        try {
          release ??= await this.deps.slots.acquire(pullRef, this.stop.signal);
          const outcome = await this.attempt(reference, pullRef, Math.min(timeoutMs, left), left < timeoutMs, {
            timeoutSeconds: timeoutSecondsOf(policy),
            deadlineSeconds: deadlineSeconds ?? 0,
            lease: lease?.id,
          });
          this.succeed(outcome.imageId, startedAt, outcome.present);
          return;
        } catch (err) {
          if (this.stop.signal.aborted) return;
          if (err instanceof PausedForKubelet) {
            // not an attempt: let go of the slot, wait as a new pull would, then go on from what the lease kept
            this.deps.metrics?.attempt('paused');
            this.log.info({ attempt }, 'pull paused for kubelet; it resumes under its lease when kubelet is done');
            release?.();
            release = undefined;
            try {
              release = await this.acquireWhenNodeAllows(pullRef);
            } catch {
              return; // aborted while waiting
            }
            this.update({
              tag: this.spec.tag,
              phase: 'Pulling',
              startTime: rfc3339(startedAt),
              version: this.spec.version,
            });
            attempt--;
            continue;
          }
          lastError = errorMessage(this.refusal.signal.aborted ? this.refusal.signal.reason : err);
          this.deps.metrics?.attempt('error');
          this.log.warn({ attempt, of: attempts, err: lastError }, 'image pull attempt failed');
          if (err instanceof PermanentPullError || this.refusal.signal.aborted) break;
        }
        if (attempt === attempts) break;
        // let another tag use the slot while this one backs off
        release?.();
        release = undefined;
        const pause = Math.min(backoffMs, Math.max(0, deadlineAt - this.deps.clock.now()));
        backoffMs = Math.min(backoffMs * 2, TAG_RETRY_MAX_WAIT_MS);
        try {
          await this.deps.clock.sleep(pause, AbortSignal.any([this.stop.signal, this.refusal.signal]));
        } catch {
          if (this.stop.signal.aborted) return;
          lastError = errorMessage(this.refusal.signal.reason);
          break;
        }
      }
      if (this.stop.signal.aborted) return;
      this.fail(lastError || `pulling image ${pullRef} failed`, (this.deps.clock.now() - startedAt) / 1000, startedAt);
    } finally {
      release?.();
      await lease?.release();
    }
  }

  /**
   * A node slot, once the node allows a new pre-pull: kubelet pulls nothing for this node's pods (a pre-pull never
   * starts beside one of kubelet's) and the image filesystem is below kubelet's GC threshold. The status says what
   * it waits for. Both are checked again once the slot is ours.
   */
  private async acquireWhenNodeAllows(pullRef: string): Promise<ReleaseSlot> {
    const { kubeletFirst: kubelet, disk } = this.deps;
    const waitingFor = (message: string): void =>
      this.update({ tag: this.spec.tag, phase: 'Waiting', version: this.spec.version, message });
    for (;;) {
      const pulling = kubelet?.pulling() ?? [];
      if (kubelet && pulling.length > 0) {
        const shown = pulling.slice(0, 3).join(', ') + (pulling.length > 3 ? ` and ${pulling.length - 3} more` : '');
        waitingFor(`waiting for kubelet, which is pulling images for pods of this node (${shown})`);
        this.log.info({ kubeletPulling: pulling.length }, 'waiting for kubelet to finish its pulls');
        await kubelet.whenClear(this.stop.signal);
        continue;
      }
      const full = disk?.full();
      if (disk && full !== undefined) {
        waitingFor(`waiting for disk space: ${full}`);
        this.log.warn({ reason: full }, 'not pulling while the image filesystem is at the GC threshold');
        await disk.whenRoom(this.stop.signal);
        continue;
      }
      const release = await this.deps.slots.acquire(pullRef, this.stop.signal);
      if ((kubelet?.pulling().length ?? 0) === 0 && disk?.full() === undefined) return release;
      release();
    }
  }

  /** One attempt: IfNotPresent check, credentials, PullImage with each matching credential in turn. */
  private async attempt(
    reference: ImageReference,
    pullRef: string,
    budgetMs: number,
    budgetIsDeadline: boolean,
    limits: { timeoutSeconds: number; deadlineSeconds: number; lease?: string | undefined },
  ): Promise<{ imageId: string; present: boolean }> {
    const timer = new AbortController();
    // a pull under a lease pauses when kubelet starts pulling (what it fetched stays); one without a lease goes on
    const pause = new AbortController();
    const kubelet = this.deps.kubeletFirst;
    const stopListening =
      limits.lease !== undefined && kubelet
        ? kubelet.onStart(() => pause.abort(new PausedForKubelet(`paused for kubelet's pull`)))
        : () => undefined;
    const handle = this.deps.clock.setTimer(() => {
      timer.abort(
        budgetIsDeadline
          ? new AttemptTimeout(deadlineMessage(pullRef, limits.deadlineSeconds, ''), true)
          : new AttemptTimeout(
              `pulling image ${pullRef} timed out after ${limits.timeoutSeconds}s (pullPolicy.timeoutSeconds)`,
              false,
            ),
      );
    }, budgetMs);
    const signal = AbortSignal.any([this.stop.signal, timer.signal, this.refusal.signal, pause.signal]);
    const lease = limits.lease;
    this.skipped = '';
    const endsAt = this.deps.clock.now() + budgetMs;
    // the CRI deadline is a little later than our own timer, so a cut says which limit was hit
    const remaining = (): number => Math.max(1, endsAt - this.deps.clock.now()) + 1000;
    try {
      // every step honours `signal`, so an abort or a timeout ends the attempt at once and the slot (and with
      // it the reference) is let go only after the CRI call has really ended
      {
        const runtime = await this.deps.runtime(signal);
        if (this.spec.imagePullPolicy === 'IfNotPresent') {
          const found = await runtime.imageStatus(
            { image: { image: pullRef } },
            { timeoutMs: Math.min(IMAGE_STATUS_TIMEOUT_MS, remaining()), signal },
          );
          if (found.image?.id) return { imageId: found.image.id, present: true };
        }
        let credentials: RegistryCredential[];
        try {
          const read = await this.deps.secrets.credentials(this.spec);
          this.skipMissing(read);
          credentials = credentialsFor(repositoryName(reference), read.credentials);
        } catch (err) {
          // read the secrets again next time: the controller may copy a missing secret in at any moment
          this.deps.secrets.forget(this.spec);
          if (err instanceof PullSecretProblem) throw new Error(`cannot pull ${pullRef}: ${err.message}`);
          throw new Error(`cannot pull ${pullRef}: reading pull secrets failed: ${errorMessage(err)}`);
        }
        const request: PullImageRequest = {
          image: { image: pullRef },
          sandbox_config: {
            labels: { ...this.spec.sandboxConfig?.labels },
            annotations: {
              ...this.spec.sandboxConfig?.annotations,
              [PULLING_IMAGE_BY_ANNOTATION]: PULLING_IMAGE_BY_VALUE,
            },
          },
        };
        if (credentials.length === 0) {
          const response = await this.pullOnce(
            runtime,
            request,
            { timeoutMs: remaining(), signal, lease },
            pullRef,
            reference,
          );
          return { imageId: response.image_ref, present: false };
        }
        const failures: string[] = [];
        for (const credential of credentials) {
          try {
            const response = await this.pullOnce(
              runtime,
              { ...request, auth: authConfigOf(credential) },
              { timeoutMs: remaining(), signal, lease },
              pullRef,
              reference,
            );
            return { imageId: response.image_ref, present: false };
          } catch (err) {
            if (signal.aborted) throw err;
            failures.push(`with the credential for ${credential.key}: ${errorMessage(err)}`);
          }
        }
        this.deps.secrets.forget(this.spec);
        throw new Error(
          `pulling image ${pullRef} failed with each of the ${credentials.length} matching pull credential(s): ` +
            failures.join('; '),
        );
      }
    } catch (err) {
      // a secret that was missing may be copied in before the next attempt: read it again then
      if (this.skipped !== '') this.deps.secrets.forget(this.spec);
      if (timer.signal.aborted && !this.stop.signal.aborted && timer.signal.reason instanceof AttemptTimeout) {
        throw timer.signal.reason;
      }
      if (pause.signal.aborted && !this.stop.signal.aborted && !this.refusal.signal.aborted) throw pause.signal.reason;
      throw err;
    } finally {
      handle.cancel();
      stopListening();
    }
  }

  private async pullOnce(
    runtime: ImageRuntime,
    request: PullImageRequest,
    call: { timeoutMs: number; signal: AbortSignal; lease: string | undefined },
    pullRef: string,
    reference: ImageReference,
  ): Promise<PullImageResponse__Output> {
    const { signal } = call;
    try {
      const response = await runtime.pullImage(request, {
        timeoutMs: call.timeoutMs,
        signal,
        ...(call.lease !== undefined && { containerdLease: call.lease }),
      });
      this.deps.metrics?.attempt('ok');
      return response;
    } catch (err) {
      if (signal.aborted) throw err;
      if (isCriError(err, 'InvalidArgument')) throw new PermanentPullError(errorMessage(err));
      if (isCriError(err, 'AuthenticationFailed') && !request.auth) {
        throw new Error(
          `${errorMessage(err)} (no pull secret gave credentials for registry ${reference.registry}; ` +
            `the image needs one in namespace kruise-daemon-config)`,
        );
      }
      if (isCriError(err, 'RegistryUnreachable')) {
        throw new Error(`registry ${reference.registry} of ${pullRef} cannot be reached: ${errorMessage(err)}`);
      }
      throw err;
    }
  }

  /** Go on without the secrets that do not exist; warn once per secret, tell them in the status. */
  private skipMissing(read: PullSecretCredentials): void {
    this.skipped = skippedSecretsMessage(read);
    for (const name of read.missing) {
      if (this.warnedSecrets.has(name)) continue;
      this.warnedSecrets.add(name);
      this.log.warn(
        { secret: `${KRUISE_DAEMON_CONFIG_NAMESPACE}/${name}` },
        'pull secret not found; pulling without it',
      );
    }
  }

  private succeed(imageId: string, startedAt: number, present: boolean): void {
    if (this.stop.signal.aborted) return;
    const now = this.deps.clock.now();
    this.update({
      tag: this.spec.tag,
      phase: 'Succeeded',
      progress: 100,
      startTime: rfc3339(startedAt),
      completionTime: rfc3339(now),
      version: this.spec.version,
      ...(imageId && { imageID: `${this.spec.imageName}@${imageIdDigest(imageId)}` }),
      ...(this.message() !== '' && { message: this.message() }),
    });
    this.log.info({ present, ms: now - startedAt }, 'image pulled');
    this.deps.onFinished?.({ spec: this.spec, status: this.current, seconds: (now - startedAt) / 1000, present });
  }

  /** The message of a Succeeded status: why it was pulled again, secrets it went without. */
  private message(): string {
    return [this.spec.note ?? '', this.skipped].filter((part) => part !== '').join('; ');
  }

  private fail(message: string, seconds: number, startedAt?: number): void {
    if (this.stop.signal.aborted) return;
    const now = this.deps.clock.now();
    const skipped = this.skipped !== '' ? `; ${this.skipped}` : '';
    this.update({
      tag: this.spec.tag,
      phase: 'Failed',
      ...(startedAt !== undefined && { startTime: rfc3339(startedAt) }),
      completionTime: rfc3339(now),
      version: this.spec.version,
      message: message + skipped,
    });
    this.log.warn({ err: message + skipped }, 'image pull failed');
    this.deps.onFinished?.({ spec: this.spec, status: this.current, seconds, present: false });
  }

  private update(status: ImageTagStatus): void {
    if (this.stop.signal.aborted) return;
    this.current = status;
    this.deps.onChange();
  }
}

/** The reference a tag is pulled as, and known by in the runtime (`docker.io/library/nginx:1.25`); undefined if unusable. */
export function tagPullReference(imageName: string, tag: string): string | undefined {
  const parsed = tryParseNameAndTag(imageName, tag);
  return parsed.ok ? pullReference(parsed.reference) : undefined;
}

export function backoffLimitOf(policy: ImageTagPullPolicy): number {
  const limit = policy.backoffLimit;
  return typeof limit === 'number' && Number.isInteger(limit) && limit >= 0 ? limit : DEFAULT_BACKOFF_LIMIT;
}

export function timeoutSecondsOf(policy: ImageTagPullPolicy): number {
  const timeout = policy.timeoutSeconds;
  return typeof timeout === 'number' && Number.isFinite(timeout) && timeout > 0 ? timeout : DEFAULT_TIMEOUT_SECONDS;
}

function deadlineMessage(pullRef: string, seconds: number, lastError: string): string {
  const base = `pulling image ${pullRef} exceeds the activeDeadlineSeconds (${seconds}s)`;
  return lastError ? `${base}; last error: ${lastError}` : base;
}

/** No server_address: containerd would parse a bare host:port as a URL and fail; the pull names the host anyway. */
function authConfigOf(credential: RegistryCredential): AuthConfig {
  return {
    ...(credential.username !== undefined && { username: credential.username }),
    ...(credential.password !== undefined && { password: credential.password }),
    ...(credential.identityToken !== undefined && { identity_token: credential.identityToken }),
    ...(credential.registryToken !== undefined && { registry_token: credential.registryToken }),
  };
}

/**
 * A runtime's image id as a digest: containerd says `sha256:<hex>`, CRI-O the bare hex of the same config digest
 * (containers/storage's image id), which after `<image>@` would not be a reference.
 */
export function imageIdDigest(id: string): string {
  return /^[0-9a-f]{64}$/.test(id) ? `sha256:${id}` : id;
}
