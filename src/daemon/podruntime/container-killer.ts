// Stop one container the way kubelet's killContainer does: event Killing; the preStop hook (if any and the grace
// period is positive) bounded by the grace period, whose elapsed whole seconds are then subtracted; a failed hook
// is a FailedPreStopHook warning and the stop goes on; then CRI StopContainer with at least 2 s. The runtime
// reports the container exited and kubelet starts a new one (new id, restartCount + 1).
import { EVENT_REASON_FAILED_PRE_STOP_HOOK, EVENT_REASON_KILLING } from '../../api/constants.js';
import type { ProbeHandler } from '../../api/containerrecreaterequest.js';
import type { WireContainerPort } from '../../api/wire.js';
import type { EventType } from '../../kube/event-recorder.js';
import type { KubeObject } from '../../kube/object.js';
import { CoreResources, type ResourceType } from '../../kube/resource.js';
import type { Logger } from '../../observability/logger.js';
import type { Clock } from '../../util/clock.js';
import type { ContainerRuntime } from './pod-containers.js';
import { runPreStop } from './pre-stop.js';
import { errorMessage } from '../../util/error-message.js';

/** kubelet's minimumGracePeriodInSeconds. */
export const MIN_STOP_GRACE_SECONDS = 2;

export interface EventSink {
  event(obj: KubeObject, type: EventType, reason: string, message: string, rt?: ResourceType): void;
}

export interface KillRequest {
  /** The pod the events are about (from the cache, or a reference with namespace/name/uid). */
  pod: KubeObject;
  podIP?: string | undefined;
  containerId: string;
  containerName: string;
  preStop?: ProbeHandler | undefined;
  ports?: WireContainerPort[] | undefined;
  gracePeriodSeconds: number;
  /** Message of the Killing event. */
  message: string;
}

export interface KillResult {
  /** The preStop hook's error message, when it failed (the container was stopped anyway). */
  preStopError?: string | undefined;
  /** Grace period passed to StopContainer. */
  stopTimeoutSeconds: number;
}

export interface ContainerKillerOptions {
  runtime: ContainerRuntime;
  events: EventSink;
  clock: Clock;
  logger: Logger;
}

export class ContainerKiller {
  constructor(private readonly options: ContainerKillerOptions) {}

  /** Rejects only when StopContainer itself failed. */
  async kill(req: KillRequest): Promise<KillResult> {
    const { runtime, events, clock, logger } = this.options;
    events.event(req.pod, 'Normal', EVENT_REASON_KILLING, req.message, CoreResources.pods);
    let grace = Math.max(0, Math.floor(req.gracePeriodSeconds));
    let preStopError: string | undefined;
    if (req.preStop && grace > 0) {
      const started = clock.now();
      const abort = new AbortController();
      let timer: { cancel(): void } | undefined;
      const outOfTime = new Promise<never>((_, reject) => {
        timer = clock.setTimer(() => {
          const err = new Error(`preStop hook did not finish within the grace period (${grace} s)`);
          abort.abort(err);
          reject(err);
        }, grace * 1000);
      });
      outOfTime.catch(() => undefined);
      try {
        await Promise.race([
          runPreStop(
            runtime,
            { containerId: req.containerId, handler: req.preStop, ports: req.ports, podIP: req.podIP },
            grace * 1000,
            abort.signal,
          ),
          outOfTime,
        ]);
      } catch (err) {
        preStopError = errorMessage(err);
        events.event(
          req.pod,
          'Warning',
          EVENT_REASON_FAILED_PRE_STOP_HOOK,
          `PreStopHook failed for container ${req.containerName}: ${preStopError}`,
          CoreResources.pods,
        );
        logger.warn({ container: req.containerName, err: preStopError }, 'preStop hook failed');
      } finally {
        timer?.cancel();
      }
      grace -= Math.floor((clock.now() - started) / 1000);
    }
    const stopTimeoutSeconds = Math.max(grace, MIN_STOP_GRACE_SECONDS);
    await runtime.stopContainer(
      { container_id: req.containerId, timeout: stopTimeoutSeconds },
      { timeoutMs: (stopTimeoutSeconds + 30) * 1000 },
    );
    logger.info(
      { container: req.containerName, containerId: req.containerId, stopTimeoutSeconds },
      'stopped container',
    );
    return { preStopError, stopTimeoutSeconds };
  }
}
