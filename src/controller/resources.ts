// The collections the controller reads and writes, as src/kube ResourceTypes, and the object types it keeps in its
// caches (apps.kruise.io kinds at their storage version v1beta1, plus the core kinds it needs).
import type { ImageListPullJob } from '../api/imagelistpulljob.js';
import type { ImagePullJob } from '../api/imagepulljob.js';
import type { NodeImage } from '../api/nodeimage.js';
import type { KubeObject } from '../kube/object.js';
import type { ResourceType } from '../kube/resource.js';

export const MUTATING_WEBHOOK_CONFIGURATIONS: ResourceType = {
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  resource: 'mutatingwebhookconfigurations',
  namespaced: false,
  kind: 'MutatingWebhookConfiguration',
};
export const VALIDATING_WEBHOOK_CONFIGURATIONS: ResourceType = {
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  resource: 'validatingwebhookconfigurations',
  namespaced: false,
  kind: 'ValidatingWebhookConfiguration',
};

export type NodeImageObject = NodeImage & KubeObject;
export type ImagePullJobObject = ImagePullJob & KubeObject;
export type ImageListPullJobObject = ImageListPullJob & KubeObject;

export interface SecretObject extends KubeObject {
  type?: string;
  data?: Record<string, string>;
  immutable?: boolean;
}
