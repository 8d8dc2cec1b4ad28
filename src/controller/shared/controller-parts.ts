// What every central controller is built with: the loop's parts (with the controller's own metrics), the API
// client and the event recorder. A controller's options extend this.
import type { EventRecorder } from '../../kube/event-recorder.js';
import type { KubeClient } from '../../kube/client.js';
import type { ControllerLoopParts } from '../../kube/controller-loop.js';
import type { ControllerMetrics } from './metrics.js';

export interface ControllerParts extends ControllerLoopParts {
  client: KubeClient;
  events: EventRecorder;
  metrics: ControllerMetrics;
}
