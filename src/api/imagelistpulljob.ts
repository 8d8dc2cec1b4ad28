// ImageListPullJob (apps.kruise.io v1alpha1/v1beta1, namespaced): one ImagePullJob per listed image.

import type { ObjectMeta, Time } from './meta.js';
import type { ImagePullJobTemplate } from './imagepulljob.js';

export interface ImageListPullJobSpec extends ImagePullJobTemplate {
  /** 1 to 255 distinct images. */
  images: string[];
}

export interface FailedImageStatus {
  imagePullJob?: string;
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

export interface ImageListPullJob {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: ImageListPullJobSpec;
  status?: ImageListPullJobStatus;
}
