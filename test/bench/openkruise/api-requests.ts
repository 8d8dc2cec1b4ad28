// How kube-apiserver counts one client's requests: apiserver_request_total has no user or user-agent label, so a
// FlowSchema matching the kruise-daemon ServiceAccount (both agents use it, one at a time) makes API Priority and
// Fairness count every request of that account, watches included, in apiserver_flowcontrol_dispatched_requests_total.
import { kubectl } from '../../cluster/k8s/system.js';
import { metricSum } from '../../support/nodeimages.js';
import type { RealCluster } from '../../support/real-cluster.js';
import type { BenchContext } from '../framework.js';

export const FLOW_SCHEMA = 'kd-bench-kruise-daemon';

function flowSchema(): object {
  return {
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
    kind: 'FlowSchema',
    metadata: { name: FLOW_SCHEMA },
    spec: {
      priorityLevelConfiguration: { name: 'workload-low' },
      // before the built-in service-accounts schema (9000); after the system ones (leader election: 100, 200)
      matchingPrecedence: 500,
      distinguisherMethod: { type: 'ByUser' },
      rules: [
        {
          subjects: [{ kind: 'ServiceAccount', serviceAccount: { name: 'kruise-daemon', namespace: 'kruise-system' } }],
          resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] }],
          nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
        },
      ],
    },
  };
}

/** Install the FlowSchema for the run (deleted by the suite's cleanups). */
export function countAgentRequests(context: BenchContext, cluster: RealCluster): void {
  const applied = kubectl(cluster.layout, ['apply', '-f', '-'], JSON.stringify(flowSchema()));
  if (!applied.ok) throw new Error(`FlowSchema ${FLOW_SCHEMA}: ${applied.out}`);
  context.defer(() => kubectl(cluster.layout, ['delete', '--ignore-not-found', 'flowschema', FLOW_SCHEMA]));
}

/** Requests of the kruise-daemon ServiceAccount the API server has dispatched (APF's counter of our FlowSchema). */
export async function serverRequests(cluster: RealCluster): Promise<number> {
  const res = await cluster.admin.transport.request({ method: 'GET', path: '/metrics' });
  if (res.status !== 200) throw new Error(`kube-apiserver /metrics: ${res.status} ${res.body.slice(0, 300)}`);
  return metricSum(res.body, 'apiserver_flowcontrol_dispatched_requests_total', { flow_schema: FLOW_SCHEMA });
}
