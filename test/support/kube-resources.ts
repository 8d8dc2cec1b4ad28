// Built-in API types that only the tests use (those src/ uses are src/kube/resource.ts CoreResources).
import type { KubeObject } from '../../src/kube/object.js';
import type { ResourceType } from '../../src/kube/resource.js';

/** Who am I: create one with any client and its status names the user the API server authenticated. */
export const SELF_SUBJECT_REVIEWS: ResourceType = {
  group: 'authentication.k8s.io',
  version: 'v1',
  resource: 'selfsubjectreviews',
  namespaced: false,
  kind: 'SelfSubjectReview',
};

export interface SelfSubjectReview extends KubeObject {
  status?: { userInfo?: { username?: string; extra?: Record<string, string[]> } };
}

export const SERVICE_ACCOUNTS: ResourceType = {
  group: '',
  version: 'v1',
  resource: 'serviceaccounts',
  namespaced: true,
  kind: 'ServiceAccount',
};
