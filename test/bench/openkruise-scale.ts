// `npm run bench -- openkruise-scale`: our kruise-controller beside OpenKruise's kruise-manager at scale, on the real
// local cluster (kube-apiserver v1.33), one controller at a time against the same nodes. SCALE_NODES fake Nodes
// (default 1,000) are kept Ready by KWOK (test/cluster/kwok/kwok.ts: node leases, so kube-controller-manager's node
// lifecycle runs as with kubelets and taints none of them); their NodeImages are answered by the agent double
// (test/support/fake-agent.ts: one watch for every NodeImage, each tag Succeeded AGENT_DELAY_MS after it is seen).
// For each controller:
// - start -> every fake node has its NodeImage (the controller makes them; both with --nodeimage-creation-delay
//   CREATION_DELAY);
// - one ImagePullJob on every fake node (parallelism PARALLELISM): created -> completionTime with succeeded = nodes;
//   the controller's API requests per node (kube-apiserver's count: APF's dispatched requests of a FlowSchema that
//   matches the controller's user), its CPU seconds and RSS peak, its reconciles of ImagePullJobs;
// - OpenKruise's own worst report (kruise#2483: 198 ImagePullJobs, different tags of one image, on 989 nodes; its
//   controller at 887 reconciles/s and 95% CPU): SCALE_JOBS jobs (default 198) on every fake node, all at once
//   (parallelism = nodes), over a window of SCALE_WINDOW_S seconds (default 300) or until every job completes:
//   reconciles/s, CPU (% of one core), tags Succeeded per second, API requests per second, completion time (or, when
//   the window ends first, the time the rate so far needs for every tag);
// - then its jobs and the NodeImages are removed, so the next controller starts from the same nodes only.
// Each figure is printed for both and as ours/openkruise, then as a Markdown table (docs/openkruise-side-by-side.md).
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { IMAGE_PULL_JOBS, type ImagePullJob } from '../../src/api/imagepulljob.js';
import { NODE_IMAGES } from '../../src/api/nodeimage.js';
import type { KubeClient } from '../../src/kube/client.js';
import { isAlreadyExists, isNotFound } from '../../src/kube/errors.js';
import { CoreResources } from '../../src/kube/resource.js';
import type { KubeObject } from '../../src/kube/object.js';
import { KwokProcess, kwokBuild, FAKE_NODE_LABEL } from '../cluster/kwok/kwok.js';
import { kubectl, serviceAccountKubeconfig, SYSTEM_NAMESPACE } from '../cluster/k8s/system.js';
import { OpenKruiseManagerProcess } from '../cluster/openkruise/manager-process.js';
import { openKruiseBuild, type OpenKruiseBuild } from '../cluster/openkruise/openkruise.js';
import { cpuSeconds, rssMiB } from '../component/daemon/agent-process.js';
import { DEPLOYMENT_LEASE_ARGS } from '../e2e/controller/controller-process.js';
import { FakeAgent } from '../support/fake-agent.js';
import { agentCounter } from '../support/nodeimages.js';
import { startSystem, useRealCluster, type RealCluster } from '../support/real-cluster.js';
import { waitFor } from '../support/wait.js';
import { benchFlowSchema, dispatchedRequests } from './flow-schema.js';
import type { BenchContext, BenchSuite, Figure } from './framework.js';
import { AGENT_DELAY_MS, PARALLELISM } from './scale.js';
import { markdownTable, sideBySide, type Pair } from './side-by-side.js';

const NODES = Number(process.env.SCALE_NODES ?? 1000);
const JOBS = Number(process.env.SCALE_JOBS ?? 198);
const WINDOW_MS = Number(process.env.SCALE_WINDOW_S ?? 300) * 1000;
/** Both controllers' --nodeimage-creation-delay (OpenKruise's default and ours is 30 s; KWOK's nodes are long Ready). */
export const CREATION_DELAY = '1s';
const NODE_PREFIX = 'kwok-node-';
const NAMESPACE = 'default';
const ONE_JOB_IMAGE = 'registry.invalid/scale/one:1';
const MANY_JOBS_IMAGE = 'registry.invalid/scale/many';
/** Matches every request of the controller under test, so the API server counts them apart. */
const FLOW_SCHEMA = 'kd-bench-controller';

