// The refusal of a write by a ValidatingAdmissionPolicy, as the real API server sends it: a 403 that names the policy
// and carries its message. One check for the confinement tests (node confinement, barriers, a stolen token).
import assert from 'node:assert/strict';
import { isForbidden } from '../../src/kube/errors.js';

/** The refusal message names this policy: `ValidatingAdmissionPolicy '<name>'`. */
export function policyNamed(name: string): string {
  return `ValidatingAdmissionPolicy '${name}'`;
}

/** Asserts `err` is a 403 from `policy` (as `policyNamed` gives it) whose text matches `message`. */
export function refusedBy(err: unknown, policy: string, message: RegExp): true {
  assert.ok(isForbidden(err), String(err));
  assert.ok(String(err).includes(policy), `refused by ${policy}: ${String(err)}`);
  assert.match(String(err), message);
  return true;
}

/** Asserts the request is refused by `policy` with a message matching `message`. */
export async function deniedBy(request: Promise<unknown>, policy: string, message: RegExp): Promise<void> {
  await assert.rejects(request, (err: unknown) => refusedBy(err, policy, message));
}
