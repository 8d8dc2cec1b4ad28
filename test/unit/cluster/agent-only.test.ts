// Our agent as deploy/overlays/agent-only installs it: which of the overlay's objects the tests install.
import assert from 'node:assert/strict';
import { agentOnlyApiObjects } from '../../support/agent-only.js';

describe('the agent-only install of the real-cluster tests', () => {
  it("takes the overlay's RBAC and node confinement, not its CRDs nor its DaemonSet", () => {
    const rbac = ['ServiceAccount', 'RoleBinding', 'ClusterRoleBinding', 'Role', 'ClusterRole'];
    const confinement = ['ValidatingAdmissionPolicyBinding', 'ValidatingAdmissionPolicy'];
    const kinds = ['CustomResourceDefinition', ...rbac, 'DaemonSet', ...confinement];
    const picked = agentOnlyApiObjects(kinds.map((kind) => ({ kind, metadata: { name: `${kind}-ts` } })));
    assert.deepEqual(
      picked.map((m) => m.kind),
      [...rbac, ...confinement],
    );
  });
});
