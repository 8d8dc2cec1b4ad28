// ImageListPullJob (apps.kruise.io v1alpha1/v1beta1, namespaced): one ImagePullJob per listed image.

import type { KubeObject } from '../kube/object.js';
import type { ResourceType } from '../kube/resource.js';
import { KRUISE_GROUP, V1BETA1 } from './constants.js';
import type { ObjectMeta, Time } from './meta.js';
import type { ImagePullJobTemplate } from './imagepulljob.js';

/** Served as v1alpha1 and v1beta1 with v1beta1 stored, as OpenKruise does; we read and write v1beta1. */
export const IMAGE_LIST_PULL_JOBS: ResourceType = {
  group: KRUISE_GROUP,
  version: V1BETA1,
  resource: 'imagelistpulljobs',
  namespaced: true,
  kind: 'ImageListPullJob',
};

export interface ImageListPullJobSpec extends ImagePullJobTemplate {
  /** 1 to 255 distinct images. */
  images: string[];
}

export interface FailedImageStatus {
  imagePullJob?: string | undefined;
  /** The image. */
  name?: string;
  message?: string;
}

export interface ImageListPullJobStatus {
  startTime?: Time;
  completionTime?: Time;
  /** = number of images. */
  desired: number;
  active?: number;
  completed?: number;
  succeeded?: number;
  failedImageStatuses?: FailedImageStatus[];
}

/** A ImageListPullJob as the API serves it (metadata always set). */
export interface ImageListPullJob extends KubeObject {
  metadata: ObjectMeta;
  spec: ImageListPullJobSpec;
  status?: ImageListPullJobStatus;
}
