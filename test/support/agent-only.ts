// Our agent as deploy/overlays/agent-only installs it beside OpenKruise (docs/compatibility.md): its RBAC and node
// confinement under the -ts names (ServiceAccount kruise-daemon-ts, ClusterRole kruise-daemon-role-ts, ...), and for
// each node a kubeconfig of that ServiceAccount with a token bound to a placeholder pod on the node, as the -ts
// DaemonSet's pods would have. The overlay's CRDs are left out: OpenKruise's are the ones installed. Run the agents
// with startSystem(installed.cluster, { controller: false }).
import { join } from 'node:path';
import {
  kubectl,
  agentTokenPod,
  renderOverlay,
  serviceAccountKubeconfig,
  SYSTEM_NAMESPACE,
} from '../cluster/k8s/system.js';
import type { Manifest } from '../cluster/openkruise/openkruise.js';
import type { RealCluster } from './real-cluster.js';

export const AGENT_ONLY_SERVICE_ACCOUNT = 'kruise-daemon-ts';

/** What of the overlay is installed here: the API's permissions for the agent (the DaemonSet runs as processes). */
const AGENT_ONLY_KINDS = new Set([
  'ServiceAccount',
  'ClusterRole',
  'ClusterRoleBinding',
  'Role',
  'RoleBinding',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
]);

/** The overlay's objects the agent needs from the API: no CRDs, no DaemonSet. */
export function agentOnlyApiObjects(rendered: readonly Manifest[]): Manifest[] {
  return rendered.filter((m) => m.kind !== undefined && AGENT_ONLY_KINDS.has(m.kind));
}

export interface AgentOnlyInstall {
  /** The cluster, its agentKubeconfigs those of kruise-daemon-ts. */
  cluster: RealCluster;
  /** The RBAC and the placeholder pods removed (their tokens die with them). */
  remove(): void;
}

export function installAgentOnly(cluster: RealCluster): AgentOnlyInstall {
  const { layout } = cluster;
  const objects = agentOnlyApiObjects(renderOverlay(layout, 'agent-only') as Manifest[]);
  const list = JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects });
  const applied = kubectl(layout, ['apply', '-f', '-'], list);
  if (!applied.ok) throw new Error(`kubectl apply of deploy/overlays/agent-only's RBAC failed: ${applied.out}`);
  const sandboxImage = cluster.vars.SANDBOX_IMAGE;
  if (!sandboxImage) throw new Error('the real cluster env lacks SANDBOX_IMAGE');
  const pods: string[] = [];
  const agentKubeconfigs: Record<string, string> = {};
  const remove = (): void => {
    if (pods.length > 0) kubectl(layout, ['delete', 'pod', '-n', SYSTEM_NAMESPACE, '--ignore-not-found', ...pods]);
    const removed = kubectl(layout, ['delete', '--ignore-not-found', '-f', '-'], list);
    if (!removed.ok) throw new Error(`removing deploy/overlays/agent-only's RBAC failed: ${removed.out}`);
  };
  try {
    for (const node of layout.nodes) {
      const pod = agentTokenPod(layout, node, sandboxImage, AGENT_ONLY_SERVICE_ACCOUNT);
      pods.push(pod);
      agentKubeconfigs[node.name] = serviceAccountKubeconfig(
        layout,
        SYSTEM_NAMESPACE,
        AGENT_ONLY_SERVICE_ACCOUNT,
        join(layout.k8sDir, 'credentials', `${AGENT_ONLY_SERVICE_ACCOUNT}-${node.name}.kubeconfig`),
        24,
        pod,
      );
    }
  } catch (err) {
    remove();
    throw err;
  }
  const first = layout.nodes[0];
  if (!first) throw new Error('the real cluster has no nodes');
  return {
    cluster: { ...cluster, agentKubeconfigs, agentKubeconfig: agentKubeconfigs[first.name]! },
    remove,
  };
}
