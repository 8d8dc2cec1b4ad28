// Core kinds as they travel on the wire and sit in our watch caches: client-node's model types with every
// Date replaced by its RFC 3339 string, and objects with our KubeObject metadata (what informers and the client
// take). Types only (erased at compile time; the agent loads no client-node code). One pod type serves every
// reader: a function that needs a few fields takes a Pick or a small structural type, which a WirePod satisfies.
import type {
  V1Container,
  V1ContainerPort,
  V1ContainerStatus,
  V1ExecAction,
  V1HTTPGetAction,
  V1Node,
  V1Pod,
  V1PodCondition,
  V1Probe,
  V1TCPSocketAction,
} from '@kubernetes/client-node';
import type { KubeObject } from '../kube/object.js';

/** T with every Date (however deep) replaced by string. */
export type Wire<T> = T extends Date
  ? string
  : T extends ReadonlyArray<infer U>
    ? Array<Wire<U>>
    : T extends object
      ? { [K in keyof T]: Wire<T[K]> }
      : T;

export type WirePod = Wire<V1Pod> & KubeObject;
export type WireNode = Wire<V1Node> & KubeObject;
export type WirePodCondition = Wire<V1PodCondition>;
export type WireContainerStatus = Wire<V1ContainerStatus>;
export type WireContainer = Wire<V1Container>;
export type WireContainerPort = Wire<V1ContainerPort>;
export type WireExecAction = Wire<V1ExecAction>;
export type WireHTTPGetAction = Wire<V1HTTPGetAction>;
export type WireTCPSocketAction = Wire<V1TCPSocketAction>;
export type WireProbe = Wire<V1Probe>;
