// NodeImage (apps.kruise.io v1alpha1/v1beta1, cluster-scoped, one per Node with the Node's name):
// which image tags the agent on that node pulls, and what it reports back. JSON names as OpenKruise.

import type { KubeObject } from '../kube/object.js';
import type { ResourceType } from '../kube/resource.js';
import { KRUISE_GROUP, V1BETA1 } from './constants.js';
import type { ObjectMeta, ObjectReference, Time } from './meta.js';

/** Served as v1alpha1 and v1beta1 with v1beta1 stored, as OpenKruise does; we read and write v1beta1. */
export const NODE_IMAGES: ResourceType = {
  group: KRUISE_GROUP,
  version: V1BETA1,
  resource: 'nodeimages',
  namespaced: false,
  kind: 'NodeImage',
};

export type ImagePullPolicy = 'Always' | 'IfNotPresent';

/** Per-tag pull phase reported by the agent. */
export type ImagePullPhase = 'Waiting' | 'Pulling' | 'Succeeded' | 'Failed';

/** `status.firstSyncStatus.status` (declared by OpenKruise, never written). */
export type SyncStatusPhase = 'Succeeded' | 'Failed';

/** A secret the agent may use to pull; `mode` exists in v1beta1 only (`batch` = shared synced secret). */
export interface ReferenceObject {
  namespace?: string;
  name?: string;
  mode?: string;
}

/** Labels and annotations handed to CRI PullImage as the sandbox config. */
export interface SandboxConfig {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/**
 * An agent's wait between two attempts of a tag: the first, then doubled each time up to the last. The controller
 * sizes a Never job's deadline by it (src/controller/imagepulljob/tag-write.ts), the agent waits it (tag-pull.ts).
 */
export const TAG_RETRY_FIRST_WAIT_MS = 1000;
export const TAG_RETRY_MAX_WAIT_MS = 30_000;

export interface ImageTagPullPolicy {
  /** Per-attempt timeout; defaulted to 600. */
  timeoutSeconds?: number | undefined;
  /** Retries after the first attempt; defaulted to 3. */
  backoffLimit?: number | undefined;
  /** Required by validation; the central controller removes the tag this long after it finished. */
  ttlSecondsAfterFinished?: number;
  /** Deadline for the whole pull counted from its start. */
  activeDeadlineSeconds?: number;
}

export interface ImageTagSpec {
  /** A tag (`1.25`) or a digest (`sha256:...`). */
  tag: string;
  createdAt?: Time | undefined;
  pullPolicy?: ImageTagPullPolicy;
  /** The ImagePullJobs that want this tag. */
  ownerReferences?: ObjectReference[];
  /** Bumped to force a re-pull; >= 0. */
  version?: number;
  /** Only `IfNotPresent` skips a pull when the image is present; empty behaves as `Always`. */
  imagePullPolicy?: ImagePullPolicy;
}

export interface ImageSpec {
  pullSecrets?: ReferenceObject[];
  /** Kept sorted by `tag`. */
  tags: ImageTagSpec[];
  sandboxConfig?: SandboxConfig;
}

export interface NodeImageSpec {
  /** Key = image name in familiar form without tag (`nginx`, `registry.k8s.io/pause`); at most 256. */
  images?: Record<string, ImageSpec>;
}

export interface ImageTagStatus {
  tag: string;
  phase: ImagePullPhase;
  /** 0-100, not monotonic. */
  progress?: number;
  startTime?: Time;
  completionTime?: Time;
  /** The spec version this status is for. */
  version?: number;
  /** `<imageName>@<CRI image id>`. */
  imageID?: string;
  message?: string;
}

export interface ImageStatus {
  tags: ImageTagStatus[];
}

export interface SyncStatus {
  syncAt?: Time;
  status?: SyncStatusPhase;
  message?: string;
}

export interface NodeImageStatus {
  desired: number;
  succeeded?: number;
  failed?: number;
  pulling?: number;
  waiting?: number;
  imageStatuses?: Record<string, ImageStatus>;
  firstSyncStatus?: SyncStatus;
}

/** A NodeImage as the API serves it (metadata always set). */
export interface NodeImage extends KubeObject {
  metadata: ObjectMeta;
  spec?: NodeImageSpec;
  status?: NodeImageStatus;
}
