// The labels and annotations kubelet puts on CRI containers (kuberuntime/labels.go) that the agent reads: which pod
// and container a runtime container is, and the spec hash and restart count kubelet wrote on it.

export const POD_UID_LABEL = 'io.kubernetes.pod.uid';
export const CONTAINER_NAME_LABEL = 'io.kubernetes.container.name';

export const CONTAINER_HASH_ANNOTATION = 'io.kubernetes.container.hash';
export const CONTAINER_RESTART_COUNT_ANNOTATION = 'io.kubernetes.container.restartCount';
