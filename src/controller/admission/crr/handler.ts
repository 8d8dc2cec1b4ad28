// The CRR admission handler (OpenKruise's /mutate-apps-kruise-io-containerrecreaterequest, create and update):
// defaults and read-only fields from the pod on create, immutability on update; denials name the field. A container
// kubelet would not start again once stopped (restartPolicy Never/OnFailure) is denied, unlike OpenKruise.
import {
  defaultAndCheckCrrSpec,
  fillCrrFromNode,
  fillCrrFromPod,
  validateCrrUpdate,
  type CrrUnderAdmission,
  type NodeLookup,
  type PodLookup,
} from '../../../api/containerrecreaterequest-admission.js';
import { checkCrrRestartPolicy } from '../../../api/containerrecreaterequest-restart-policy.js';
import type { WireNode, WirePod } from '../../../api/wire.js';
import { isNotFound } from '../../../kube/errors.js';
import { errorMessage } from '../../../util/error-message.js';
import type { KubeClient } from '../../../kube/client.js';
import { CoreResources } from '../../../kube/resource.js';
import { denyFor, type AdmissionHandler } from '../admission-review.js';

export const CRR_WEBHOOK_PATH = '/mutate-apps-kruise-io-containerrecreaterequest';

/** Fresh reads of the pod and node a CRR names (a cache could be older than the pod status the user saw). */
export interface CrrObjectReader {
  pod(namespace: string, name: string): Promise<PodLookup>;
  node(name: string): Promise<NodeLookup>;
}

export function apiReader(client: Pick<KubeClient, 'get'>): CrrObjectReader {
  return {
    async pod(namespace, name) {
      try {
        return { found: true, pod: await client.get<WirePod>(CoreResources.pods, name, { namespace }) };
      } catch (err) {
        if (isNotFound(err)) return { found: false };
        throw err;
      }
    },
    async node(name) {
      try {
        return { found: true, node: await client.get<WireNode>(CoreResources.nodes, name) };
      } catch (err) {
        if (isNotFound(err)) return { found: false };
        throw err;
      }
    },
  };
}

export function crrAdmissionHandler(reader: CrrObjectReader): AdmissionHandler {
  return async (request) => {
    if (request.operation === 'UPDATE') {
      if (!request.object || !request.oldObject) return { allowed: true };
      const errors = validateCrrUpdate(request.object, request.oldObject);
      return errors.length > 0 ? denyFor(errors) : { allowed: true };
    }
    if (request.operation !== 'CREATE' || !request.object) return { allowed: true };
    const requested: CrrUnderAdmission = structuredClone(request.object);
    requested.metadata ??= {};
    requested.metadata.namespace ??= request.namespace;
    const checked = defaultAndCheckCrrSpec(requested);
    if ('errors' in checked) return denyFor(checked.errors);
    const { crr } = checked;
    let pod: PodLookup;
    try {
      pod = await reader.pod(crr.metadata.namespace ?? '', crr.spec.podName);
    } catch (err) {
      return { allowed: false, code: 500, message: `failed to get Pod ${crr.spec.podName}: ${errorMessage(err)}` };
    }
    const podErrors = fillCrrFromPod(crr, pod);
    if (podErrors.length > 0) return denyFor(podErrors);
    const restartPolicyErrors = pod.found ? checkCrrRestartPolicy(crr.spec.containers, pod.pod) : [];
    if (restartPolicyErrors.length > 0) return denyFor(restartPolicyErrors);
    const nodeName = pod.found ? (pod.pod.spec?.nodeName ?? '') : '';
    let node: NodeLookup;
    try {
      node = await reader.node(nodeName);
    } catch (err) {
      return { allowed: false, code: 500, message: `failed to get Node ${nodeName}: ${errorMessage(err)}` };
    }
    const nodeErrors = fillCrrFromNode(crr, nodeName, node);
    if (nodeErrors.length > 0) return denyFor(nodeErrors);
    return { allowed: true, object: crr };
  };
}

export function crrWebhookHandlers(reader: CrrObjectReader): Record<string, AdmissionHandler> {
  return { [CRR_WEBHOOK_PATH]: crrAdmissionHandler(reader) };
}
