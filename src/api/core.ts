// Core Kubernetes kinds we read or write, as types only. `export type` is erased at compile time, so
// importing these costs the agent nothing at run time (it must not load client-node's model code).
// Note: client-node's model classes type timestamps as Date; on the wire (and in our watch cache,
// which holds parsed JSON) they are RFC 3339 strings.

export type {
  V1Pod as Pod,
  V1PodSpec as PodSpec,
  V1PodStatus as PodStatus,
  V1PodCondition as PodCondition,
  V1Container as Container,
  V1ContainerPort as ContainerPort,
  V1ContainerStatus as ContainerStatus,
  V1ExecAction as ExecAction,
  V1HTTPGetAction as HTTPGetAction,
  V1TCPSocketAction as TCPSocketAction,
  V1Node as Node,
  V1ConfigMap as ConfigMap,
  V1Secret as Secret,
  CoreV1Event as Event,
  V1Lease as Lease,
} from '@kubernetes/client-node';
