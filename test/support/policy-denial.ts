// The refusal of a write by a ValidatingAdmissionPolicy, as the real API server sends it: a 403 that names the policy
// and carries its message. One check for the confinement tests (node confinement, barriers, a stolen token).
import assert from 'node:assert/strict';
import { isForbidden } from '../../src/kube/errors.js';

/** The refusal message names this policy: `ValidatingAdmissionPolicy '<name>'`. */
export function policyNamed(name: string): string {
  return `ValidatingAdmissionPolicy '${name}'`;
}

export interface Refusal {
  /** As `policyNamed` gives it. */
  policy: string;
  message: RegExp;
}

/**
 * When two policies refuse the same write (a barrier's bad key breaks both deploy/node-confinement's shape rule and
 * the barrier-owner policy's "keys the pod waits on"), the API server names one of them, in an order it does not
 * fix: `also` lists the other refusals that count.
 */
export function refusedBy(err: unknown, policy: string, message: RegExp, also: readonly Refusal[] = []): true {
  assert.ok(isForbidden(err), String(err));
  const text = String(err);
  const by = [{ policy, message }, ...also].find((r) => text.includes(r.policy));
  assert.ok(by, `refused by ${[policy, ...also.map((r) => r.policy)].join(' or ')}: ${text}`);
  assert.match(text, by.message);
  return true;
}

/** Asserts the request is refused by `policy` with a message matching `message` (or as one of `also`). */
export async function deniedBy(
  request: Promise<unknown>,
  policy: string,
  message: RegExp,
  also: readonly Refusal[] = [],
): Promise<void> {
  await assert.rejects(request, (err: unknown) => refusedBy(err, policy, message, also));
}

/** The two policies that check an agent's launch-barrier writes; either may be the one named for a write both refuse. */
export const NODE_CONFINEMENT_POLICY = policyNamed('kruise-daemon-node-confinement');
export const BARRIER_OWNER_POLICY = policyNamed('kruise-daemon-barrier-owner');
const BARRIER_WRITE_REFUSED = /kruise-daemon (of node \S+ )?may (not )?write (only launch barriers|configmaps )/;

/** The other barrier policy's refusal of a ConfigMap write, for `also`. */
export function otherBarrierPolicy(policy: string): Refusal[] {
  const other = policy === NODE_CONFINEMENT_POLICY ? BARRIER_OWNER_POLICY : NODE_CONFINEMENT_POLICY;
  return [{ policy: other, message: BARRIER_WRITE_REFUSED }];
}