/** A controller process under test. */
export interface ControllerUnderTest {
  pid: number;
  /** performance.now() when its process was spawned (after any API objects it needs were swapped in). */
  spawnedAt: number;
  /** Its ImagePullJob reconciles so far (ours: kruise_controller_reconciles_total, its: controller_runtime_...). */
  reconciles(): Promise<number>;
  stop(): Promise<unknown>;
}

interface SideFigures {
  nodeImagesMs: number;
  rssIdle: number;
  oneJobMs: number;
  oneJobRequestsPerNode: number;
  oneJobCpuS: number;
  oneJobReconciles: number;
  oneJobRssPeak: number;
  manyReconcilesPerS: number;
  manyCpuPercent: number;
  manyTagsPerS: number;
  manyRequestsPerS: number;
  /** Every job completed in the window: the time; else the rate's estimate (completed false; Infinity at 0 done). */
  manyCompletionS: number;
  manyCompleted: boolean;
  manyTagsDone: number;
  /** Tags the agent double saw in NodeImage specs during the window (handed out by the controller). */
  manyTagsDelivered: number;
  manyRssPeak: number;
}

const loads: number[] = [];
const sampleLoad = (): void => void loads.push(loadavg()[0]!);

const nodeName = (i: number): string => `${NODE_PREFIX}${String(i).padStart(5, '0')}`;

/** Run `task` on each item, `concurrency` at a time. */
async function eachLimited<T>(
  items: readonly T[],
  concurrency: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) await task(item);
    }),
  );
}

/** Requests of the controller under test that the API server has dispatched. */
function serverRequests(cluster: RealCluster): Promise<number> {
  return dispatchedRequests(cluster, FLOW_SCHEMA);
}

/** One request removing a collection (deletecollection), e.g. every NodeImage. */
async function deleteCollection(client: KubeClient, path: string): Promise<void> {
  const res = await client.transport.request({ method: 'DELETE', path });
  if (res.status !== 200) throw new Error(`DELETE ${path}: ${res.status} ${res.body.slice(0, 300)}`);
}

/**
 * Remove the fake Nodes and their Leases, and wait until no Lease is left: kwok starting while the garbage collector
 * still holds a Lease of an earlier Node of the same name keeps that stale Lease and never renews or initialises the
 * new Node (seen at 5,000 nodes: "Precondition failed: UID in precondition: ..., UID in object meta: ").
 */
async function removeFakeNodes(client: KubeClient): Promise<void> {
  await deleteCollection(client, `/api/v1/nodes?labelSelector=${FAKE_NODE_LABEL.key}%3D${FAKE_NODE_LABEL.value}`);
  const leases = async (): Promise<string[]> =>
    (await client.listAll(CoreResources.leases, { namespace: 'kube-node-lease' })).items
      .map((lease) => lease.metadata?.name ?? '')
      .filter((name) => name.startsWith(NODE_PREFIX));
  await eachLimited(await leases(), 16, async (name) => {
    await client.delete(CoreResources.leases, name, { namespace: 'kube-node-lease' }).catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
  });
  await waitFor(async () => (await leases()).length === 0, {
    timeoutMs: 120_000,
    intervalMs: 1000,
    message: "the fake nodes' Leases removed",
  });
}

