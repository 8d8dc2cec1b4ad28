// The second half of the side-by-side bench runs on a full node: MAX_PODS pods on it (kubelet's maxPods, as
// test/cluster/k8s/nodes.ts configures the nodes), all running before either agent starts. Among them, for each
// agent, its own pods to act on (each container is restarted once in a run: kubelet's crash-loop backoff would
// hold a second restart of the same container within 10 min, docs/kubelet-behaviours.md):
// - CRR_PODS pods of CRR_CONTAINERS containers (crr.ts),
// - ENV_PODS pods of one container with an env var from an annotation (env-restart.ts);
// the rest are pods of the pause test image.
import { IN_PLACE_UPDATE_READY_CONDITION, SIDECARSET_HASH_ANNOTATION } from '../../../src/api/constants.js';
import type { WirePod } from '../../../src/api/wire.js';
import { CoreResources } from '../../../src/kube/resource.js';
import { rssMiB } from '../../component/daemon/agent-process.js';
import type { PodObject } from '../../e2e/containerrecreate/stack.js';
import type { RealCluster } from '../../support/real-cluster.js';
import { deleteTestNamespace, ensureNamespace, waitForDefaultServiceAccount } from '../../support/test-namespace.js';
import { waitFor } from '../../support/wait.js';
import type { BenchContext } from '../framework.js';
import { sampleLoad, sleep, type AgentUnderTest, type Side } from './agents.js';
import { SETTLE_MS } from './idle-and-tags.js';

/** kubelet's maxPods on the test nodes (test/cluster/k8s/nodes.ts), Kubernetes' default. */
export const MAX_PODS = 110;
export const NAMESPACE = 'kd-bench-side-by-side';
export const CRR_PODS = 10;
export const CRR_CONTAINERS = 10;
export const ENV_PODS = 5;
/** The annotation the env pods' variable comes from. */
export const ENV_ANNOTATION = 'bench.kruise.io/value';
export const ENV_VAR = 'BENCH_VALUE';
/** PID 1 that exits at once on SIGTERM (a `wait` is interrupted by the trap, a foreground `sleep` is not). */
const WAIT_FOREVER = ['sh', '-c', 'trap "exit 0" TERM; while :; do sleep 3600 & wait $!; done'];
const GRACE_SECONDS = 2;

export const crrPodName = (side: Side, i: number): string => `crr-${side}-${i}`;
export const envPodName = (side: Side, i: number): string => `env-${side}-${i}`;

function pod(name: string, node: string, spec: Partial<NonNullable<WirePod['spec']>>, meta = {}): PodObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NAMESPACE, ...meta },
    spec: { nodeName: node, terminationGracePeriodSeconds: GRACE_SECONDS, containers: [], ...spec },
  };
}

function podsOf(cluster: RealCluster, node: string, fillers: number): PodObject[] {
  const busybox = cluster.images.busybox1;
  const pods: PodObject[] = [];
  for (const side of ['ours', 'openkruise'] as const) {
    for (let i = 0; i < CRR_PODS; i++) {
      const containers = Array.from({ length: CRR_CONTAINERS }, (_, c) => ({
        name: `c${c}`,
        image: busybox,
        command: WAIT_FOREVER,
      }));
      pods.push(pod(crrPodName(side, i), node, { containers }));
    }
    for (let i = 0; i < ENV_PODS; i++) {
      const env = [
        { name: ENV_VAR, valueFrom: { fieldRef: { fieldPath: `metadata.annotations['${ENV_ANNOTATION}']` } } },
      ];
      pods.push(
        pod(
          envPodName(side, i),
          node,
          {
            containers: [{ name: 'app', image: busybox, command: WAIT_FOREVER, env }],
            // as a CloneSet's pods: the in-place update's readiness gate
            readinessGates: [{ conditionType: IN_PLACE_UPDATE_READY_CONDITION }],
          },
          // OpenKruise's daemon keeps container meta only for pods of its workloads or SidecarSet-injected ones
          { annotations: { [ENV_ANNOTATION]: 'v0', [SIDECARSET_HASH_ANNOTATION]: '{}' } },
        ),
      );
    }
  }
  for (let i = 0; i < fillers; i++) {
    pods.push(pod(`fill-${i}`, node, { containers: [{ name: 'pause', image: cluster.vars.SANDBOX_IMAGE ?? '' }] }));
  }
  return pods;
}

function running(p: WirePod): boolean {
  const statuses = p.status?.containerStatuses ?? [];
  return statuses.length === (p.spec?.containers.length ?? 0) && statuses.every((s) => s.ready && s.state?.running);
}

/** The bench's pods of an earlier run gone from the node (their namespace is deleted at a run's end, not waited for). */
export async function withoutBenchPods(context: BenchContext, cluster: RealCluster): Promise<void> {
  context.log(`waiting for namespace ${NAMESPACE} of an earlier run to be gone`);
  await deleteTestNamespace(cluster.admin, NAMESPACE, { waitMs: 300_000 });
}

/** Fill `node` up to MAX_PODS pods and wait until every container of them runs; deleted by the suite's cleanups. */
export async function fillNode(context: BenchContext, cluster: RealCluster, node: string): Promise<void> {
  const client = cluster.admin;
  await withoutBenchPods(context, cluster);
  await ensureNamespace(client, NAMESPACE);
  context.defer(() => deleteTestNamespace(client, NAMESPACE));
  await waitForDefaultServiceAccount(client, NAMESPACE);
  const others = (await client.list<WirePod>(CoreResources.pods, { fieldSelector: `spec.nodeName=${node}` })).items;
  const own = 2 * (CRR_PODS + ENV_PODS);
  const fillers = MAX_PODS - others.length - own;
  if (fillers < 0) throw new Error(`${node} already has ${others.length} pods: no room for ${own} more`);
  const pods = podsOf(cluster, node, fillers);
  context.log(`filling ${node} to ${MAX_PODS} pods: ${others.length} there, ${pods.length} created`);
  const started = performance.now();
  await Promise.all(pods.map((p) => client.create(CoreResources.pods, p, { namespace: NAMESPACE })));
  let last = 0;
  await waitFor(
    async () => {
      const listed = (await client.list<WirePod>(CoreResources.pods, { namespace: NAMESPACE })).items;
      last = listed.filter(running).length;
      return last === pods.length;
    },
    { timeoutMs: 15 * 60_000, intervalMs: 2000, message: `${pods.length} pods running on ${node} (last: ${last})` },
  );
  const total = (await client.list<WirePod>(CoreResources.pods, { fieldSelector: `spec.nodeName=${node}` })).items;
  context.log(
    `${total.length} pods on ${node}, all running after ${Math.round((performance.now() - started) / 1000)} s`,
  );
  sampleLoad();
}

/** The agent's RSS once it has settled with the full node (SETTLE_MS after ready). */
export async function rssWithPods(context: BenchContext, agent: AgentUnderTest): Promise<number> {
  context.log(`${agent.side}: settling ${SETTLE_MS / 1000} s with ${MAX_PODS} pods on the node`);
  await sleep(SETTLE_MS);
  return rssMiB(agent.pid);
}
