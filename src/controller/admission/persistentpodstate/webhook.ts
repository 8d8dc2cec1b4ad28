// Where the PersistentPodState handlers are served and which requests reach them. The pod step is a webhook of its
// own (`mpod-persistentpodstate.kb.io`), called only for pods carrying the label the StatefulSet controller puts on
// every pod it creates (`statefulset.kubernetes.io/pod-name`), so no other pod creation waits on it; kube-system and
// the controller's namespace are left out as for the other pod webhook.
import { KRUISE_SYSTEM_NAMESPACE } from '../../../api/constants.js';
import { PERSISTENT_POD_STATES } from '../../../api/persistentpodstate.js';
import { CoreResources } from '../../../kube/resource.js';
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
};

export const PPS_VALIDATING_WEBHOOK = {
  name: PPS_VALIDATING_WEBHOOK_NAME,
  path: PPS_VALIDATING_WEBHOOK_PATH,
  resource: PERSISTENT_POD_STATES,
};
