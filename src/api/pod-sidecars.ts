// Native sidecars (KEP-753, GA in Kubernetes 1.33): init containers with `restartPolicy: Always`. kubelet starts them
// in order before the regular containers, keeps them running beside them and starts one again whenever it stops,
// whatever the pod's restartPolicy; their status is in `initContainerStatuses`, not `containerStatuses`. A plain init
// container (no restartPolicy) runs once to completion before the others and is never started again.
import type { WireContainer, WireContainerStatus, WirePod } from './wire.js';

/** What kind of container of the pod a name is. */
export type PodContainerKind = 'regular' | 'sidecar' | 'init';

export function isSidecar(container: Pick<WireContainer, 'restartPolicy'>): boolean {
  return container.restartPolicy === 'Always';
}

/** The pod's native sidecars, in the order kubelet starts them. */
export function sidecarsOf(pod: WirePod): WireContainer[] {
  return (pod.spec?.initContainers ?? []).filter(isSidecar);
}

/** The container `name` of the pod's spec and its kind, or undefined when the pod has none of that name. */
export function podContainer(
  pod: WirePod,
  name: string,
): { container: WireContainer; kind: PodContainerKind } | undefined {
  const regular = (pod.spec?.containers ?? []).find((c) => c.name === name);
  if (regular) return { container: regular, kind: 'regular' };
  const init = (pod.spec?.initContainers ?? []).find((c) => c.name === name);
  if (init) return { container: init, kind: isSidecar(init) ? 'sidecar' : 'init' };
  return undefined;
}

/** The spec of every container that keeps running beside the others: the regular ones, then the sidecars. */
export function longRunningContainers(pod: WirePod): WireContainer[] {
  return [...(pod.spec?.containers ?? []), ...sidecarsOf(pod)];
}

/**
 * kubelet's status of every container that keeps running: `containerStatuses`, then the `initContainerStatuses` of
 * the sidecars (a plain init container's status is left out).
 */
export function longRunningStatuses(pod: WirePod): WireContainerStatus[] {
  const sidecars = new Set(sidecarsOf(pod).map((c) => c.name));
  return [
    ...(pod.status?.containerStatuses ?? []),
    ...(pod.status?.initContainerStatuses ?? []).filter((s) => sidecars.has(s.name)),
  ];
}

/** Why a plain init container cannot be recreated (a CRR naming one is refused, and completed by the agent). */
export function plainInitContainerProblem(name: string): string {
  return (
    `not allowed to recreate init container ${name}: it has no restartPolicy Always, so kubelet ran it once before ` +
    `the other containers and never starts it again; only regular containers and native sidecars (init containers ` +
    `with restartPolicy: Always) can be recreated`
  );
}
