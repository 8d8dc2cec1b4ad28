// The controller's Mutating/ValidatingWebhookConfigurations: which requests reach which handler path. The controller
// keeps them current: creates them when missing, and points every webhook it knows at itself (Service, or a URL
// when running outside the cluster) with the CA it created as caBundle, and keeps the failurePolicy and
// matchConditions of each its own (the pod webhooks' decide which pods an outage of the controller may block:
// docs/install.md). Webhooks others added are left alone.
import { V1ALPHA1, V1BETA1 } from '../../api/constants.js';
import { CONTAINER_RECREATE_REQUESTS } from '../../api/containerrecreaterequest.js';
import { IMAGE_LIST_PULL_JOBS } from '../../api/imagelistpulljob.js';
import { IMAGE_PULL_JOBS } from '../../api/imagepulljob.js';
import { NODE_IMAGES } from '../../api/nodeimage.js';
import type { KubeClient } from '../../kube/client.js';
import { isAlreadyExists } from '../../kube/errors.js';
import type { KubeObject } from '../../kube/object.js';
import type { ResourceType } from '../../kube/resource.js';
import { MUTATING_WEBHOOK_CONFIGURATIONS, VALIDATING_WEBHOOK_CONFIGURATIONS } from '../resources.js';
import { updateFromFresh } from '../../kube/fresh-update.js';
import { IMAGE_WEBHOOK_PATHS } from './images/handlers.js';
import { CRR_WEBHOOK_PATH } from './crr/handler.js';
import { POD_MUTATING_WEBHOOK } from './launchpriority/webhook.js';
import { PPS_POD_WEBHOOK, PPS_VALIDATING_WEBHOOK } from './persistentpodstate/webhook.js';
import { PPM_VALIDATING_WEBHOOK } from './podprobemarker/handler.js';

export const MUTATING_CONFIGURATION_NAME = 'kruise-mutating-webhook-configuration';
export const VALIDATING_CONFIGURATION_NAME = 'kruise-validating-webhook-configuration';

export interface WebhookClientConfig {
  url?: string;
  service?: { namespace: string; name: string; path: string; port?: number };
  caBundle?: string;
}

export interface WebhookRule {
  apiGroups: string[];
  apiVersions: string[];
  operations: string[];
  resources: string[];
  scope?: string;
}

/** A CEL condition the API server checks before calling the webhook (admissionregistration.k8s.io/v1, 1.30+). */
export interface MatchCondition {
  name: string;
  expression: string;
}

export interface Webhook {
  name: string;
  clientConfig: WebhookClientConfig;
  rules: WebhookRule[];
  failurePolicy: 'Fail' | 'Ignore';
  matchConditions?: MatchCondition[];
  sideEffects: 'None';
  admissionReviewVersions: string[];
  timeoutSeconds: number;
  matchPolicy?: string;
  namespaceSelector?: unknown;
  objectSelector?: unknown;
  reinvocationPolicy?: string;
}

export interface WebhookConfiguration extends KubeObject {
  webhooks?: Webhook[];
}

export interface WebhookDefinition {
  name: string;
  path: string;
  /** The collection admitted; its apps.kruise.io CREATE/UPDATE rule is the default. */
  resource: ResourceType;
  /** Rules other than that default (e.g. core pods). */
  rules?: WebhookRule[];
  namespaceSelector?: unknown;
  objectSelector?: unknown;
  /** Only requests meeting every condition are sent (default: all the rules match). */
  matchConditions?: MatchCondition[];
  /** What the API server does when the controller cannot answer (default Fail). */
  failurePolicy?: 'Fail' | 'Ignore';
}

const kruiseRule = (resource: ResourceType): WebhookRule => ({
  apiGroups: [resource.group],
  apiVersions: [V1ALPHA1, V1BETA1],
  operations: ['CREATE', 'UPDATE'],
  resources: [resource.resource],
  scope: resource.namespaced ? 'Namespaced' : 'Cluster',
});

