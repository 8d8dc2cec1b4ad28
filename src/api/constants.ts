// The names OpenKruise puts on the wire: API group and versions, and the labels, annotations, finalizers, condition
// types, env vars and event reasons its components agree on. Each kind's resource (group, version, plural, scope,
// kind) is described with its types instead: NODE_IMAGES in nodeimage.ts, CONTAINER_RECREATE_REQUESTS in
// containerrecreaterequest.ts, ... Values are OpenKruise's (see the reference notes); manifests written for
// OpenKruise must keep working.

// ---- API group and versions ---------------------------------------------------------------------

export const KRUISE_GROUP = 'apps.kruise.io';
export const V1ALPHA1 = 'v1alpha1';
export const V1BETA1 = 'v1beta1';

// ---- Image pre-pull ----------------------------------------------------------------------------

/** Namespace holding the pull secrets the agent may read (copies of the jobs' secrets). */
export const KRUISE_DAEMON_CONFIG_NAMESPACE = 'kruise-daemon-config';
/** Namespace of the OpenKruise control plane. */
export const KRUISE_SYSTEM_NAMESPACE = 'kruise-system';
/** Finalizer keeping an ImagePullJob until its NodeImage entries are cleaned. */
export const PROTECTION_FINALIZER = 'apps.kruise.io/deletion-protection';
/** Sandbox-config annotation the agent always adds to CRI PullImage. */
export const PULLING_IMAGE_BY_ANNOTATION = 'apps.kruise.io/pulling-image-by';
export const PULLING_IMAGE_BY_VALUE = 'kruise-daemon';
/** NodeImage label of NodeImages that have no Node (never deleted by the controller). */
export const FAKE_NODE_IMAGE_LABEL = 'apps.kruise.io/fake-nodeimage';
/** ReferenceObject.mode of a pull secret shared by several jobs (v1beta1). */
export const REFERENCE_OBJECT_MODE_BATCH = 'batch';
/** Annotations and label on secrets copied into kruise-daemon-config. */
export const SECRET_SOURCE_KEY_ANNOTATION = 'imagepulljobs.kruise.io/source-key';
export const SECRET_REFERENCES_ANNOTATION = 'imagepulljobs.kruise.io/references';
export const SECRET_MODE_ANNOTATION = 'imagepulljobs.kruise.io/mode';
export const SECRET_SOURCE_UID_LABEL = 'imagepulljobs.kruise.io/source-uid';
/** Label an ImageListPullJob puts on itself and its ImagePullJobs: hash of the job template. */
export const CONTROLLER_REVISION_HASH_LABEL = 'controller-revision-hash';
/** Workload annotations for image pre-download (CloneSet / Advanced StatefulSet). */
export const IMAGE_PREDOWNLOAD_PARALLELISM_ANNOTATION = 'apps.kruise.io/image-predownload-parallelism';
export const IMAGE_PREDOWNLOAD_TIMEOUT_SECONDS_ANNOTATION = 'apps.kruise.io/image-predownload-timeout-seconds';
export const IMAGE_PREDOWNLOAD_MIN_UPDATED_READY_PODS_ANNOTATION =
  'apps.kruise.io/image-predownload-min-updated-ready-pods';

/** Limits enforced by OpenKruise's validating webhooks. */
export const MAX_IMAGES_PER_NODE_IMAGE = 256;
export const MAX_IMAGES_PER_IMAGE_LIST_PULL_JOB = 255;
/** Webhook defaults for a tag's / job's pull policy. */
export const DEFAULT_PULL_TIMEOUT_SECONDS = 600;
export const DEFAULT_PULL_BACKOFF_LIMIT = 3;
/** The values `imagePullPolicy` may take on a NodeImage tag and on the jobs. */
export const IMAGE_PULL_POLICIES: readonly string[] = ['Always', 'IfNotPresent'];
/** The values a job's `completionPolicy.type` may take. */
export const COMPLETION_POLICY_TYPES: readonly string[] = ['Always', 'Never'];

// ---- ContainerRecreateRequest ------------------------------------------------------------------

