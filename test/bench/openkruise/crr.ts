// ContainerRecreateRequests on the full node, for one agent: CRR_CONTAINERS rounds, each one CRR on every one of the
// agent's CRR_PODS pods at once, each for a container not restarted before (CRR_PODS x CRR_CONTAINERS CRRs, every
// container restarted once: no crash-loop backoff). Per CRR: the create response -> the old container's exit
// (containerd's /tasks/exit event, container-exits.ts: the runtime's clock of the stop, the same for both agents;
// the container exits at once on SIGTERM) and -> the CRR seen Completed in the bench's watch cache.
// No webhook runs: the bench writes what OpenKruise's CRR webhook (pkg/webhook/containerrecreaterequest/mutating/
// crr_mutating_handler.go) would fill: the labels node-name, pod-uid and active=true (the daemons select by
// node-name and active, and find the pod's containers by pod-uid), strategy.terminationGracePeriodSeconds and
// failurePolicy, and each container's statusContext (containerID and restartCount from the pod's status).
// While OpenKruise's daemon runs, manager-stand-in.ts writes the sync-container-statuses annotation its manager would.
import { CRR_ACTIVE_LABEL, CRR_NODE_NAME_LABEL, CRR_POD_UID_LABEL } from '../../../src/api/constants.js';
import {
  CONTAINER_RECREATE_REQUESTS,
  type ContainerRecreateRequest,
} from '../../../src/api/containerrecreaterequest.js';
import type { KubeClient } from '../../../src/kube/client.js';
import { waitFor } from '../../support/wait.js';
import type { BenchContext } from '../framework.js';
import type { Pair } from '../side-by-side.js';
import { percentile } from '../stats.js';
import { sampleLoad, type AgentUnderTest } from './agents.js';
import { benchCaches, type BenchCaches } from './bench-caches.js';
import type { ContainerExits } from './container-exits.js';
import { CRR_CONTAINERS, CRR_PODS, crrPodName, NAMESPACE } from './full-node.js';
import { startManagerStandIn } from './manager-stand-in.js';

const GRACE_SECONDS = 2;

export interface CrrTimes {
  toStop: number[];
  toCompleted: number[];
}

async function oneCrr(
  client: KubeClient,
  caches: BenchCaches,
  exits: ContainerExits,
  node: string,
  podName: string,
  container: string,
  times: CrrTimes,
): Promise<void> {
  const pod = caches.pod(podName);
  const status = pod?.status?.containerStatuses?.find((s) => s.name === container);
  if (!pod?.metadata?.uid || !status?.containerID) throw new Error(`${podName}/${container}: no running container`);
  const name = `${podName}-${container}`;
  const crr: ContainerRecreateRequest = {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'ContainerRecreateRequest',
    metadata: {
      name,
      namespace: NAMESPACE,
      labels: { [CRR_NODE_NAME_LABEL]: node, [CRR_POD_UID_LABEL]: pod.metadata.uid, [CRR_ACTIVE_LABEL]: 'true' },
    },
    spec: {
      podName,
      containers: [
        { name: container, statusContext: { containerID: status.containerID, restartCount: status.restartCount } },
      ],
      strategy: { terminationGracePeriodSeconds: GRACE_SECONDS, failurePolicy: 'Fail' },
    },
  };
  await client.create(CONTAINER_RECREATE_REQUESTS, crr, { namespace: NAMESPACE });
  const created = Date.now();
  const done = await waitFor(
    () => {
      const seen = caches.crr(name);
      return seen?.status?.phase === 'Completed' ? seen : undefined;
    },
    { timeoutMs: 120_000, intervalMs: 10, message: `CRR ${name} Completed` },
  );
  times.toCompleted.push(Date.now() - created);
  const state = done.status?.containerRecreateStates?.[0];
  if (state?.phase !== 'Succeeded') throw new Error(`CRR ${name} completed with ${JSON.stringify(done.status)}`);
  times.toStop.push((await exits.exitedAt(status.containerID)) - created);
}

export async function measureCrrs(
  context: BenchContext,
  client: KubeClient,
  exits: ContainerExits,
  node: string,
  agent: AgentUnderTest,
): Promise<CrrTimes> {
  const caches = await benchCaches(client, NAMESPACE);
  const stopStandIn = agent.side === 'openkruise' ? startManagerStandIn(client, caches, context.log) : undefined;
  const times: CrrTimes = { toStop: [], toCompleted: [] };
  try {
    for (let c = 0; c < CRR_CONTAINERS; c++) {
      await Promise.all(
        Array.from({ length: CRR_PODS }, (_, i) =>
          oneCrr(client, caches, exits, node, crrPodName(agent.side, i), `c${c}`, times),
        ),
      );
      context.log(`${agent.side}: CRR round ${c + 1} of ${CRR_CONTAINERS}: ${CRR_PODS} Completed`);
    }
  } finally {
    stopStandIn?.();
    await caches.stop();
  }
  sampleLoad();
  // the CRRs go before the CRD is swapped: neither agent meets the other's
  for (const crr of caches.crrs.list()) {
    await client.delete(CONTAINER_RECREATE_REQUESTS, crr.metadata.name ?? '', { namespace: NAMESPACE });
  }
  return times;
}

export function crrPairs(ours: CrrTimes, theirs: CrrTimes): Pair[] {
  const n = `${ours.toStop.length} CRRs, ${CRR_PODS} at a time (one per pod), each container once`;
  return [
    {
      name: 'crr.createdToStop.p50',
      unit: 'ms',
      ours: percentile(ours.toStop, 50),
      theirs: percentile(theirs.toStop, 50),
      note: `${n}; create response -> the old container's exit (containerd's event)`,
    },
    {
      name: 'crr.createdToStop.p99',
      unit: 'ms',
      ours: percentile(ours.toStop, 99),
      theirs: percentile(theirs.toStop, 99),
    },
    {
      name: 'crr.createdToCompleted.p50',
      unit: 'ms',
      ours: percentile(ours.toCompleted, 50),
      theirs: percentile(theirs.toCompleted, 50),
      note: `${n}; create response -> Completed seen on a watch; OpenKruise with the bench writing its manager's sync annotation`,
    },
    {
      name: 'crr.createdToCompleted.p99',
      unit: 'ms',
      ours: percentile(ours.toCompleted, 99),
      theirs: percentile(theirs.toCompleted, 99),
    },
  ];
}
