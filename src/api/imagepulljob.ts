// ImagePullJob (apps.kruise.io v1alpha1/v1beta1, namespaced): pull one image on a set of nodes.
// The template part is shared with ImageListPullJob. JSON names as OpenKruise.

import type { KubeObject } from '../kube/object.js';
import type { ResourceType } from '../kube/resource.js';
import { KRUISE_GROUP, V1BETA1 } from './constants.js';
import type { IntOrString, LabelSelector, ObjectMeta, Time } from './meta.js';
import type { ImagePullPolicy, SandboxConfig } from './nodeimage.js';

/** Served as v1alpha1 and v1beta1 with v1beta1 stored, as OpenKruise does; we read and write v1beta1. */
export const IMAGE_PULL_JOBS: ResourceType = {
  group: KRUISE_GROUP,
  version: V1BETA1,
  resource: 'imagepulljobs',
  namespaced: true,
  kind: 'ImagePullJob',
};

export type CompletionPolicyType = 'Always' | 'Never';

export interface CompletionPolicy {
  /** Defaulted to `Always`. */
  type?: CompletionPolicyType;
  /** Only with `Always`. */
  activeDeadlineSeconds?: number;
  /** Only with `Always`. */
  ttlSecondsAfterFinished?: number;
}

export interface PullPolicy {
  /** Defaulted to 600. */
  timeoutSeconds?: number;
  /** Defaulted to 3. */
  backoffLimit?: number;
}

/** Which nodes: by name, or by label selector (not both). */
export interface ImagePullJobNodeSelector extends LabelSelector {
  names?: string[];
}

/** The nodes of the pods this selector matches (exclusive with `selector`). */
export type ImagePullJobPodSelector = LabelSelector;

export interface ImagePullJobTemplate {
  /** Secret names in the job's namespace; immutable after creation. */
  pullSecrets?: string[];
  selector?: ImagePullJobNodeSelector;
  podSelector?: ImagePullJobPodSelector;
  /** Non-negative integer (or a string holding one; no percentages). Default 1, 0 pauses. */
  parallelism?: IntOrString;
  pullPolicy?: PullPolicy;
  /** Required by the CRD (`{}` is enough). */
  completionPolicy: CompletionPolicy;
  sandboxConfig?: SandboxConfig;
  /** Defaulted to `IfNotPresent` for ImagePullJob (not for ImageListPullJob). */
  imagePullPolicy?: ImagePullPolicy;
}

export interface ImagePullJobSpec extends ImagePullJobTemplate {
  image: string;
}

export interface ImagePullJobStatus {
  startTime?: Time | undefined;
  completionTime?: Time;
  desired: number;
  active?: number;
  succeeded?: number;
  failed?: number;
  message?: string;
  failedNodes?: string[];
}

/** A ImagePullJob as the API serves it (metadata always set). */
export interface ImagePullJob extends KubeObject {
  metadata: ObjectMeta;
  spec: ImagePullJobSpec;
  status?: ImagePullJobStatus;
}
