// Whether kubelet would start a container again once a CRR has stopped it, whatever exit code the stop ends it with.
// A stop may end a container with any code: 0 when it handles the stop signal and exits cleanly, 143 (128 + 15)
// when SIGTERM kills it, 137 when the runtime's SIGKILL ends the grace period, 128 + n for another stop signal n,
// or whatever the program chooses. So a CRR is admitted exactly when, for every exit code 0..255, kubelet restarts the
// container. kubelet 1.35+ (ContainerRestartRules, beta and on by default since 1.35; k8s.io/kubernetes v1.37.2
// pkg/api/v1/pod/util.go ContainerShouldRestart, FindMatchingContainerRestartRule) decides for an exited container:
//   1. only when the container has its own restartPolicy: the first rule of its restartPolicyRules whose exitCodes
//      match (operator In: the code is among the values; NotIn: it is not; a rule without exitCodes or with another
//      operator never matches) decides: action Restart restarts it; RestartAllContainers (KEP-5532, beta and on by
//      default since 1.36) restarts it together with every other container of the pod; any other action falls
//      through to step 2 (the later rules are not looked at);
//   2. its own restartPolicy: Always restarts, OnFailure restarts a non-zero exit, Never does not;
//   3. without one, the Pod's restartPolicy (the same three; unset is Always).
// We assume the kubelet's gates are the API server's: with ContainerRestartRules off the API server drops a regular
// container's restartPolicy and rules, and it refuses the RestartAllContainers action with that gate off. OpenKruise
// v1.9.1 checks none of this: its CRR then waits until activeDeadlineSeconds, or forever; we deny it at admission, and
// the agent completes such a CRR at once (and fails a container kubelet reports exited for good).
// A native sidecar (an init container with restartPolicy Always) is started again whatever the pod's restartPolicy,
// while a regular container still runs (once they have all finished, the pod is Succeeded or Failed and kubelet
// stops its sidecars for good); a plain init container is never started again.
import type { V1ContainerRestartRule } from '@kubernetes/client-node';
import type { JsonObject } from './field-checks.js';
import type { FieldError } from './field-errors.js';
import { plainInitContainerProblem, podContainer } from './pod-sidecars.js';
import type { WirePod } from './wire.js';

/** The exit codes a stop can end a container with. */
export const STOP_EXIT_CODES: readonly number[] = Array.from({ length: 256 }, (_, code) => code);

/** kubelet's restart decision for one exit code, and what made it. */
export interface RestartDecision {
  restarts: boolean;
  /** What decided: a rule of the container's restartPolicyRules, its own restartPolicy, or the Pod's. */
  source: 'rule' | 'container' | 'Pod';
  /** The deciding rule's index and action (source rule). */
  rule?: { index: number; action: string };
  /** The deciding restartPolicy (source container or Pod). */
  policy?: string;
}

/** The index of the first rule whose exit codes match `code` (kubelet's FindMatchingContainerRestartRule), or -1. */
function matchingRule(rules: readonly V1ContainerRestartRule[], code: number): number {
  return rules.findIndex((rule) => {
    const values = rule.exitCodes?.values ?? [];
    switch (rule.exitCodes?.operator) {
      case 'In':
        return values.includes(code);
      case 'NotIn':
        return !values.includes(code);
      default:
        return false;
    }
  });
}

const POLICIES = new Set(['Always', 'OnFailure', 'Never']);

function byPolicy(policy: string, code: number, source: 'container' | 'Pod'): RestartDecision {
  const restarts = policy === 'Never' ? false : policy === 'OnFailure' ? code !== 0 : true;
  return { restarts, source, policy };
}

/** Whether kubelet starts container `name` of `pod` again after it exits with `code`, and what decided. */
export function restartDecision(pod: WirePod, name: string, code: number): RestartDecision {
  const container = podContainer(pod, name)?.container;
  const own = container?.restartPolicy;
  if (own !== undefined && own !== null) {
    // kubelet looks at the rules whenever the container has a restartPolicy of its own (the API requires one with rules)
    const rules = container?.restartPolicyRules ?? [];
    const index = matchingRule(rules, code);
    const action = index >= 0 ? rules[index]!.action : undefined;
    if (action === 'Restart' || action === 'RestartAllContainers') {
      return { restarts: true, source: 'rule', rule: { index, action } };
    }
    if (POLICIES.has(own)) return byPolicy(own, code, 'container');
  }
  return byPolicy(pod.spec?.restartPolicy || 'Always', code, 'Pod');
}

/** The exit codes 0..255 after which kubelet would not start `name` again. */
export function exitCodesNotRestarted(pod: WirePod, name: string): number[] {
  return STOP_EXIT_CODES.filter((code) => !restartDecision(pod, name, code).restarts);
}

/** `[0,1,2,5,7,8]` → `0-2, 5, 7-8`. */
export function codeRanges(codes: readonly number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < codes.length;) {
    let j = i;
    while (j + 1 < codes.length && codes[j + 1] === codes[j]! + 1) j++;
    parts.push(i === j ? String(codes[i]) : `${codes[i]}-${codes[j]}`);
    i = j + 1;
  }
  return parts.join(', ');
}

/** Why kubelet would not start `name` again after the CRR stops it (for some exit code), or undefined when it would. */
export function restartPolicyProblem(pod: WirePod, name: string): string | undefined {
  const kind = podContainer(pod, name)?.kind;
  if (kind === 'init') return plainInitContainerProblem(name);
  if (kind === 'sidecar') {
    const phase = pod.status?.phase;
    if (phase !== 'Succeeded' && phase !== 'Failed') return undefined;
    return `not allowed to recreate sidecar ${name}: the Pod is ${phase}, so kubelet starts no sidecar again`;
  }
  const refused = exitCodesNotRestarted(pod, name);
  if (refused.length === 0) return undefined;
  // every refused code is decided by the same policy: the container's own when it has one, else the Pod's
  const decision = restartDecision(pod, name, refused[0]!);
  const rules =
    decision.source === 'container' && (podContainer(pod, name)?.container.restartPolicyRules ?? []).length > 0;
  const basis =
    (decision.source === 'Pod' ? "the Pod's" : 'its own') +
    ` restartPolicy is ${decision.policy}` +
    (rules ? ' and no Restart or RestartAllContainers rule of its restartPolicyRules matches those codes' : '');
  const which =
    refused.length === STOP_EXIT_CODES.length
      ? 'whatever exit code the stop ends it with'
      : `if the stop ends it with exit code ${codeRanges(refused)}`;
  return (
    `not allowed to recreate container ${name}: ${basis}, so kubelet would not start it again ${which} ` +
    `(a stop may end a container with any code: 0 when it handles the signal, 143 when SIGTERM kills it, 137 after ` +
    `the grace period's SIGKILL)`
  );
}

/** Admission rule: kubelet must start every container of the CRR (spec.containers) again after any stop. */
export function checkCrrRestartPolicy(containers: readonly JsonObject[], pod: WirePod): FieldError[] {
  const errors: FieldError[] = [];
  containers.forEach((c, i) => {
    const name = c['name'];
    const problem = typeof name === 'string' ? restartPolicyProblem(pod, name) : undefined;
    if (problem) errors.push({ field: `spec.containers[${i}].name`, type: 'FieldValueInvalid', message: problem });
  });
  return errors;
}
