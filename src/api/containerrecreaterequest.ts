// ContainerRecreateRequest (apps.kruise.io v1alpha1, namespaced, short name crr): restart some
// containers of one pod in place. v1alpha1 wire format: the manager's container status snapshot and
// the "pod forced not-ready" time travel as annotations (see constants.ts).

import type { WireContainerPort, WireExecAction, WireHTTPGetAction, WireTCPSocketAction } from './wire.js';
import type { KubeObject } from '../kube/object.js';
import type { ResourceType } from '../kube/resource.js';
import { KRUISE_GROUP, V1ALPHA1 } from './constants.js';
import type { ObjectMeta, Time } from './meta.js';

/** Served as v1alpha1 only (OpenKruise's v1beta1 renames fields and needs a conversion webhook). */
export const CONTAINER_RECREATE_REQUESTS: ResourceType = {
  group: KRUISE_GROUP,
  version: V1ALPHA1,
  resource: 'containerrecreaterequests',
  namespaced: true,
  kind: 'ContainerRecreateRequest',
};

export type ContainerRecreateRequestPhase = 'Pending' | 'Recreating' | 'Succeeded' | 'Failed' | 'Completed';

export type ContainerRecreateRequestFailurePolicy = 'Fail' | 'Ignore';

/** preStop handler copied from the pod's container by the webhook (read-only for users). */
export interface ProbeHandler {
  exec?: WireExecAction;
  httpGet?: WireHTTPGetAction;
  tcpSocket?: WireTCPSocketAction;
}

/** The container as it was when the CRR was created (read-only for users). */
export interface ContainerRecreateRequestContainerContext {
  /** `<runtime>://<id>`. */
  containerID: string;
  restartCount: number;
}

export interface ContainerRecreateRequestContainer {
  name: string;
  preStop?: ProbeHandler;
  /** Copied only when preStop.httpGet is set. */
  ports?: WireContainerPort[];
  statusContext?: ContainerRecreateRequestContainerContext;
}

export interface ContainerRecreateRequestStrategy {
  /** `Fail` (default): complete as soon as one container failed. */
  failurePolicy?: ContainerRecreateRequestFailurePolicy;
  /** Recreate the next container only after the previous one succeeded. */
  orderedRecreate?: boolean;
  /** Kill even if the container looks already restarted. */
  forceRecreate?: boolean;
  /** Grace for preStop + stop; defaulted from the pod, else 30 at kill time. */
  terminationGracePeriodSeconds?: number;
  /** Keep the pod not-ready this long before killing. */
  unreadyGracePeriodSeconds?: number;
  /** The new container must be started and ready longer than this. */
  minStartedSeconds?: number;
}

export interface ContainerRecreateRequestSpec {
  podName: string;
  containers: ContainerRecreateRequestContainer[];
  strategy?: ContainerRecreateRequestStrategy;
  /** At least 3 (webhook). */
  activeDeadlineSeconds?: number;
  ttlSecondsAfterFinished?: number;
}

export interface ContainerRecreateRequestContainerRecreateState {
  name: string;
  phase: ContainerRecreateRequestPhase;
  message?: string;
  /** The agent has stopped this container (carried over between rounds). */
  isKilled?: boolean;
}

export interface ContainerRecreateRequestStatus {
  /** "" until the agent picks the CRR up; the CRR itself only uses ""/Pending/Recreating/Completed. */
  phase: ContainerRecreateRequestPhase | '';
  completionTime?: Time;
  message?: string;
  containerRecreateStates?: ContainerRecreateRequestContainerRecreateState[] | undefined;
}

/** One element of the JSON array in annotation `crr.apps.kruise.io/sync-container-statuses`. */
export interface ContainerRecreateRequestSyncContainerStatus {
  name: string;
  ready: boolean;
  restartCount: number;
  containerID?: string;
}

/** A ContainerRecreateRequest as the API serves it (metadata always set). */
export interface ContainerRecreateRequest extends KubeObject {
  metadata: ObjectMeta;
  spec: ContainerRecreateRequestSpec;
  status?: ContainerRecreateRequestStatus;
}

/** A finished CRR (Completed, with a completionTime) is never written again by the agent or the controller. */
export function crrFinished(status: ContainerRecreateRequestStatus | undefined): boolean {
  return status?.phase === 'Completed' || Boolean(status?.completionTime);
}
