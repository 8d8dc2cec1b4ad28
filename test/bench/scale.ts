// emulator: 5,000 Nodes Ready without kubelets (node lifecycle would taint them) and requests counted per user agent
// The controller at scale: the API emulator with 5,000 Ready Nodes, kruise-controller as a real process creating
// their NodeImages, agents simulated by the fake agent (Succeeded after a short delay), then one ImagePullJob on all
// nodes with parallelism 500. Figures: NodeImage creation, fan-out (every node has the job's tag), aggregation (last
// agent report → job completed), the controller's RSS and its API requests (during the job, and at steady state).
import { cpuSeconds, rssMiB } from '../component/daemon/agent-process.js';
import { IMAGE_PULL_JOBS, type ImagePullJob } from '../../src/api/imagepulljob.js';
import { FakeAgent } from '../support/fake-agent.js';
import { waitFor } from '../support/wait.js';
import { createReadyNode, getJob, startControllerEnv } from '../e2e/controller/controller-env.js';
import { DEPLOYMENT_LEASE_ARGS } from '../e2e/controller/controller-process.js';
import type { BenchSuite, Figure } from './framework.js';

const NODES = Number(process.env.SCALE_NODES ?? 5000);
export const PARALLELISM = 500;
export const AGENT_DELAY_MS = 100;
const UA = 'kruise-controller';
const LEASES = '/apis/coordination.k8s.io/';

export const scaleSuite: BenchSuite = {
  name: 'scale',
  description: `kruise-controller with ${NODES} nodes: NodeImage creation, one ImagePullJob (parallelism ${PARALLELISM}) fan-out and aggregation, RSS, API requests`,
  inDefaultRun: false,
  async run(context) {
    const env = await startControllerEnv({ bookmarkIntervalMs: 30_000 });
    context.defer(() => env.close());
    context.log(`creating ${NODES} Ready Nodes`);
    const names = Array.from({ length: NODES }, (_, i) => `scale-node-${String(i).padStart(5, '0')}`);
    const queue = [...names];
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        for (let n = queue.shift(); n !== undefined; n = queue.shift())
          await createReadyNode(env.client, n, { pool: 'scale' });
      }),
    );
    const agent = new FakeAgent({ client: env.client, serves: () => true, delayMs: AGENT_DELAY_MS, workers: 32 });
    await agent.start();
    context.defer(() => agent.stop());

    const rss: number[] = [];
    let pid = 0;
    const sampler = setInterval(() => {
      try {
        if (pid) rss.push(rssMiB(pid));
      } catch {
        // process gone
      }
    }, 250);
    context.defer(() => clearInterval(sampler));

    const started = Date.now();
    const controller = await env.startController([
      '--nodeimage-creation-delay',
      '1s',
      ...DEPLOYMENT_LEASE_ARGS,
      ...(process.env.SCALE_NO_WEBHOOKS ? ['--disable-webhooks'] : []),
    ]);
    pid = controller.pid;
    await controller.leading(120_000);
    await waitFor(() => agent.nodeImages >= NODES, {
      timeoutMs: 300_000,
      intervalMs: 100,
      message: `${NODES} NodeImages`,
    });
    const nodeImagesMs = Date.now() - started;
    context.log(`${NODES} NodeImages after ${nodeImagesMs} ms; idle RSS ${rss.at(-1)?.toFixed(1)} MiB`);
    const rssBeforeJob = rss.at(-1) ?? 0;

    const requestsBefore = env.api.requestCount({ userAgent: UA });
    const writesBefore = env.api.requestCount({ userAgent: UA, method: 'PUT' });
    const cpuBefore = cpuSeconds(pid);
    const jobStarted = Date.now();
    await env.client.create<ImagePullJob>(IMAGE_PULL_JOBS, {
      metadata: { name: 'scale', namespace: 'default' },
      spec: { image: 'registry.invalid/scale/image:1', parallelism: PARALLELISM, completionPolicy: { type: 'Always' } },
    });
    await waitFor(() => agent.tagsSeen >= NODES, {
      timeoutMs: 600_000,
      intervalMs: 100,
      message: 'every node to get the tag',
    });
    const fanOutMs = Date.now() - jobStarted;
    context.log(`fan-out to ${NODES} nodes in ${fanOutMs} ms`);
    const done = await waitFor(
      async () => {
        const job = await getJob(env.client, 'default', 'scale');
        return job?.status?.completionTime && job.status.succeeded === NODES ? job : undefined;
      },
      { timeoutMs: 600_000, intervalMs: 50, message: 'the job to complete' },
    );
    const completedAt = Date.now();
    const aggregateMs = completedAt - agent.lastWriteAt;
    const jobRequests = env.api.requestCount({ userAgent: UA }) - requestsBefore;
    const jobWrites = env.api.requestCount({ userAgent: UA, method: 'PUT' }) - writesBefore;
    const rssPeak = Math.max(...rss);
    const jobCpu = cpuSeconds(pid) - cpuBefore;

    // steady state: nothing changes; count the controller's requests over a quiet window
    const quietStart = env.api.requestCount({ userAgent: UA });
    const quietLeaseStart = env.api.requestCount({ userAgent: UA, pathPrefix: LEASES });
    const quietMs = 20_000;
    await new Promise((resolve) => setTimeout(resolve, quietMs)); // a measurement window, not a wait for a condition
    const quietRequests = env.api.requestCount({ userAgent: UA }) - quietStart;
    const quietLease = env.api.requestCount({ userAgent: UA, pathPrefix: LEASES }) - quietLeaseStart;
    const rssSteady = rss.at(-1) ?? 0;

    const figures: Figure[] = [
      { name: 'nodes', value: NODES, unit: 'count' },
      {
        name: 'nodeImages.created',
        value: nodeImagesMs,
        unit: 'ms',
        note: 'controller start → every Node has its NodeImage',
      },
      {
        name: 'job.fanOut',
        value: fanOutMs,
        unit: 'ms',
        note: `job created → every node's NodeImage has the tag (parallelism ${PARALLELISM}, agent answers after ${AGENT_DELAY_MS} ms)`,
      },
      {
        name: 'job.completed',
        value: completedAt - jobStarted,
        unit: 'ms',
        note: `job created → completionTime with succeeded=${done.status?.succeeded}`,
      },
      {
        name: 'job.aggregate',
        value: aggregateMs,
        unit: 'ms',
        note: 'last agent status write → job seen completed (poll 50 ms)',
      },
      {
        name: 'job.apiRequests',
        value: jobRequests,
        unit: 'count',
        note: `controller requests during the job (${jobWrites} PUT)`,
      },
      {
        name: 'job.controllerCpu',
        value: jobCpu,
        unit: 's',
        note: 'user+system CPU of the controller process during the job',
      },
      {
        name: 'steady.apiRequestsPerMinute',
        value: ((quietRequests - quietLease) * 60_000) / quietMs,
        unit: 'count',
        note: `over ${quietMs / 1000} s after completion, besides the Lease and the open watches`,
      },
      {
        name: 'steady.leaseRequestsPerMinute',
        value: (quietLease * 60_000) / quietMs,
        unit: 'count',
        note: 'leader election (GET+PUT per 2 s renewal)',
      },
      { name: 'rss.idleWithNodeImages', value: rssBeforeJob, unit: 'MiB' },
      { name: 'rss.peak', value: rssPeak, unit: 'MiB' },
      { name: 'rss.steady', value: rssSteady, unit: 'MiB' },
      { name: 'agent.statusWrites', value: agent.writes, unit: 'count' },
    ];
    return figures;
  },
};
