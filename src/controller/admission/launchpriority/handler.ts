// The launch-priority pod handler on the controller's webhook server: the pure mutation behind the router's
// AdmissionHandler shape (the server turns the returned pod into a JSON patch).
import type { AdmissionHandler } from '../admission-review.js';
import { mutatePodForLaunchPriority } from './pod-mutation.js';
import { POD_MUTATING_WEBHOOK_PATH } from './webhook.js';

export const launchPriorityPodHandler: AdmissionHandler = (request) =>
  mutatePodForLaunchPriority({
    operation: request.operation,
    resource: request.resource,
    subResource: request.subResource,
    namespace: request.namespace,
    object: request.object,
  });

export function launchPriorityWebhookHandlers(): Record<string, AdmissionHandler> {
  return { [POD_MUTATING_WEBHOOK_PATH]: launchPriorityPodHandler };
}
