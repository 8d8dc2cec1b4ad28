// Whether kubelet would start a container again once a CRR has stopped it. kubelet restarts a stopped regular
// container only under restartPolicy Always: with Never it never does, with OnFailure only after a non-zero exit
// (a container stopped with SIGTERM often exits 0). The policy of a container is its own `restartPolicy` (container
// restart rules, KEP-5307) or else the pod's (default Always). OpenKruise checks none of this: its CRR then waits
// until activeDeadlineSeconds, or forever; we deny it at admission and the agent completes such a CRR at once.
// A native sidecar (an init container with restartPolicy Always) is started again whatever the pod's restartPolicy,
// while a regular container still runs (once they have all finished, the pod is Succeeded or Failed and kubelet
// stops its sidecars for good).
import type { JsonObject } from './field-checks.js';
import type { FieldError } from './field-errors.js';
import { plainInitContainerProblem, podContainer } from './pod-sidecars.js';
import type { WirePod } from './wire.js';

/** The restart policy kubelet applies to the container `name` of `pod` (regular, or a sidecar: Always), and whose. */
export function containerRestartPolicy(pod: WirePod, name: string): { policy: string; of: 'container' | 'Pod' } {
  const own = podContainer(pod, name)?.container.restartPolicy;
  if (own) return { policy: own, of: 'container' };
  return { policy: pod.spec?.restartPolicy || 'Always', of: 'Pod' };
}

/** Why kubelet would not start `name` again after the CRR stops it, or undefined when it would. */
export function restartPolicyProblem(pod: WirePod, name: string): string | undefined {
  const kind = podContainer(pod, name)?.kind;
  if (kind === 'init') return plainInitContainerProblem(name);
  if (kind === 'sidecar') {
    const phase = pod.status?.phase;
    if (phase !== 'Succeeded' && phase !== 'Failed') return undefined;
    return `not allowed to recreate sidecar ${name}: the Pod is ${phase}, so kubelet starts no sidecar again`;
  }
  const { policy, of } = containerRestartPolicy(pod, name);
  if (policy === 'Always') return undefined;
  const whose = of === 'Pod' ? `the Pod's restartPolicy is ${policy}` : `its own restartPolicy is ${policy}`;
  const why =
    policy === 'OnFailure'
      ? 'kubelet starts it again only after a non-zero exit, and a container stopped with SIGTERM may exit 0'
      : 'kubelet never starts it again once stopped';
  return `not allowed to recreate container ${name}: ${whose}, so ${why}`;
}

/** Admission rule: every container of the CRR (spec.containers) must be one kubelet starts again (restartPolicy Always). */
export function checkCrrRestartPolicy(containers: readonly JsonObject[], pod: WirePod): FieldError[] {
  const errors: FieldError[] = [];
  containers.forEach((c, i) => {
    const name = c['name'];
    const problem = typeof name === 'string' ? restartPolicyProblem(pod, name) : undefined;
    if (problem) errors.push({ field: `spec.containers[${i}].name`, type: 'FieldValueInvalid', message: problem });
  });
  return errors;
}
