// kube-apiserver's count of the agents' requests (test/bench/flow-schema.ts): a FlowSchema matching the
// kruise-daemon ServiceAccount, which both agents use, one at a time.
import { kubectl } from '../../cluster/k8s/system.js';
import type { RealCluster } from '../../support/real-cluster.js';
import { benchFlowSchema, dispatchedRequests } from '../flow-schema.js';
import type { BenchContext } from '../framework.js';

export const FLOW_SCHEMA = 'kd-bench-kruise-daemon';

/** Install the FlowSchema for the run (deleted by the suite's cleanups). */
export function countAgentRequests(context: BenchContext, cluster: RealCluster): void {
  const daemonAccount = { name: 'kruise-daemon', namespace: 'kruise-system' };
  const schema = benchFlowSchema(
    FLOW_SCHEMA,
    [{ kind: 'ServiceAccount', serviceAccount: daemonAccount }],
    'workload-low',
  );
  const applied = kubectl(cluster.layout, ['apply', '-f', '-'], JSON.stringify(schema));
  if (!applied.ok) throw new Error(`FlowSchema ${FLOW_SCHEMA}: ${applied.out}`);
  context.defer(() => kubectl(cluster.layout, ['delete', '--ignore-not-found', 'flowschema', FLOW_SCHEMA]));
}

/** Requests of the kruise-daemon ServiceAccount the API server has dispatched (APF's counter of our FlowSchema). */
export function serverRequests(cluster: RealCluster): Promise<number> {
  return dispatchedRequests(cluster, FLOW_SCHEMA);
}
