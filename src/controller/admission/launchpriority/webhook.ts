// Where the launch-priority pod handler is served and which requests reach it: OpenKruise's pod mutating webhook
// (`mpod.kb.io` at `/mutate-pod`), pods CREATE only, and of those only pods that ask for a launch order (matchConditions:
// two or more containers, and the annotation apps.kruise.io/container-launch-priority or env
// KRUISE_CONTAINER_PRIORITY in a container; every other pod the handler admits unchanged), so a controller outage
// never blocks a pod that uses none of it. kube-system and the controller's own namespace are left out, so the
// control plane can start pods while the controller is down. failurePolicy Fail for the pods that ask: a pod that
// asked for an order must not start unordered, so during an outage their creation fails (and their controllers
// retry) until the controller is back (docs/install.md).
import {
  CONTAINER_LAUNCH_PRIORITY_ANNOTATION,
  CONTAINER_LAUNCH_PRIORITY_ENV,
  KRUISE_SYSTEM_NAMESPACE,
} from '../../../api/constants.js';
import type { MatchCondition } from '../configurations.js';
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

/** Only pods that ask for a launch order: what mutatePodForLaunchPriority does anything with (or warns about). */
export const POD_WEBHOOK_MATCH_CONDITIONS: MatchCondition[] = [
  {
    name: 'asks-for-launch-priority',
    expression:
      `has(object.spec.containers) && size(object.spec.containers) > 1 && (` +
      `(has(object.metadata.annotations) && '${CONTAINER_LAUNCH_PRIORITY_ANNOTATION}' in object.metadata.annotations) || ` +
      `object.spec.containers.exists(c, has(c.env) && c.env.exists(e, e.name == '${CONTAINER_LAUNCH_PRIORITY_ENV}')))`,
  },
];

/** The webhook as the controller's configuration lists it. */
export const POD_MUTATING_WEBHOOK = {
  name: POD_MUTATING_WEBHOOK_NAME,
  path: POD_MUTATING_WEBHOOK_PATH,
  resource: CoreResources.pods,
  rules: POD_WEBHOOK_RULES,
  namespaceSelector: podWebhookNamespaceSelector(),
  matchConditions: POD_WEBHOOK_MATCH_CONDITIONS,
  failurePolicy: 'Fail' as const,
};
