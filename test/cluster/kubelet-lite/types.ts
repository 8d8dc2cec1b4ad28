// Wire types (JSON as the API server sends it) of the core/v1 objects kubelet-lite reads and writes. Only the fields
// it uses; timestamps are RFC 3339 strings. Test infrastructure: see README.md.
import type { KubeObject, ObjectMeta } from '../../../src/kube/index.js';

export interface ExecAction {
  command?: string[];
}

export interface LifecycleHandler {
  exec?: ExecAction;
  httpGet?: unknown;
  tcpSocket?: unknown;
  sleep?: { seconds: number };
}

export interface Lifecycle {
  postStart?: LifecycleHandler;
  preStop?: LifecycleHandler;
}

export interface Probe extends LifecycleHandler {
  grpc?: unknown;
  initialDelaySeconds?: number;
  timeoutSeconds?: number;
  periodSeconds?: number;
  successThreshold?: number;
  failureThreshold?: number;
  terminationGracePeriodSeconds?: number;
}

export interface KeySelector {
  name?: string;
  key: string;
  optional?: boolean;
}

export interface EnvVarSource {
  fieldRef?: { apiVersion?: string; fieldPath: string };
  resourceFieldRef?: unknown;
  configMapKeyRef?: KeySelector;
  secretKeyRef?: KeySelector;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: EnvVarSource;
}

export interface EnvFromSource {
  prefix?: string;
  configMapRef?: { name?: string; optional?: boolean };
  secretRef?: { name?: string; optional?: boolean };
}

export interface ContainerPort {
  name?: string;
  containerPort: number;
  hostPort?: number;
  hostIP?: string;
  protocol?: string;
}

export interface VolumeMount {
  name: string;
  mountPath: string;
  readOnly?: boolean;
  subPath?: string;
}

export interface SecurityContext {
  privileged?: boolean;
  runAsUser?: number;
  runAsGroup?: number;
  readOnlyRootFilesystem?: boolean;
  capabilities?: { add?: string[]; drop?: string[] };
}

export interface Container {
  name: string;
  image: string;
  imagePullPolicy?: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  env?: EnvVar[];
  envFrom?: EnvFromSource[];
  ports?: ContainerPort[];
  volumeMounts?: VolumeMount[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  lifecycle?: Lifecycle;
  terminationMessagePath?: string;
  terminationMessagePolicy?: string;
  securityContext?: SecurityContext;
  /** Init containers only: Always makes it a sidecar. */
  restartPolicy?: string;
  stdin?: boolean;
  tty?: boolean;
}

export interface Volume {
  name: string;
  emptyDir?: Record<string, unknown>;
  hostPath?: { path: string; type?: string };
  [source: string]: unknown;
}

export interface PodSpec {
  nodeName?: string;
  containers: Container[];
  initContainers?: Container[];
  volumes?: Volume[];
  restartPolicy?: string;
  terminationGracePeriodSeconds?: number;
  serviceAccountName?: string;
  hostname?: string;
  subdomain?: string;
  hostNetwork?: boolean;
  shareProcessNamespace?: boolean;
  readinessGates?: { conditionType: string }[];
  imagePullSecrets?: { name?: string }[];
  securityContext?: { runAsUser?: number; runAsGroup?: number; supplementalGroups?: number[]; fsGroup?: number };
}

export interface PodCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastProbeTime?: string | null;
  lastTransitionTime?: string;
}

export interface ContainerStateWaiting {
  reason?: string;
  message?: string;
}
export interface ContainerStateRunning {
  startedAt?: string;
}
export interface ContainerStateTerminated {
  exitCode: number;
  signal?: number;
  reason?: string;
  message?: string;
  startedAt?: string;
  finishedAt?: string;
  containerID?: string;
}
export interface ContainerState {
  waiting?: ContainerStateWaiting;
  running?: ContainerStateRunning;
  terminated?: ContainerStateTerminated;
}

export interface ContainerStatus {
  name: string;
  state: ContainerState;
  lastState: ContainerState;
  ready: boolean;
  restartCount: number;
  image: string;
  imageID: string;
  containerID?: string;
  started?: boolean;
}

export interface PodStatus {
  phase?: string;
  conditions?: PodCondition[];
  message?: string;
  reason?: string;
  hostIP?: string;
  hostIPs?: { ip: string }[];
  podIP?: string;
  podIPs?: { ip: string }[];
  startTime?: string;
  initContainerStatuses?: ContainerStatus[];
  containerStatuses?: ContainerStatus[];
  qosClass?: string;
}

export interface Pod extends KubeObject {
  metadata: ObjectMeta & {
    name: string;
    namespace: string;
    uid: string;
    deletionTimestamp?: string;
    deletionGracePeriodSeconds?: number;
  };
  spec: PodSpec;
  status?: PodStatus;
}

export interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
  binaryData?: Record<string, string>;
}

export interface Secret extends KubeObject {
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

export function podKey(pod: Pick<Pod, 'metadata'>): string {
  return `${pod.metadata.namespace}/${pod.metadata.name}`;
}

/** `name_namespace(uid)`, as kubelet formats a pod in messages (format.Pod). */
export function podDescription(pod: Pick<Pod, 'metadata'>): string {
  return `${pod.metadata.name}_${pod.metadata.namespace}(${pod.metadata.uid})`;
}
