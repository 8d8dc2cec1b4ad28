// Env from metadata changed -> container restarted, for one agent, on its ENV_PODS pods of the full node (one
// change per pod, one after another). OpenKruise's kruise-daemon does this alone, without its manager, for a pod
// that (pkg/daemon/containermeta/container_meta_controller.go):
// - is owned by an apps.kruise.io workload or carries kruise.io/sidecarset-hash (eventFilter): the bench's pods carry
//   the annotation (no CloneSet is served here);
// - has its container meta recorded in apps.kruise.io/runtime-containers-meta with the env hash the running
//   container was read with (manageContainerMetaSet): it records it only on a pod update, never for a pod it first
//   sees on its list (AddFunc), so the bench touches each pod (a label) and waits for the hash;
// - has the condition InPlaceUpdateReady False, which OpenKruise's manager sets when an in-place update begins: the
//   bench sets it (pods/status), then changes the annotation the container's env comes from.
// Ours needs the same two writes. Per pod: the annotation write's response -> the old container's exit (containerd's event)
// and -> a new container running in the pod's status (the bench's watch cache), and the new container's env checked.
import { IN_PLACE_UPDATE_READY_CONDITION, RUNTIME_CONTAINERS_META_ANNOTATION } from '../../../src/api/constants.js';
import { parseRuntimeContainerMetaSet } from '../../../src/api/runtime-container-meta.js';
import type { WirePod } from '../../../src/api/wire.js';
import type { CriClient } from '../../../src/cri/client.js';
import type { KubeClient } from '../../../src/kube/client.js';
import { CoreResources } from '../../../src/kube/resource.js';
import { bareId } from '../../e2e/containerrecreate/stack.js';
import { waitFor } from '../../support/wait.js';
import type { BenchContext } from '../framework.js';
import type { Pair } from '../side-by-side.js';
import { percentile } from '../stats.js';
import { sampleLoad, type AgentUnderTest } from './agents.js';
import { benchCaches, type BenchCaches } from './bench-caches.js';
import type { ContainerExits } from './container-exits.js';
import { ENV_ANNOTATION, ENV_PODS, ENV_VAR, envPodName, NAMESPACE } from './full-node.js';

export interface EnvRestartTimes {
  toStop: number[];
  toRunning: number[];
}

const appStatus = (pod: WirePod | undefined) => pod?.status?.containerStatuses?.find((s) => s.name === 'app');

/** The agent has recorded the env hash of the running container (it will compare the next values with it). */
function metaRecorded(pod: WirePod | undefined): boolean {
  const id = appStatus(pod)?.containerID;
  const meta = parseRuntimeContainerMetaSet(pod?.metadata?.annotations?.[RUNTIME_CONTAINERS_META_ANNOTATION]);
  return Boolean(id && meta?.containers.some((c) => c.containerID === id && c.hashes.extractedEnvFromMetadataHash));
}

async function oneChange(
  client: KubeClient,
  caches: BenchCaches,
  cri: CriClient,
  exits: ContainerExits,
  podName: string,
  side: string,
  times: EnvRestartTimes,
): Promise<void> {
  const patchPod = (patch: object, subresource?: 'status'): Promise<unknown> =>
    client.patch(CoreResources.pods, podName, patch, {
      type: 'strategic',
      namespace: NAMESPACE,
      ...(subresource ? { subresource } : {}),
    });
  await patchPod({ metadata: { labels: { 'bench.kruise.io/touched-by': side } } });
  await waitFor(() => metaRecorded(caches.pod(podName)), {
    timeoutMs: 60_000,
    intervalMs: 50,
    message: `${side}: the env hash of ${podName} recorded in ${RUNTIME_CONTAINERS_META_ANNOTATION}`,
  });
  const old = appStatus(caches.pod(podName))?.containerID ?? '';
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const condition = { type: IN_PLACE_UPDATE_READY_CONDITION, status: 'False', lastTransitionTime: now };
  await patchPod({ status: { conditions: [condition] } }, 'status');
  const value = `v1-${side}`;
  await patchPod({ metadata: { annotations: { [ENV_ANNOTATION]: value } } });
  const changed = Date.now();
  const fresh = await waitFor(
    () => {
      const status = appStatus(caches.pod(podName));
      return status?.containerID && status.containerID !== old && status.state?.running
        ? status.containerID
        : undefined;
    },
    { timeoutMs: 120_000, intervalMs: 10, message: `${side}: ${podName} restarted with the new env` },
  );
  times.toRunning.push(Date.now() - changed);
  times.toStop.push((await exits.exitedAt(old)) - changed);
  const env = await cri.execSync({ container_id: bareId(fresh), cmd: ['sh', '-c', `echo $${ENV_VAR}`], timeout: 10 });
  if (env.stdout.toString().trim() !== value) {
    throw new Error(`${podName}: the new container has ${ENV_VAR}=${env.stdout.toString().trim()}, not ${value}`);
  }
}

export async function measureEnvRestarts(
  context: BenchContext,
  client: KubeClient,
  cri: CriClient,
  exits: ContainerExits,
  agent: AgentUnderTest,
): Promise<EnvRestartTimes> {
  const caches = await benchCaches(client, NAMESPACE);
  const times: EnvRestartTimes = { toStop: [], toRunning: [] };
  try {
    for (let i = 0; i < ENV_PODS; i++) {
      await oneChange(client, caches, cri, exits, envPodName(agent.side, i), agent.side, times);
      context.log(
        `${agent.side}: env change ${i + 1} of ${ENV_PODS}: stopped after ${Math.round(times.toStop.at(-1)!)} ms, ` +
          `running after ${Math.round(times.toRunning.at(-1)!)} ms`,
      );
    }
  } finally {
    await caches.stop();
  }
  sampleLoad();
  return times;
}

export function envRestartPairs(ours: EnvRestartTimes, theirs: EnvRestartTimes): Pair[] {
  const rounds = (s: number[]): string => s.map(Math.round).join(', ');
  return [
    {
      name: 'envChange.toStop',
      unit: 'ms',
      ours: percentile(ours.toStop, 50),
      theirs: percentile(theirs.toStop, 50),
      note:
        `annotation write -> old container's exit (containerd's event), InPlaceUpdateReady False first, median of ${ENV_PODS}; ` +
        `ours ${rounds(ours.toStop)}; OpenKruise ${rounds(theirs.toStop)}`,
    },
    {
      name: 'envChange.toRunning',
      unit: 'ms',
      ours: percentile(ours.toRunning, 50),
      theirs: percentile(theirs.toRunning, 50),
      note: `annotation write -> a new container running in the pod's status, its env checked; ours ${rounds(ours.toRunning)}; OpenKruise ${rounds(theirs.toRunning)}`,
    },
  ];
}
