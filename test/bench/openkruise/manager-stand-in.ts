// What OpenKruise's kruise-manager does for a ContainerRecreateRequest that its kruise-daemon cannot do alone, done by
// the bench while OpenKruise's daemon runs without its manager: the daemon marks a container Succeeded only when the
// CRR's annotation crr.apps.kruise.io/sync-container-statuses shows the new container ready
// (pkg/daemon/containerrecreate/crr_daemon_util.go getCurrentCRRContainersRecreateStates), and only the manager's CRR
// controller writes it: on every change of the pod's container statuses and of the CRR, while the CRR is Recreating,
// the statuses of the CRR's containers that run and started at or after the CRR's creation
// (pkg/controller/containerrecreaterequest/crr_controller.go syncContainerStatuses), as a merge patch.
import { CRR_POD_UID_LABEL, CRR_SYNC_CONTAINER_STATUSES_ANNOTATION } from '../../../src/api/constants.js';
import {
  CONTAINER_RECREATE_REQUESTS,
  type ContainerRecreateRequest,
  type ContainerRecreateRequestSyncContainerStatus,
} from '../../../src/api/containerrecreaterequest.js';
import type { WirePod } from '../../../src/api/wire.js';
import type { KubeClient } from '../../../src/kube/client.js';
import { errorMessage } from '../../../src/util/error-message.js';
import type { BenchCaches } from './bench-caches.js';

/** Seconds of an RFC 3339 time (both the CRR's creation and a container's start are whole seconds on the wire). */
const seconds = (time: string | undefined): number => Math.floor(Date.parse(time ?? '') / 1000);

export function syncStatuses(
  crr: ContainerRecreateRequest,
  pod: WirePod,
): ContainerRecreateRequestSyncContainerStatus[] {
  const created = seconds(crr.metadata.creationTimestamp);
  const statuses: ContainerRecreateRequestSyncContainerStatus[] = [];
  for (const c of crr.spec.containers) {
    const status = pod.status?.containerStatuses?.find((s) => s.name === c.name);
    const startedAt = status?.state?.running?.startedAt;
    if (!status || !startedAt || seconds(startedAt) < created) continue;
    statuses.push({
      name: status.name,
      ready: status.ready,
      restartCount: status.restartCount,
      ...(status.containerID ? { containerID: status.containerID } : {}),
    });
  }
  return statuses;
}

/** Start writing the annotation for the CRRs in `caches`; returns what stops it. */
export function startManagerStandIn(
  client: KubeClient,
  caches: BenchCaches,
  log: (message: string) => void,
): () => void {
  const sync = (crr: ContainerRecreateRequest): void => {
    if (crr.status?.phase !== 'Recreating' || crr.status.completionTime || crr.metadata.deletionTimestamp) return;
    const pod = caches.pod(crr.spec.podName);
    if (!pod || pod.metadata?.uid !== crr.metadata.labels?.[CRR_POD_UID_LABEL]) return;
    const value = JSON.stringify(syncStatuses(crr, pod));
    if (crr.metadata.annotations?.[CRR_SYNC_CONTAINER_STATUSES_ANNOTATION] === value) return;
    const patch = { metadata: { annotations: { [CRR_SYNC_CONTAINER_STATUSES_ANNOTATION]: value } } };
    client
      .patch(CONTAINER_RECREATE_REQUESTS, crr.metadata.name ?? '', patch, {
        type: 'merge',
        namespace: crr.metadata.namespace,
      })
      .catch((err: unknown) => log(`manager stand-in: ${crr.metadata.name}: ${errorMessage(err)}`));
  };
  const ofPod = (pod: WirePod): void => {
    for (const crr of caches.crrs.list()) {
      if (crr.metadata.labels?.[CRR_POD_UID_LABEL] === pod.metadata?.uid) sync(crr);
    }
  };
  const offCrrs = caches.crrs.addHandlers({ onAdd: sync, onUpdate: (_old, crr) => sync(crr) });
  const offPods = caches.pods.addHandlers({ onUpdate: (_old, pod) => ofPod(pod) });
  return () => {
    offCrrs();
    offPods();
  };
}
