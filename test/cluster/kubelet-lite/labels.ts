// The labels and annotations kubelet puts on CRI sandboxes and containers (kuberuntime/labels.go,
// pkg/kubelet/types/labels.go), and reading them back. kruise-daemon reads these, so the keys and value formats
// are exact. One addition of kubelet-lite's own: NODE_LABEL on sandboxes (several kubelet-lites share one
// containerd; see README.md "Divergences").
import type { Container, Pod } from './types.js';

export const POD_NAME_LABEL = 'io.kubernetes.pod.name';
export const POD_NAMESPACE_LABEL = 'io.kubernetes.pod.namespace';
export const POD_UID_LABEL = 'io.kubernetes.pod.uid';
export const CONTAINER_NAME_LABEL = 'io.kubernetes.container.name';

export const CONTAINER_HASH_ANNOTATION = 'io.kubernetes.container.hash';
export const CONTAINER_RESTART_COUNT_ANNOTATION = 'io.kubernetes.container.restartCount';
export const TERMINATION_MESSAGE_PATH_ANNOTATION = 'io.kubernetes.container.terminationMessagePath';
export const TERMINATION_MESSAGE_POLICY_ANNOTATION = 'io.kubernetes.container.terminationMessagePolicy';
export const POD_DELETION_GRACE_PERIOD_ANNOTATION = 'io.kubernetes.pod.deletionGracePeriod';
export const POD_TERMINATION_GRACE_PERIOD_ANNOTATION = 'io.kubernetes.pod.terminationGracePeriod';
export const PRE_STOP_HANDLER_ANNOTATION = 'io.kubernetes.container.preStopHandler';
export const CONTAINER_PORTS_ANNOTATION = 'io.kubernetes.container.ports';

/** kubelet-lite's own sandbox label: which kubelet-lite node runs the sandbox. */
export const NODE_LABEL = 'kubelet-lite.kruise.io/node';

/** newPodLabels: the pod's labels, then the three pod identity labels (they win). */
export function sandboxLabels(pod: Pod, nodeName: string): Record<string, string> {
  return {
    ...(pod.metadata.labels ?? {}),
    [POD_NAME_LABEL]: pod.metadata.name,
    [POD_NAMESPACE_LABEL]: pod.metadata.namespace,
    [POD_UID_LABEL]: pod.metadata.uid,
    [NODE_LABEL]: nodeName,
  };
}

/** newPodAnnotations: the pod's annotations, unchanged. */
export function sandboxAnnotations(pod: Pod): Record<string, string> {
  return { ...(pod.metadata.annotations ?? {}) };
}

/** newContainerLabels: only the pod identity and the container name (pod labels are not copied). */
export function containerLabels(pod: Pod, container: Container): Record<string, string> {
  return {
    [POD_NAME_LABEL]: pod.metadata.name,
    [POD_NAMESPACE_LABEL]: pod.metadata.namespace,
    [POD_UID_LABEL]: pod.metadata.uid,
    [CONTAINER_NAME_LABEL]: container.name,
  };
}

/** newContainerAnnotations (no device plugins, InPlacePodVerticalScaling off). */
export function containerAnnotations(
  pod: Pod,
  container: Container,
  restartCount: number,
  hash: string,
): Record<string, string> {
  const annotations: Record<string, string> = {
    [CONTAINER_HASH_ANNOTATION]: hash,
    [CONTAINER_RESTART_COUNT_ANNOTATION]: String(restartCount),
    [TERMINATION_MESSAGE_PATH_ANNOTATION]: container.terminationMessagePath ?? '/dev/termination-log',
    [TERMINATION_MESSAGE_POLICY_ANNOTATION]: container.terminationMessagePolicy ?? 'File',
  };
  if (pod.metadata.deletionGracePeriodSeconds !== undefined) {
    annotations[POD_DELETION_GRACE_PERIOD_ANNOTATION] = String(pod.metadata.deletionGracePeriodSeconds);
  }
  if (pod.spec.terminationGracePeriodSeconds !== undefined) {
    annotations[POD_TERMINATION_GRACE_PERIOD_ANNOTATION] = String(pod.spec.terminationGracePeriodSeconds);
  }
  if (container.lifecycle?.preStop) {
    annotations[PRE_STOP_HANDLER_ANNOTATION] = JSON.stringify(container.lifecycle.preStop);
  }
  if (container.ports && container.ports.length > 0) {
    annotations[CONTAINER_PORTS_ANNOTATION] = JSON.stringify(container.ports);
  }
  return annotations;
}

/** restartCount written on a container, or 0 when absent or malformed. */
export function restartCountOf(annotations: Record<string, string> | undefined): number {
  const n = Number(annotations?.[CONTAINER_RESTART_COUNT_ANNOTATION]);
  return Number.isSafeInteger(n) && n >= 0 ? n : 0;
}
