// Core kinds as they travel on the wire and sit in our watch caches: client-node's model types with every
// Date replaced by its RFC 3339 string. Types only (erased at compile time; the agent loads no client-node code).
import type { V1Container, V1ContainerStatus, V1Node, V1Pod, V1PodCondition } from '@kubernetes/client-node';

/** T with every Date (however deep) replaced by string. */
export type Wire<T> = T extends Date
  ? string
  : T extends ReadonlyArray<infer U>
    ? Array<Wire<U>>
    : T extends object
      ? { [K in keyof T]: Wire<T[K]> }
      : T;

export type WirePod = Wire<V1Pod>;
export type WirePodCondition = Wire<V1PodCondition>;
export type WireContainerStatus = Wire<V1ContainerStatus>;
export type WireContainer = Wire<V1Container>;
export type WireNode = Wire<V1Node>;
