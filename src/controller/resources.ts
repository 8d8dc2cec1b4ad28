// The collections and object types the controller uses that are neither core (src/kube CoreResources, api/wire.ts)
// nor apps.kruise.io (each kind's resource and type are in src/api): webhook configurations and secrets.
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

export interface SecretObject extends KubeObject {
  type?: string | undefined;
  data?: Record<string, string>;
  immutable?: boolean;
}