async function createFakeNodes(context: BenchContext, cluster: RealCluster): Promise<void> {
  const names = Array.from({ length: NODES }, (_, i) => nodeName(i));
  context.log(
    `creating ${NODES} Nodes labelled ${FAKE_NODE_LABEL.key}=${FAKE_NODE_LABEL.value} (KWOK makes them Ready)`,
  );
  await eachLimited(names, 16, async (name) => {
    try {
      await cluster.admin.create(CoreResources.nodes, {
        metadata: { name, labels: { [FAKE_NODE_LABEL.key]: FAKE_NODE_LABEL.value } },
        // no pod of the real cluster is scheduled there
        spec: { taints: [{ key: 'kwok.x-k8s.io/node', value: 'fake', effect: 'NoSchedule' }] },
      });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
  });
}

const BENCH_LABEL = 'kd-bench';

function imagePullJob(name: string, image: string, parallelism: number, scenario: string): ImagePullJob {
  return {
    metadata: { name, namespace: NAMESPACE, labels: { [BENCH_LABEL]: scenario } },
    spec: {
      image,
      parallelism,
      selector: { matchLabels: { [FAKE_NODE_LABEL.key]: FAKE_NODE_LABEL.value } },
      completionPolicy: { type: 'Always' },
      pullPolicy: { timeoutSeconds: 600, backoffLimit: 1 },
    },
  };
}

async function listJobs(client: KubeClient, scenario: string): Promise<ImagePullJob[]> {
  return (
    await client.list<ImagePullJob>(IMAGE_PULL_JOBS, {
      namespace: NAMESPACE,
      labelSelector: `${BENCH_LABEL}=${scenario}`,
    })
  ).items;
}

/** The controller's RSS every 250 ms, for the peak of a phase. */
class RssSampler {
  private samples: number[] = [];
  private readonly timer: NodeJS.Timeout;
  constructor(private readonly pid: number) {
    this.timer = setInterval(() => this.sample(), 250);
  }
  private sample(): void {
    try {
      this.samples.push(rssMiB(this.pid));
    } catch {
      // process gone
    }
  }
  /** The peak since the last call, and start again. */
  takePeak(): number {
    this.sample();
    const peak = Math.max(...this.samples);
    this.samples = [];
    return peak;
  }
  stop(): void {
    clearInterval(this.timer);
  }
}

/**
 * Remove what one controller left (its jobs, the NodeImages), with it stopped: the jobs' finalizers are dropped by
 * hand (ours keeps one until it has released the job's pull-secret copies; none here).
 */
async function removeLeftovers(cluster: RealCluster, agent: FakeAgent): Promise<void> {
  const client = cluster.admin;
  for (const job of (await client.list<ImagePullJob>(IMAGE_PULL_JOBS, { namespace: NAMESPACE })).items) {
    if ((job.metadata.finalizers ?? []).length === 0) continue;
    await client.patch(
      IMAGE_PULL_JOBS,
      job.metadata.name!,
      { metadata: { finalizers: null } },
      {
        namespace: NAMESPACE,
        type: 'merge',
      },
    );
  }
  const group = `/apis/${IMAGE_PULL_JOBS.group}/${IMAGE_PULL_JOBS.version}`;
  await deleteCollection(client, `${group}/namespaces/${NAMESPACE}/${IMAGE_PULL_JOBS.resource}`);
  await deleteCollection(client, `/apis/${NODE_IMAGES.group}/${NODE_IMAGES.version}/${NODE_IMAGES.resource}`);
  await waitFor(() => agent.servedNodeImages === 0, {
    timeoutMs: 300_000,
    intervalMs: 200,
    message: 'every NodeImage removed',
  });
}

/** One controller through the whole workload; stopped at the end (also on failure), its leftovers removed. */
async function measure(
  context: BenchContext,
  cluster: RealCluster,
  agent: FakeAgent,
  label: string,
  start: () => Promise<ControllerUnderTest>,
): Promise<SideFigures> {
  const { log } = context;
  const client = cluster.admin;
  const controller = await start();
  let stopped: Promise<unknown> | undefined;
  const stop = (): Promise<unknown> => (stopped ??= controller.stop());
  context.defer(stop); // also on SIGINT, when this function's finally does not run
  const started = controller.spawnedAt;
  const rss = new RssSampler(controller.pid);
  try {
    await waitFor(() => agent.servedNodeImages >= NODES, {
      timeoutMs: 600_000,
      intervalMs: 100,
      message: `${label}: ${NODES} NodeImages`,
    });
    const nodeImagesMs = performance.now() - started;
    const rssIdle = rssMiB(controller.pid);
    rss.takePeak();
    sampleLoad();
    log(`${label}: ${NODES} NodeImages after ${Math.round(nodeImagesMs)} ms; RSS ${rssIdle.toFixed(0)} MiB`);

    // one job on every node
    let requests = await serverRequests(cluster);
    let cpu = cpuSeconds(controller.pid);
    let reconciles = await controller.reconciles();
    let t0 = performance.now();
    await client.create(IMAGE_PULL_JOBS, imagePullJob('scale-one', ONE_JOB_IMAGE, PARALLELISM, 'one'));
    await waitFor(
      async () => {
        const [job] = await listJobs(client, 'one');
        return job?.status?.completionTime && job.status.succeeded === NODES;
      },
      { timeoutMs: 900_000, intervalMs: 250, message: `${label}: the job on ${NODES} nodes to complete` },
    );
    const oneJobMs = performance.now() - t0;
    const oneJobRequestsPerNode = ((await serverRequests(cluster)) - requests) / NODES;
    const oneJobCpuS = cpuSeconds(controller.pid) - cpu;
    const oneJobReconciles = (await controller.reconciles()) - reconciles;
    const oneJobRssPeak = rss.takePeak();
    sampleLoad();
    log(`${label}: one job on ${NODES} nodes completed in ${Math.round(oneJobMs)} ms, ${oneJobCpuS.toFixed(1)} s CPU`);

    // kruise#2483: many jobs, different tags of one image, every node, all at once
    const tags = JOBS * NODES;
    const seenBefore = agent.tagsSeen;
    requests = await serverRequests(cluster);
    cpu = cpuSeconds(controller.pid);
    reconciles = await controller.reconciles();
    t0 = performance.now();
    const names = Array.from({ length: JOBS }, (_, i) => String(i).padStart(3, '0'));
    await eachLimited(names, 8, async (n) => {
      await client.create(IMAGE_PULL_JOBS, imagePullJob(`scale-many-${n}`, `${MANY_JOBS_IMAGE}:t${n}`, NODES, 'many'));
    });
    log(`${label}: ${JOBS} jobs created in ${Math.round(performance.now() - t0)} ms; window ${WINDOW_MS / 1000} s`);
    let done = 0;
    let completed = false;
    let lastLog = performance.now();
    while (performance.now() - t0 < WINDOW_MS) {
      const jobs = await listJobs(client, 'many');
      done = jobs.reduce((sum, job) => sum + (job.status?.succeeded ?? 0), 0);
      completed = jobs.length === JOBS && jobs.every((job) => job.status?.completionTime);
      if (completed) break;
      if (performance.now() - lastLog > 30_000) {
        lastLog = performance.now();
        const handed = agent.tagsSeen - seenBefore;
        const after = Math.round((lastLog - t0) / 1000);
        log(`${label}: ${handed} of ${tags} tags handed out, ${done} Succeeded in the jobs' status after ${after} s`);
      }
      await new Promise((resolve) => setTimeout(resolve, 1000)); // the poll interval of a bounded window
    }
    const windowS = (performance.now() - t0) / 1000;
    const delivered = agent.tagsSeen - seenBefore;
    const figures: SideFigures = {
      nodeImagesMs,
      rssIdle,
      oneJobMs,
      oneJobRequestsPerNode,
      oneJobCpuS,
      oneJobReconciles,
      oneJobRssPeak,
      manyReconcilesPerS: ((await controller.reconciles()) - reconciles) / windowS,
      manyCpuPercent: ((cpuSeconds(controller.pid) - cpu) / windowS) * 100,
      manyTagsPerS: delivered / windowS,
      manyRequestsPerS: ((await serverRequests(cluster)) - requests) / windowS,
      // not completed: the time the controller needs to hand every tag out at its rate in the window (a lower bound)
      manyCompletionS: completed ? windowS : (tags * windowS) / delivered, // Infinity when nothing was handed out
      manyCompleted: completed,
      manyTagsDone: done,
      manyTagsDelivered: delivered,
      manyRssPeak: rss.takePeak(),
    };
    sampleLoad();
    log(
      `${label}: ${JOBS} jobs: ${delivered} of ${tags} tags handed out, ${done} Succeeded in the jobs' status in ` +
        `${windowS.toFixed(0)} s` +
        `${completed ? ' (all completed)' : ''}; ${figures.manyReconcilesPerS.toFixed(1)} reconciles/s, ` +
        `${figures.manyCpuPercent.toFixed(0)}% CPU`,
    );
    return figures;
  } finally {
    rss.stop();
    await stop();
    log(`${label}: stopped; removing its jobs and the NodeImages`);
    await removeLeftovers(cluster, agent);
  }
}

/** Our kruise-controller on the host as deploy/ runs it (startSystem), with the Deployment's lease timings. */
async function startOurs(cluster: RealCluster): Promise<ControllerUnderTest> {
  const spawnedAt = performance.now();
  const system = await startSystem(cluster, {
    nodes: [],
    controllerArgs: ['--nodeimage-creation-delay', CREATION_DELAY, ...DEPLOYMENT_LEASE_ARGS],
  });
  const controller = system.controller!;
  const metrics = `http://${cluster.layout.hostIp}:${controller.options.statusPort}`;
  return {
    pid: controller.child.pid!,
    spawnedAt,
    reconciles: () => agentCounter(metrics, 'kruise_controller_reconciles_total', { controller: 'imagepulljob' }),
    stop: () => system.stop(),
  };
}

/** The identity OpenKruise's manager runs as here: cluster-admin rights, a user of its own for the FlowSchema. */
const MANAGER_ACCOUNT = 'kd-bench-openkruise-manager';

function managerAccountObjects(): object {
  return {
    apiVersion: 'v1',
    kind: 'List',
    items: [
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: MANAGER_ACCOUNT, namespace: SYSTEM_NAMESPACE } },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: MANAGER_ACCOUNT },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
        subjects: [{ kind: 'ServiceAccount', name: MANAGER_ACCOUNT, namespace: SYSTEM_NAMESPACE }],
      },
    ],
  };
}

