// Where the PersistentPodState handlers are served and which requests reach them. The pod step is a webhook of its
// own (`mpod-persistentpodstate.kb.io`), called only for pods carrying the label the StatefulSet controller puts on
// every pod it creates (`statefulset.kubernetes.io/pod-name`) whose controller is an apps StatefulSet and that is not
// created bound to a node (matchConditions: what the handler reads), so no other pod creation waits on it;
// kube-system and the controller's namespace are left out as for the other pod webhook. failurePolicy Ignore: the
// pod cannot say whether its StatefulSet has a PersistentPodState, so Fail would block every StatefulSet pod of the
// cluster while the controller is down; with Ignore a pod created then starts without its recorded node's terms
// (as when the handler cannot read the PersistentPodState), docs/install.md.
import { KRUISE_SYSTEM_NAMESPACE } from '../../../api/constants.js';
import { PERSISTENT_POD_STATES } from '../../../api/persistentpodstate.js';
import { CoreResources } from '../../../kube/resource.js';
import type { MatchCondition } from '../configurations.js';
import {
  PPS_POD_WEBHOOK_NAME,
  PPS_POD_WEBHOOK_PATH,
  PPS_VALIDATING_WEBHOOK_NAME,
  PPS_VALIDATING_WEBHOOK_PATH,
} from './handler.js';

export const STATEFULSET_POD_NAME_LABEL = 'statefulset.kubernetes.io/pod-name';

export const PPS_POD_WEBHOOK = {
  name: PPS_POD_WEBHOOK_NAME,
  path: PPS_POD_WEBHOOK_PATH,
  resource: CoreResources.pods,
  rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'], scope: 'Namespaced' }],
  namespaceSelector: {
    matchExpressions: [
      { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', KRUISE_SYSTEM_NAMESPACE] },
    ],
  },
  objectSelector: { matchExpressions: [{ key: STATEFULSET_POD_NAME_LABEL, operator: 'Exists' }] },
  matchConditions: [
    {
      name: 'statefulset-pod-not-bound',
      expression:
        "!has(object.spec.nodeName) && has(object.metadata.ownerReferences) && object.metadata.ownerReferences.exists(r, has(r.controller) && r.controller && r.kind == 'StatefulSet' && r.apiVersion.startsWith('apps/'))",
    },
  ] satisfies MatchCondition[],
  failurePolicy: 'Ignore' as const,
};

export const PPS_VALIDATING_WEBHOOK = {
  name: PPS_VALIDATING_WEBHOOK_NAME,
  path: PPS_VALIDATING_WEBHOOK_PATH,
  resource: PERSISTENT_POD_STATES,
};