/** Labels set by the CRR webhook (pod-uid and node-name are immutable). */
export const CRR_POD_NAME_LABEL = 'crr.apps.kruise.io/pod-name';
export const CRR_POD_UID_LABEL = 'crr.apps.kruise.io/pod-uid';
export const CRR_NODE_NAME_LABEL = 'crr.apps.kruise.io/node-name';
/** `"true"` while the CRR is not completed; the agent watches only active CRRs of its node. */
export const CRR_ACTIVE_LABEL = 'crr.apps.kruise.io/active';
/** v1alpha1: JSON array of ContainerRecreateRequestSyncContainerStatus written by the manager. */
export const CRR_SYNC_CONTAINER_STATUSES_ANNOTATION = 'crr.apps.kruise.io/sync-container-statuses';
/** v1alpha1: RFC 3339 time the pod was forced not-ready (annotation); also the name of a finalizer. */
export const CRR_UNREADY_ACQUIRED_KEY = 'crr.apps.kruise.io/unready-acquired';
/** v1beta1 condition type (and reason) standing in for the unready-acquired annotation. */
export const CRR_PRE_RECREATE_GRACE_CONDITION = 'PreRecreateGrace';
/** Node (and CRR) label marking a virtual-kubelet node. */
export const VIRTUAL_KUBELET_LABEL = 'type';
export const VIRTUAL_KUBELET_LABEL_VALUE = 'virtual-kubelet';
/** The webhook rejects activeDeadlineSeconds below this. */
export const CRR_MIN_ACTIVE_DEADLINE_SECONDS = 3;
/** The values `spec.strategy.failurePolicy` may take (empty defaults to Fail). */
export const CRR_FAILURE_POLICIES: readonly string[] = ['Fail', 'Ignore'];
/** The agent's grace period when neither the CRR nor the pod gives one. */
export const CRR_DEFAULT_TERMINATION_GRACE_SECONDS = 30;

// ---- Readiness gate and in-place update --------------------------------------------------------

/** Pod readiness gate / condition type Kruise uses to hold a pod not-ready. */
export const KRUISE_POD_READY_CONDITION = 'KruisePodReady';
export const IN_PLACE_UPDATE_READY_CONDITION = 'InPlaceUpdateReady';
export const IN_PLACE_UPDATE_STATE_ANNOTATION = 'apps.kruise.io/inplace-update-state';
export const IN_PLACE_UPDATE_GRACE_ANNOTATION = 'apps.kruise.io/inplace-update-grace';
/** Pod annotation the agent writes: JSON RuntimeContainerMetaSet. */
export const RUNTIME_CONTAINERS_META_ANNOTATION = 'apps.kruise.io/runtime-containers-meta';
export const SIDECARSET_HASH_ANNOTATION = 'kruise.io/sidecarset-hash';

// ---- Container launch priority -----------------------------------------------------------------

export const CONTAINER_LAUNCH_PRIORITY_ENV = 'KRUISE_CONTAINER_PRIORITY';
export const CONTAINER_LAUNCH_BARRIER_ENV = 'KRUISE_CONTAINER_BARRIER';
export const CONTAINER_LAUNCH_PRIORITY_ANNOTATION = 'apps.kruise.io/container-launch-priority';
export const CONTAINER_LAUNCH_ORDERED = 'Ordered';
export const CONTAINER_LAUNCH_PRIORITY_COMPLETED_ANNOTATION = 'apps.kruise.io/container-launch-priority-completed';
/** Barrier ConfigMap of a pod: `<pod>-barrier`, one key `p_<priority>` per released priority. */
export const BARRIER_CONFIGMAP_SUFFIX = '-barrier';
export const BARRIER_KEY_PREFIX = 'p_';
/**
 * Ours (not OpenKruise's): label the agent puts on the barriers it writes, naming its node, so that the API server's
 * node-confinement policy (deploy/node-confinement) can refuse an agent the barriers of another node's pods.
 */
export const BARRIER_NODE_NAME_LABEL = 'kruise-daemon.io/node-name';
/**
 * Most keys p_<n> a barrier may hold (one per launch level): the node-confinement policy refuses an agent's barrier
 * write beyond it (deploy/node-confinement/policy.yaml, maxBarrierKeys), and the pod webhook a pod that needs more.
 */
