// The labels and annotations kubelet puts on CRI containers (kuberuntime/labels.go). The agent reads them to find a
// pod's containers in the runtime and to restore what it needs to stop one (grace period, preStop) without a spec.

export const POD_NAME_LABEL = 'io.kubernetes.pod.name';
export const POD_NAMESPACE_LABEL = 'io.kubernetes.pod.namespace';
export const POD_UID_LABEL = 'io.kubernetes.pod.uid';
export const CONTAINER_NAME_LABEL = 'io.kubernetes.container.name';

export const CONTAINER_HASH_ANNOTATION = 'io.kubernetes.container.hash';
export const CONTAINER_RESTART_COUNT_ANNOTATION = 'io.kubernetes.container.restartCount';
export const POD_TERMINATION_GRACE_PERIOD_ANNOTATION = 'io.kubernetes.pod.terminationGracePeriod';
export const POD_DELETION_GRACE_PERIOD_ANNOTATION = 'io.kubernetes.pod.deletionGracePeriod';
export const PRE_STOP_HANDLER_ANNOTATION = 'io.kubernetes.container.preStopHandler';
export const CONTAINER_PORTS_ANNOTATION = 'io.kubernetes.container.ports';
