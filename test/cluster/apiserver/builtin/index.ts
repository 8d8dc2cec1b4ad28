// Every built-in kind the emulator serves.
import { crdResource } from '../crd/crd-resource.js';
import type { ResourceRegistry } from '../resource-types.js';
import {
  configMapResource,
  eventResource,
  namespaceResource,
  nodeResource,
  secretResource,
  serviceAccountResource,
} from './core.js';
import { eventsV1Resource } from './events-v1.js';
import { installKindResources } from './install-kinds.js';
import {
  deploymentResource,
  leaseResource,
  mutatingWebhookResource,
  statefulSetResource,
  validatingWebhookResource,
} from './other.js';
import { podResource } from './pod.js';

export function registerBuiltins(registry: ResourceRegistry, now: () => string): void {
  for (const rt of [
    namespaceResource,
    nodeResource,
    podResource,
    configMapResource,
    secretResource,
    eventResource,
    serviceAccountResource,
    leaseResource,
    statefulSetResource,
    deploymentResource,
    mutatingWebhookResource,
    validatingWebhookResource,
    crdResource(now),
    ...installKindResources,
  ]) {
    registry.register([rt]);
  }
  // Same storage as core/v1 Event; the core type stays the storage form.
  registry.register([eventsV1Resource], eventResource);
}