/**
 * OpenKruise's kruise-manager on the host (manager-process.ts: its CRDs swapped in over ours, its webhooks), with
 * its Deployment's feature gates and default workers (3 per controller), our --nodeimage-creation-delay.
 */
async function startTheirs(
  cluster: RealCluster,
  build: OpenKruiseBuild,
  kubeconfig: string,
): Promise<ControllerUnderTest> {
  const manager = await OpenKruiseManagerProcess.start({
    build,
    layout: cluster.layout,
    kubeconfig,
    extraArgs: [`--nodeimage-creation-delay=${CREATION_DELAY}`],
  });
  const spawnedAt = performance.now();
  try {
    await waitFor(() => manager.ready(), { timeoutMs: 120_000, intervalMs: 200, message: 'kruise-manager /readyz' });
  } catch (err) {
    await manager.stop();
    throw err;
  }
  const metrics = `http://127.0.0.1:${manager.ports.metrics}`;
  return {
    pid: manager.pid,
    spawnedAt,
    reconciles: () =>
      agentCounter(metrics, 'controller_runtime_reconcile_total', {
        controller: 'imagepulljob-controller',
      }),
    stop: () => manager.stop(),
  };
}

export const openKruiseScaleSuite: BenchSuite = {
  name: 'openkruise-scale',
  description: `ours vs OpenKruise's kruise-manager on ${NODES} KWOK nodes: one ImagePullJob, then ${JOBS} at once (kruise#2483)`,
  inDefaultRun: false,
  async run(context) {
    const { log } = context;
    loads.length = 0;
    const kwok = await kwokBuild(log);
    const build = await openKruiseBuild(log);
    log('the real cluster (REAL_CLUSTER_DIR)');
    const cluster = await useRealCluster();
    const client = cluster.admin;

    await removeFakeNodes(client); // an earlier run's, if it died
    await createFakeNodes(context, cluster);
    context.defer(async () => {
      log(`removing the ${NODES} fake Nodes and their Leases`);
      await removeFakeNodes(client);
    });
    const kwokProcess = KwokProcess.start(kwok, cluster.adminKubeconfig, join(cluster.layout.logDir, 'kwok.log'));
    context.defer(() => kwokProcess.stop());
    const readyStarted = performance.now();
    await waitFor(
      async () => {
        kwokProcess.assertRunning();
        const nodes = await client.listAll<
          { status?: { conditions?: { type: string; status: string }[] } } & KubeObject
        >(CoreResources.nodes, { labelSelector: `${FAKE_NODE_LABEL.key}=${FAKE_NODE_LABEL.value}` });
        const ready = nodes.items.filter((n) =>
          n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
        );
        return ready.length >= NODES;
      },
      { timeoutMs: 600_000, intervalMs: 2000, message: `${NODES} fake Nodes Ready` },
    );
    log(`${NODES} fake Nodes Ready ${Math.round(performance.now() - readyStarted)} ms after kwok started`);

    const agent = new FakeAgent({
      client,
      serves: (name) => name.startsWith(NODE_PREFIX),
      delayMs: AGENT_DELAY_MS,
      workers: 32,
    });
    await agent.start();
    context.defer(() => agent.stop());
    // the CRDs were applied just now (useRealCluster): their storage answers 429 while it initialises
    await waitFor(() => client.list(IMAGE_PULL_JOBS, { namespace: NAMESPACE, limit: 1 }).then(() => true), {
      timeoutMs: 60_000,
      intervalMs: 500,
      message: 'the ImagePullJob API to answer',
    });
    // an earlier run that died may have left jobs and NodeImages of another controller
    await removeLeftovers(cluster, agent);

    const accounts = kubectl(cluster.layout, ['apply', '-f', '-'], JSON.stringify(managerAccountObjects()));
    if (!accounts.ok) throw new Error(`${MANAGER_ACCOUNT}: ${accounts.out}`);
    context.defer(() =>
      kubectl(cluster.layout, ['delete', '--ignore-not-found', '-f', '-'], JSON.stringify(managerAccountObjects())),
    );
    const managerKubeconfig = serviceAccountKubeconfig(
      cluster.layout,
      SYSTEM_NAMESPACE,
      MANAGER_ACCOUNT,
      join(cluster.layout.k8sDir, 'credentials', `${MANAGER_ACCOUNT}.kubeconfig`),
    );
    const subjects = ['kruise-controller', MANAGER_ACCOUNT].map((name) => ({
      kind: 'ServiceAccount' as const,
      serviceAccount: { name, namespace: SYSTEM_NAMESPACE },
    }));
    const schema = benchFlowSchema(FLOW_SCHEMA, subjects, 'workload-high');
    const applied = kubectl(cluster.layout, ['apply', '-f', '-'], JSON.stringify(schema));
    if (!applied.ok) throw new Error(`FlowSchema ${FLOW_SCHEMA}: ${applied.out}`);
    context.defer(() => kubectl(cluster.layout, ['delete', '--ignore-not-found', 'flowschema', FLOW_SCHEMA]));

    log('ours');
    const ours = await measure(context, cluster, agent, 'ours', () => startOurs(cluster));
    log(`OpenKruise ${build.version}'s kruise-manager`);
    const theirs = await measure(context, cluster, agent, 'openkruise', () =>
      startTheirs(cluster, build, managerKubeconfig),
    );

    const pairs = figurePairs(ours, theirs);
    const load = `load average (1 min) ${Math.min(...loads).toFixed(1)} to ${Math.max(...loads).toFixed(1)}`;
    log(`side by side on ${NODES} KWOK nodes (${load}):\n${markdownTable(pairs)}`);
    const figures: Figure[] = [{ name: 'nodes', value: NODES, unit: 'count' }, ...pairs.flatMap(sideBySide)];
    figures.push({ name: 'machine.load1.max', value: Math.max(...loads), unit: 'load', note: load });
    return figures;
  },
};

