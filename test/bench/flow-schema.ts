// Counting one client's requests as kube-apiserver sees them: apiserver_request_total has no user label and the
// local cluster has no audit log, so a bench creates a FlowSchema matching that client's user(s); API Priority and
// Fairness then counts every request of it, watches included, in apiserver_flowcontrol_dispatched_requests_total.
import type { RealCluster } from '../support/real-cluster.js';
import { metricSum } from '../support/nodeimages.js';

export type FlowSubject =
  | { kind: 'ServiceAccount'; serviceAccount: { name: string; namespace: string } }
  | { kind: 'User'; user: { name: string } };

/**
 * A FlowSchema for every request of `subjects` at `priorityLevel`, at precedence 500: before the built-in
 * service-accounts schema (9000) and kube-controller-manager's (800), after the system ones (leader election: 100, 200).
 */
export function benchFlowSchema(name: string, subjects: readonly FlowSubject[], priorityLevel: string): object {
  return {
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
    kind: 'FlowSchema',
    metadata: { name },
    spec: {
      priorityLevelConfiguration: { name: priorityLevel },
      matchingPrecedence: 500,
      distinguisherMethod: { type: 'ByUser' },
      rules: [
        {
          subjects,
          resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] }],
          nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
        },
      ],
    },
  };
}

/** Requests of the FlowSchema `name` the API server has dispatched so far (read from its /metrics). */
export async function dispatchedRequests(cluster: RealCluster, name: string): Promise<number> {
  const res = await cluster.admin.transport.request({ method: 'GET', path: '/metrics' });
  if (res.status !== 200) throw new Error(`kube-apiserver /metrics: ${res.status} ${res.body.slice(0, 300)}`);
  return metricSum(res.body, 'apiserver_flowcontrol_dispatched_requests_total', { flow_schema: name });
}
