// The PersistentPodState admission handlers: validation of PersistentPodStates (create, update; OpenKruise's path
// and messages) and the pod-create step that pins a recreated StatefulSet pod (pod-injection.ts). Both read the
// namespace's PersistentPodStates fresh from the API (a cache could miss the entry recorded a moment ago); the pod
// step reads only for pods whose controller is an apps StatefulSet, so other pods cost nothing.
import { formatFieldErrors } from '../../../api/field-errors.js';
import {
  PERSISTENT_POD_STATES,
  type PersistentPodState,
  type TargetReference,
} from '../../../api/persistentpodstate.js';
import { groupOf, sameTarget, validatePersistentPodState } from '../../../api/persistentpodstate-validation.js';
import type { KubeClient } from '../../../kube/client.js';
import type { AdmissionDecision, AdmissionHandler, AdmissionRequest } from '../admission-review.js';
import { injectPersistentPodState } from './pod-injection.js';
import { isRecord } from '../../../util/is-record.js';

export const PPS_VALIDATING_WEBHOOK_NAME = 'vpersistentpodstate.kb.io';
export const PPS_VALIDATING_WEBHOOK_PATH = '/validate-apps-kruise-io-v1alpha1-persistentpodstate';
export const PPS_POD_WEBHOOK_NAME = 'mpod-persistentpodstate.kb.io';
export const PPS_POD_WEBHOOK_PATH = '/mutate-pod-persistentpodstate';

/** The PersistentPodStates of a namespace. */
export interface PersistentPodStateReader {
  list(namespace: string): Promise<PersistentPodState[]>;
}

export function apiPersistentPodStateReader(client: Pick<KubeClient, 'list'>): PersistentPodStateReader {
  return {
    async list(namespace) {
      const list = await client.list<PersistentPodState>(PERSISTENT_POD_STATES, { namespace });
      return list.items;
    },
  };
}

export function validatePersistentPodStateHandler(reader: PersistentPodStateReader): AdmissionHandler {
  return async (request): Promise<AdmissionDecision> => {
    if ((request.operation !== 'CREATE' && request.operation !== 'UPDATE') || !request.object) return { allowed: true };
    if (request.subResource) return { allowed: true };
    const namespace = request.namespace ?? request.object.metadata?.namespace ?? '';
    let others: PersistentPodState[];
    try {
      others = await reader.list(namespace);
    } catch (err) {
      return {
        allowed: false,
        code: 500,
        message: `failed to list PersistentPodStates in ${namespace}: ${String(err)}`,
      };
    }
    const errors = validatePersistentPodState(request.object, {
      oldObject: request.operation === 'UPDATE' ? (request.oldObject ?? undefined) : undefined,
      others,
    });
    if (errors.length === 0) return { allowed: true };
    const forbidden = errors.some((e) => e.type === 'FieldValueForbidden');
    return { allowed: false, code: forbidden ? 403 : 400, message: formatFieldErrors(errors) };
  };
}

/** The apps StatefulSet controlling the pod (its controller owner reference), as a PersistentPodState target. */
function statefulSetControllerOf(pod: Record<string, unknown>): TargetReference | undefined {
  const metadata = isRecord(pod.metadata) ? pod.metadata : {};
  const refs = Array.isArray(metadata.ownerReferences) ? (metadata.ownerReferences as unknown[]) : [];
  for (const ref of refs) {
    if (!isRecord(ref) || ref.controller !== true) continue;
    if (ref.kind !== 'StatefulSet' || typeof ref.apiVersion !== 'string' || groupOf(ref.apiVersion) !== 'apps') {
      return undefined;
    }
    return typeof ref.name === 'string' ? { apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name } : undefined;
  }
  return undefined;
}

/**
 * The pod-create step: the pod (as left by earlier steps) pinned to its recorded node, or unchanged. Never denies:
 * a PersistentPodState that cannot be read leaves the pod unpinned with a warning rather than blocking creation.
 */
export async function pinRecreatedPod(
  request: Pick<AdmissionRequest, 'operation' | 'resource' | 'subResource' | 'namespace'>,
  pod: unknown,
  reader: PersistentPodStateReader,
): Promise<{ object?: Record<string, unknown> | undefined; warnings: string[] }> {
  if (request.operation !== 'CREATE' || request.subResource) return { warnings: [] };
  if (request.resource.group !== '' || request.resource.resource !== 'pods' || !isRecord(pod)) return { warnings: [] };
  const owner = statefulSetControllerOf(pod);
  if (!owner) return { warnings: [] };
  const metadata = isRecord(pod.metadata) ? pod.metadata : {};
  const namespace = request.namespace ?? (typeof metadata.namespace === 'string' ? metadata.namespace : '');
  let all: PersistentPodState[];
  try {
    all = await reader.list(namespace);
  } catch (err) {
    return { warnings: [`${PERSISTENT_POD_STATES.kind}s could not be read; the pod is not pinned: ${String(err)}`] };
  }
  const pps = all.find(
    (p) => !p.metadata?.deletionTimestamp && p.spec?.targetRef && sameTarget(p.spec.targetRef, owner),
  );
  if (!pps) return { warnings: [] };
  const result = injectPersistentPodState(pod, pps);
  return { object: result.pod, warnings: result.warnings };
}

export function persistentPodStateWebhookHandlers(reader: PersistentPodStateReader): Record<string, AdmissionHandler> {
  return {
    [PPS_VALIDATING_WEBHOOK_PATH]: validatePersistentPodStateHandler(reader),
    [PPS_POD_WEBHOOK_PATH]: pinRecreatedPodHandler(reader),
  };
}

/** The pod-create handler on its own path (its own webhook, so it runs beside the launch-priority one). */
export function pinRecreatedPodHandler(reader: PersistentPodStateReader): AdmissionHandler {
  return async (request): Promise<AdmissionDecision> => {
    const { object, warnings } = await pinRecreatedPod(request, request.object, reader);
    return { allowed: true, ...(object && { object: object }), ...(warnings.length > 0 && { warnings }) };
  };
}