export const MUTATING_WEBHOOKS: WebhookDefinition[] = [
  { name: 'mnodeimage.kb.io', path: IMAGE_WEBHOOK_PATHS.mutateNodeImage, resource: NODE_IMAGES },
  { name: 'mimagepulljob.kb.io', path: IMAGE_WEBHOOK_PATHS.mutateImagePullJob, resource: IMAGE_PULL_JOBS },
  { name: 'mimagelistpulljob.kb.io', path: IMAGE_WEBHOOK_PATHS.mutateImageListPullJob, resource: IMAGE_LIST_PULL_JOBS },
  { name: 'mcontainerrecreaterequest.kb.io', path: CRR_WEBHOOK_PATH, resource: CONTAINER_RECREATE_REQUESTS },
  POD_MUTATING_WEBHOOK,
  PPS_POD_WEBHOOK,
];
export const VALIDATING_WEBHOOKS: WebhookDefinition[] = [
  { name: 'vnodeimage.kb.io', path: IMAGE_WEBHOOK_PATHS.validateNodeImage, resource: NODE_IMAGES },
  { name: 'vimagepulljob.kb.io', path: IMAGE_WEBHOOK_PATHS.validateImagePullJob, resource: IMAGE_PULL_JOBS },
  {
    name: 'vimagelistpulljob.kb.io',
    path: IMAGE_WEBHOOK_PATHS.validateImageListPullJob,
    resource: IMAGE_LIST_PULL_JOBS,
  },
  PPS_VALIDATING_WEBHOOK,
  PPM_VALIDATING_WEBHOOK,
];

export interface WebhookTarget {
  /** https://host:port — the controller is reached by URL (outside a cluster, the local cluster). */
  urlBase?: string | undefined;
  /** Else through this Service. */
  service: { namespace: string; name: string; port: number };
  caBundlePem: string;
}

export function clientConfigFor(path: string, target: WebhookTarget): WebhookClientConfig {
  const caBundle = Buffer.from(target.caBundlePem, 'utf8').toString('base64');
  if (target.urlBase) return { url: `${target.urlBase.replace(/\/$/, '')}${path}`, caBundle };
  return { service: { ...target.service, path }, caBundle };
}

export function webhookFor(def: WebhookDefinition, target: WebhookTarget, mutating: boolean): Webhook {
  const hook: Webhook = {
    name: def.name,
    clientConfig: clientConfigFor(def.path, target),
    rules: def.rules ?? [kruiseRule(def.resource)],
    failurePolicy: def.failurePolicy ?? 'Fail',
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    timeoutSeconds: 10,
  };
  if (def.namespaceSelector) hook.namespaceSelector = def.namespaceSelector;
  if (def.objectSelector) hook.objectSelector = def.objectSelector;
  if (def.matchConditions) hook.matchConditions = def.matchConditions;
  if (mutating) hook.reinvocationPolicy = 'Never';
  return hook;
}

/** Create or bring up to date both configurations; returns how many objects were written. */
export async function ensureWebhookConfigurations(client: KubeClient, target: WebhookTarget): Promise<number> {
  let writes = 0;
  const sets: [ResourceType, string, WebhookDefinition[], boolean][] = [
    [MUTATING_WEBHOOK_CONFIGURATIONS, MUTATING_CONFIGURATION_NAME, MUTATING_WEBHOOKS, true],
    [VALIDATING_WEBHOOK_CONFIGURATIONS, VALIDATING_CONFIGURATION_NAME, VALIDATING_WEBHOOKS, false],
  ];
  for (const [rt, name, defs, mutating] of sets) {
    const { object, written } = await updateFromFresh<WebhookConfiguration>(client, rt, name, undefined, (draft) => {
      const hooks = (draft.webhooks ??= []);
      let changed = false;
      for (const def of defs) {
        const want = clientConfigFor(def.path, target);
        const have = hooks.find((h) => h.name === def.name);
        if (!have) {
          hooks.push(webhookFor(def, target, mutating));
          changed = true;
        } else {
          if (JSON.stringify(have.clientConfig) !== JSON.stringify(want)) {
            have.clientConfig = want;
            changed = true;
          }
          // an older configuration (or one without the conditions) would send, and block on, every pod
          const failurePolicy = def.failurePolicy ?? 'Fail';
          if (have.failurePolicy !== failurePolicy) {
            have.failurePolicy = failurePolicy;
            changed = true;
          }
          if (JSON.stringify(have.matchConditions ?? []) !== JSON.stringify(def.matchConditions ?? [])) {
            if (def.matchConditions) have.matchConditions = def.matchConditions;
            else delete have.matchConditions;
            changed = true;
          }
        }
      }
      return changed;
    });
    if (written) writes++;
    if (object) continue;
    try {
      await client.create<WebhookConfiguration>(rt, {
        metadata: { name, labels: { 'app.kubernetes.io/name': 'kruise-controller' } },
        webhooks: defs.map((def) => webhookFor(def, target, mutating)),
      });
      writes++;
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      writes += await ensureWebhookConfigurations(client, target);
    }
  }
  return writes;
}