function figurePairs(ours: SideFigures, theirs: SideFigures): Pair[] {
  const tags = JOBS * NODES;
  const window = (s: SideFigures): string =>
    s.manyCompleted ? 'completed' : "not completed: every tag handed out at the window's rate";
  return [
    {
      name: 'nodeImages.created',
      unit: 'ms',
      ours: ours.nodeImagesMs,
      theirs: theirs.nodeImagesMs,
      note: `controller start -> ${NODES} NodeImages (--nodeimage-creation-delay ${CREATION_DELAY})`,
    },
    { name: 'rss.withNodeImages', unit: 'MiB', ours: ours.rssIdle, theirs: theirs.rssIdle },
    {
      name: 'oneJob.completed',
      unit: 'ms',
      ours: ours.oneJobMs,
      theirs: theirs.oneJobMs,
      note: `one ImagePullJob on ${NODES} nodes, parallelism ${PARALLELISM}, agent answers after ${AGENT_DELAY_MS} ms`,
    },
    {
      name: 'oneJob.apiRequestsPerNode',
      unit: 'count',
      ours: ours.oneJobRequestsPerNode,
      theirs: theirs.oneJobRequestsPerNode,
      note: `kube-apiserver's count (APF dispatched, FlowSchema ${FLOW_SCHEMA})`,
    },
    { name: 'oneJob.cpu', unit: 's', ours: ours.oneJobCpuS, theirs: theirs.oneJobCpuS, note: 'utime + stime' },
    { name: 'oneJob.reconciles', unit: 'count', ours: ours.oneJobReconciles, theirs: theirs.oneJobReconciles },
    { name: 'oneJob.rssPeak', unit: 'MiB', ours: ours.oneJobRssPeak, theirs: theirs.oneJobRssPeak },
    {
      name: 'manyJobs.reconcilesPerSecond',
      unit: 'count',
      ours: ours.manyReconcilesPerS,
      theirs: theirs.manyReconcilesPerS,
      note: `${JOBS} ImagePullJobs (tags of one image) on ${NODES} nodes at once (kruise#2483: 887/s before its fix)`,
    },
    {
      name: 'manyJobs.cpuPercent',
      unit: '%',
      ours: ours.manyCpuPercent,
      theirs: theirs.manyCpuPercent,
      note: 'of one core, over the window (kruise#2483: 95%)',
    },
    {
      name: 'manyJobs.tagsHandedOutPerSecond',
      unit: 'count',
      ours: ours.manyTagsPerS,
      theirs: theirs.manyTagsPerS,
    },
    {
      name: 'manyJobs.tagsHandedOut',
      unit: 'count',
      ours: ours.manyTagsDelivered,
      theirs: theirs.manyTagsDelivered,
      note: `of ${tags}: tags the controller wrote to NodeImages in the window, as the agent double saw them`,
    },
    {
      name: 'manyJobs.tagsSucceeded',
      unit: 'count',
      ours: ours.manyTagsDone,
      theirs: theirs.manyTagsDone,
      note: `of ${tags}: the jobs' status.succeeded summed, at the end of the window (${WINDOW_MS / 1000} s)`,
    },
    // the time every job needs: measured when they completed in the window, else the rate so far says it (none
    // when a controller completed no tag at all)
    ...(Number.isFinite(ours.manyCompletionS) && Number.isFinite(theirs.manyCompletionS)
      ? [
          {
            name: 'manyJobs.completion',
            unit: 's',
            ours: ours.manyCompletionS,
            theirs: theirs.manyCompletionS,
            note: `ours ${window(ours)}; OpenKruise ${window(theirs)}`,
          },
        ]
      : []),
    {
      name: 'manyJobs.apiRequestsPerSecond',
      unit: 'count',
      ours: ours.manyRequestsPerS,
      theirs: theirs.manyRequestsPerS,
    },
    { name: 'manyJobs.rssPeak', unit: 'MiB', ours: ours.manyRssPeak, theirs: theirs.manyRssPeak },
  ];
}