export const MAX_BARRIER_KEYS = 64;

// ---- PersistentPodState and IP retention -------------------------------------------------------

export const AUTO_GENERATE_PERSISTENT_POD_STATE_ANNOTATION = 'kruise.io/auto-generate-persistent-pod-state';
export const REQUIRED_PERSISTENT_TOPOLOGY_ANNOTATION = 'kruise.io/required-persistent-topology';
export const PREFERRED_PERSISTENT_TOPOLOGY_ANNOTATION = 'kruise.io/preferred-persistent-topology';
export const PERSISTENT_POD_ANNOTATIONS_ANNOTATION = 'kruise.io/persistent-pod-annotations';
/** Pod annotation set by the pod webhook: name of the PersistentPodState that pinned it. */
export const INJECTED_PERSISTENT_POD_STATE_ANNOTATION = 'kruise.io/injected-persistent-pod-state';
/** Pod annotation: keep the pod's IP reserved this many minutes after the pod is deleted. */
export const RESERVED_IP_DURATION_ANNOTATION = 'io.kubernetes.cri/reserved-ip-duration';
/** CNI capability through which the runtime passes pod annotations to the plugin. */
export const CNI_POD_ANNOTATIONS_CAPABILITY = 'io.kubernetes.cri.pod-annotations';

// ---- Custom probes (PodProbeMarker / NodePodProbe) ---------------------------------------------

/** Pod annotation: JSON array of PodContainerProbe declared on the pod itself (no PodProbeMarker needed). */
export const POD_PROBE_ANNOTATION = 'kruise.io/podprobe';
/** Pod annotation: the PodProbeMarkers whose probes the pod has (comma-separated names). */
export const POD_PROBE_MARKER_LIST_ANNOTATION = 'kruise.io/podprobemarker-list';
/** Finalizer on a PodProbeMarker until its probes are out of every NodePodProbe. */
export const NODE_POD_PROBE_CLEANUP_FINALIZER = 'kruise.io/node-pod-probe-cleanup';
/** Separator between a marker's name and its probe's name in a NodePodProbe probe name. */
export const POD_PROBE_NAME_SEPARATOR = '#';
/** A probe's message is cut to this many characters. */
export const MAX_PROBE_MESSAGE_LENGTH = 1024;
/** Pod events the agent emits when a probe's state changes (both Normal, as OpenKruise). */
export const EVENT_REASON_KRUISE_PROBE_SUCCEEDED = 'KruiseProbeSucceeded';
export const EVENT_REASON_KRUISE_PROBE_FAILED = 'KruiseProbeFailed';

// ---- Event reasons -----------------------------------------------------------------------------

export const EVENT_REASON_PULL_IMAGE_SUCCEED = 'PullImageSucceed';
export const EVENT_REASON_PULL_IMAGE_FAILED = 'PullImageFailed';
/** Ours (OpenKruise does not pin): a pre-pulled image could not be pinned or unpinned in the runtime. */
export const EVENT_REASON_PIN_IMAGE_FAILED = 'PinImageFailed';
/** Ours: the image of a Succeeded tag left the node (kubelet's image GC, `crictl rmi`); it is pulled again. */
export const EVENT_REASON_IMAGE_REMOVED = 'PulledImageRemoved';
/** Ours: a pin was released because the image filesystem reached kubelet's image GC threshold. */
export const EVENT_REASON_PIN_RELEASED_FOR_DISK = 'ImagePinReleasedForDisk';
/** Container stopped by a CRR or the container-meta restarter (kubelet's reason). */
export const EVENT_REASON_KILLING = 'Killing';
export const EVENT_REASON_FAILED_PRE_STOP_HOOK = 'FailedPreStopHook';

// ---- Event sources (component names) -----------------------------------------------------------

export const EVENT_SOURCE_IMAGE_PULLER = 'kruise-daemon-imagepuller';
export const EVENT_SOURCE_CONTAINER_META = 'kruise-daemon-containermeta';
