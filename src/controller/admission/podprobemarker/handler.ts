// The PodProbeMarker admission handler: validation on create and update (OpenKruise's path and messages,
// src/api/podprobemarker-validation.ts). Status and finalizer writes (subresources) pass.
import { formatFieldErrors } from '../../../api/field-errors.js';
import { POD_PROBE_MARKERS } from '../../../api/podprobemarker.js';
import { validatePodProbeMarker } from '../../../api/podprobemarker-validation.js';
import type { AdmissionDecision, AdmissionHandler } from '../admission-review.js';

export const PPM_VALIDATING_WEBHOOK_NAME = 'vpodprobemarker.kb.io';
export const PPM_VALIDATING_WEBHOOK_PATH = '/validate-apps-kruise-io-v1alpha1-podprobemarker';

export function validatePodProbeMarkerHandler(): AdmissionHandler {
  return (request): AdmissionDecision => {
    if ((request.operation !== 'CREATE' && request.operation !== 'UPDATE') || !request.object || request.subResource) {
      return { allowed: true };
    }
    // a marker being deleted only loses its finalizer: let that through whatever its spec
    const metadata = request.object.metadata;
    if (request.operation === 'UPDATE' && metadata?.deletionTimestamp) return { allowed: true };
    const errors = validatePodProbeMarker(request.object, {
      oldObject: request.operation === 'UPDATE' ? (request.oldObject ?? undefined) : undefined,
    });
    if (errors.length === 0) return { allowed: true };
    const forbidden = errors.some((e) => e.type === 'FieldValueForbidden');
    return { allowed: false, code: forbidden ? 403 : 400, message: formatFieldErrors(errors) };
  };
}

export function podProbeMarkerWebhookHandlers(): Record<string, AdmissionHandler> {
  return { [PPM_VALIDATING_WEBHOOK_PATH]: validatePodProbeMarkerHandler() };
}

export const PPM_VALIDATING_WEBHOOK = {
  name: PPM_VALIDATING_WEBHOOK_NAME,
  path: PPM_VALIDATING_WEBHOOK_PATH,
  resource: POD_PROBE_MARKERS,
};
