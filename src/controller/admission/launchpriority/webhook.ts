// Where the launch-priority pod handler is served and which requests reach it: OpenKruise's pod mutating webhook
// (`mpod.kb.io` at `/mutate-pod`), pods CREATE only. kube-system and the controller's own namespace are left out,
// so the control plane can start pods while the controller is down (failurePolicy Fail for everyone else: a pod
// that asked for an order must not start unordered).
import { KRUISE_SYSTEM_NAMESPACE } from '../../../api/constants.js';
import { CoreResources } from '../../../kube/resource.js';

export const POD_MUTATING_WEBHOOK_NAME = 'mpod.kb.io';
export const POD_MUTATING_WEBHOOK_PATH = '/mutate-pod';

export const POD_WEBHOOK_RULES = [
  { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'], scope: 'Namespaced' },
];

/** Namespaces whose pods never go through the webhook. */
export function podWebhookNamespaceSelector(controllerNamespace = KRUISE_SYSTEM_NAMESPACE): {
  matchExpressions: { key: string; operator: string; values: string[] }[];
} {
  return {
    matchExpressions: [
      { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', controllerNamespace] },
    ],
  };
}

/** The webhook as the controller's configuration lists it. */
export const POD_MUTATING_WEBHOOK = {
  name: POD_MUTATING_WEBHOOK_NAME,
  path: POD_MUTATING_WEBHOOK_PATH,
  resource: CoreResources.pods,
  rules: POD_WEBHOOK_RULES,
  namespaceSelector: podWebhookNamespaceSelector(),
};
