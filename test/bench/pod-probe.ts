// Custom probes at a node's full pod count, on the real local cluster (test/e2e/podprobe/stack.ts: kruise-controller on
// the host, an agent inside each node, the real kubelets): up to 110 pods on the first node (kubelet's maxPods, less
// the pods already there), each with one busybox container and a PodProbeMarker giving it 2 exec probes every
// PERIOD s (default 1). Figures:
// - the agent's CPU (% of one core) and RSS over a window with the pods and no marker, then the same window with the
//   probes running, on the same node in the same run; the difference is what the probes cost the agent; and the
//   agent's V8 heap (committed and used) and external memory at the highest RSS sample of each window (its /metrics);
// - what the agent achieved (its own counters, src/daemon/podprobe/metrics.ts): probe runs per second against those
//   asked, timeouts, the mean run and the mean wait for a run slot;
// - marker created -> every pod shows both conditions (s);
// - NodePodProbe status writes per minute (the agent's counter), spec writes and pod writes per minute (watches), at
//   steady state (no result changing) and while results change;
// - latency of a result change, from `rm`/`touch` of the probed file in the container (CRI ExecSync from here): to the
//   new state in the NodePodProbe status (includes the wait for the next tick: 0 to PERIOD s, and for a slot), to the
//   pod condition, and the part in between (status seen -> condition seen: the controller), p50/p99;
// - one exec: our CRI client's ExecSync (what the agent calls) against `crictl exec --sync` of the same command in the
//   same container, p50 and the ratio, measured with the marker deleted (a quiet node).
// PROBE_BENCH_PODS and PROBE_BENCH_PERIOD change the pod count and the period.
// PROBE_BENCH_AGENT_ARGS (words) and PROBE_BENCH_AGENT_ENV (a JSON object, e.g. {"NODE_OPTIONS":"..."}) are added
// to the agent's command line and environment, to compare settings.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { NODE_POD_PROBES, type NodePodProbe } from '../../src/api/nodepodprobe.js';
import { POD_PROBE_MARKERS } from '../../src/api/podprobemarker.js';
import type { WireNode } from '../../src/api/wire.js';
import type { KubeObject } from '../../src/kube/object.js';
import { CoreResources } from '../../src/kube/resource.js';
import type { WatchStream } from '../../src/kube/watch-stream.js';
import {
  POD_PROBE_RUN_DURATION,
  POD_PROBE_RUNS_TOTAL,
  POD_PROBE_SLOT_WAIT,
  POD_PROBE_STATUS_WRITES_TOTAL,
} from '../../src/daemon/podprobe/metrics.js';
import { binaryPathsOf } from '../cluster/k8s/binaries.js';
import { cpuSeconds, rssMiB } from '../component/daemon/agent-process.js';
import {
  conditionOf,
  execProbe,
  markerManifest,
  podProbesOfNamespace,
  runningPods,
  startProbeStack,
  type PodObject,
  type ProbeStack,
} from '../e2e/podprobe/stack.js';
import { agentCounter } from '../support/nodeimages.js';
import { waitFor } from '../support/wait.js';
import type { BenchSuite, Figure } from './framework.js';
import { p50p99, percentile, timeEach } from './stats.js';

const execFileP = promisify(execFile);

const WANTED_PODS = Number(process.env.PROBE_BENCH_PODS ?? 110);
const PERIOD_S = Number(process.env.PROBE_BENCH_PERIOD ?? 1);
const APP = 'probe-bench';
const MARKER = 'bench';
const READY_CONDITION = 'bench.kruise.io/ready';
const ALIVE_CONDITION = 'bench.kruise.io/alive';
/** `<marker>#<probe>`: the toggled probe's name in the NodePodProbe. */
const READY_PROBE = `${MARKER}#ready`;
/** Quiet PID 1: no process started per second (a `sleep 1` loop in 110 pods would be 110 forks a second). */
const QUIET = ['sh', '-c', 'touch /tmp/ready; trap "exit 0" TERM; sleep 2147483647 & wait'];
const SETTLE_MS = 15_000;
const WINDOW_MS = 45_000;
const TOGGLES = 60;
/** A result change not seen on the pod within this long counts as missed (the run goes on). */
const TOGGLE_TIMEOUT_MS = 60_000;
const EXEC_RUNS = 50;

/** The agent's own counters (src/daemon/podprobe/metrics.ts), summed over their labels. */
interface AgentCounters {
  runs: number;
  timeouts: number;
  statusWrites: number;
  runSeconds: number;
  runCount: number;
  slotWaitSeconds: number;
  slotWaitCount: number;
}

async function agentCounters(url: string): Promise<AgentCounters> {
  const c = (metric: string, labels: Record<string, string> = {}) => agentCounter(url, metric, labels);
  return {
    runs: await c(POD_PROBE_RUNS_TOTAL),
    timeouts: await c(POD_PROBE_RUNS_TOTAL, { result: 'timeout' }),
    statusWrites: await c(POD_PROBE_STATUS_WRITES_TOTAL, { outcome: 'ok' }),
    runSeconds: await c(`${POD_PROBE_RUN_DURATION}_sum`),
    runCount: await c(`${POD_PROBE_RUN_DURATION}_count`),
    slotWaitSeconds: await c(`${POD_PROBE_SLOT_WAIT}_sum`),
    slotWaitCount: await c(`${POD_PROBE_SLOT_WAIT}_count`),
  };
}

function minus(a: AgentCounters, b: AgentCounters): AgentCounters {
  return {
    runs: a.runs - b.runs,
    timeouts: a.timeouts - b.timeouts,
    statusWrites: a.statusWrites - b.statusWrites,
    runSeconds: a.runSeconds - b.runSeconds,
    runCount: a.runCount - b.runCount,
    slotWaitSeconds: a.slotWaitSeconds - b.slotWaitSeconds,
    slotWaitCount: a.slotWaitCount - b.slotWaitCount,
  };
}

interface WindowFigures {
  cpuPercent: number;
  rssMiB: number;
  /** The agent's V8 heap (committed, used) and external memory at the sample of highest RSS, MiB. */
  heapTotalMiB: number;
  heapUsedMiB: number;
  externalMiB: number;
  /** NodePodProbe spec changes seen on the watch (the controller's writes). */
  nppSpecWrites: number;
  podWrites: number;
  agent: AgentCounters;
  ms: number;
}

/** Counts of writes seen on the watches, and callbacks for the latency waiters. */
class Observer {
  nppSpecWrites = 0;
  podWrites = 0;
  /** pod uid -> state of READY_PROBE in the NodePodProbe status */
  readonly states = new Map<string, string>();
  /** pod name -> status of READY_CONDITION */
  readonly conditions = new Map<string, string>();
  readonly onChange: Array<() => void> = [];
  private lastSpec = '';

  node(npp: NodePodProbe): void {
    const spec = JSON.stringify(npp.spec ?? {});
    if (this.lastSpec && spec !== this.lastSpec) this.nppSpecWrites++;
    this.lastSpec = spec;
    for (const s of npp.status?.podProbeStatuses ?? []) {
      const state = s.probeStates?.find((p) => p.name === READY_PROBE)?.state;
      if (state) this.states.set(s.uid, state);
    }
    for (const f of this.onChange) f();
  }

  pod(pod: PodObject, type: string): void {
    if (type === 'MODIFIED') this.podWrites++;
    const status = conditionOf(pod, READY_CONDITION)?.status;
    if (status) this.conditions.set(pod.metadata!.name!, status);
    for (const f of this.onChange) f();
  }
}

/** Every event of a watch, re-opened whenever it ends (a watch the server closes), until the returned close(). */
function follow<T extends KubeObject>(
  open: () => Promise<WatchStream<T>>,
  onEvent: (o: T, type: string) => void,
): () => void {
  let closed = false;
  let stream: WatchStream<T> | undefined;
  void (async () => {
    while (!closed) {
      try {
        stream = await open();
        for await (const event of stream) {
          if (event.type !== 'DELETED' && event.type !== 'BOOKMARK') onEvent(event.object, event.type);
        }
      } catch {
        await sleep(200);
      }
    }
  })();
  return () => {
    closed = true;
    stream?.close();
  };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The agent's CPU, RSS and counters, and the writes seen, over `ms`. */
/** PROBE_BENCH_AGENT_ENV: a JSON object of strings, or nothing. */
function agentEnvFrom(text: string | undefined): Record<string, string> {
  if (!text) return {};
  const value: unknown = JSON.parse(text);
  const isStringMap =
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every((v) => typeof v === 'string');
  if (!isStringMap) throw new Error(`PROBE_BENCH_AGENT_ENV must be a JSON object of strings, got ${text}`);
  return value as Record<string, string>;
}

async function measureWindow(pid: number, url: string, observer: Observer, ms: number): Promise<WindowFigures> {
  const agent0 = await agentCounters(url);
  const cpu0 = cpuSeconds(pid);
  const writes0 = [observer.nppSpecWrites, observer.podWrites] as const;
  const t0 = performance.now();
  let rss = 0;
  let heap = { heapTotalMiB: 0, heapUsedMiB: 0, externalMiB: 0 };
  const mib = async (metric: string) => (await agentCounter(url, metric)) / 1024 / 1024;
  while (performance.now() - t0 < ms) {
    await sleep(1000);
    const now = rssMiB(pid);
    if (now <= rss) continue;
    rss = now;
    heap = {
      heapTotalMiB: await mib('nodejs_heap_size_total_bytes'),
      heapUsedMiB: await mib('nodejs_heap_size_used_bytes'),
      externalMiB: await mib('nodejs_external_memory_bytes'),
    };
  }
  const elapsed = performance.now() - t0;
  const cpu = cpuSeconds(pid) - cpu0;
  return {
    cpuPercent: (cpu * 100_000) / elapsed,
    rssMiB: rss,
    ...heap,
    nppSpecWrites: observer.nppSpecWrites - writes0[0],
    podWrites: observer.podWrites - writes0[1],
    agent: minus(await agentCounters(url), agent0),
    ms: elapsed,
  };
}

/** Pods the node can still take: allocatable pods less those bound to it and not finished. */
async function freePodSlots(stack: ProbeStack, node: string): Promise<number> {
  const n = await stack.client.get<WireNode>(CoreResources.nodes, node);
  const allocatable = Number(n.status?.allocatable?.pods ?? 110);
  const bound = await stack.client.list<PodObject>(CoreResources.pods, { fieldSelector: `spec.nodeName=${node}` });
  const active = bound.items.filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
  return allocatable - active.length;
}

export const podProbeSuite: BenchSuite = {
  name: 'pod-probe',
  description: `${WANTED_PODS} pods x 2 exec probes (period ${PERIOD_S} s) on one node: agent CPU/RSS cost, NodePodProbe writes, result -> condition p50/p99, ExecSync vs crictl`,
  inDefaultRun: false,
  async run({ log, defer }) {
    const stack = await startProbeStack({
      namespacePrefix: 'kd-probe-bench',
      agentArgs: (process.env.PROBE_BENCH_AGENT_ARGS ?? '').split(' ').filter(Boolean),
      agentEnv: agentEnvFrom(process.env.PROBE_BENCH_AGENT_ENV),
    });
    defer(() => stack.close());
    const node = stack.nodes[0]!;
    const pid = stack.system.agentProcess(node).pid;
    const free = await freePodSlots(stack, node.name);
    const count = Math.min(WANTED_PODS, free);
    log(`${count} pods on ${node.name} (${free} free slots; wanted ${WANTED_PODS})`);

    const names = Array.from({ length: count }, (_, i) => `pb-${i}`);
    for (let i = 0; i < names.length; i += 10) {
      await Promise.all(
        names.slice(i, i + 10).map((name) =>
          stack.client.create(
            CoreResources.pods,
            {
              apiVersion: 'v1',
              kind: 'Pod',
              metadata: { name, labels: { app: APP } },
              spec: {
                nodeName: node.name,
                terminationGracePeriodSeconds: 1,
                containers: [{ name: 'main', image: stack.cluster.images.busybox1, command: QUIET }],
              },
            },
            { namespace: stack.namespace },
          ),
        ),
      );
    }
    const podsUpStarted = performance.now();
    const pods = await runningPods(stack, `app=${APP}`, count, 10 * 60_000);
    log(`${count} pods running after ${((performance.now() - podsUpStarted) / 1000).toFixed(1)} s`);

    const observer = new Observer();
    defer(
      follow(
        () => stack.client.watch<NodePodProbe>(NODE_POD_PROBES, { fieldSelector: `metadata.name=${node.name}` }),
        (npp) => observer.node(npp),
      ),
    );
    defer(
      follow(
        () =>
          stack.client.watch<PodObject>(CoreResources.pods, {
            namespace: stack.namespace,
            labelSelector: `app=${APP}`,
          }),
        (pod, type) => observer.pod(pod, type),
      ),
    );
    const url = stack.system.agents.get(node.name)!.url;

    log(`baseline: ${SETTLE_MS / 1000} s settle, ${WINDOW_MS / 1000} s window, no marker`);
    await sleep(SETTLE_MS);
    const baseline = await measureWindow(pid, url, observer, WINDOW_MS);

    log(`marker: 2 exec probes per pod, period ${PERIOD_S} s`);
    const probe = (name: string, command: string[], podConditionType: string) =>
      execProbe({ name, containerName: 'main', command, podConditionType, periodSeconds: PERIOD_S });
    const markerAt = performance.now();
    await stack.client.create(
      POD_PROBE_MARKERS,
      markerManifest(stack.namespace, MARKER, { app: APP }, [
        probe('alive', ['true'], ALIVE_CONDITION),
        probe('ready', ['test', '-f', '/tmp/ready'], READY_CONDITION),
      ]),
      { namespace: stack.namespace },
    );
    await waitFor(
      async () => {
        const list = await stack.client.list<PodObject>(CoreResources.pods, {
          namespace: stack.namespace,
          labelSelector: `app=${APP}`,
        });
        return list.items.every(
          (p) =>
            conditionOf(p, READY_CONDITION)?.status === 'True' && conditionOf(p, ALIVE_CONDITION)?.status === 'True',
        );
      },
      { timeoutMs: 5 * 60_000, intervalMs: 1000, message: `both conditions True on all ${count} pods` },
    );
    const allConditionsS = (performance.now() - markerAt) / 1000;
    log(`every pod shows both conditions after ${allConditionsS.toFixed(1)} s`);

    log(`with probes: ${SETTLE_MS / 1000} s settle, ${WINDOW_MS / 1000} s window`);
    await sleep(SETTLE_MS);
    const probed = await measureWindow(pid, url, observer, WINDOW_MS);

    log(`${TOGGLES} result changes (rm / touch /tmp/ready through CRI), one at a time`);
    const cri = stack.cri(node);
    const containerIds = new Map<string, string>();
    for (const p of pods) {
      const listed = await cri.listContainers({
        filter: {
          label_selector: { 'io.kubernetes.pod.uid': p.metadata!.uid!, 'io.kubernetes.container.name': 'main' },
        },
      });
      const id = listed.containers.find((c) => c.state === 'CONTAINER_RUNNING')?.id;
      if (!id) throw new Error(`${p.metadata!.name}: no running container main`);
      containerIds.set(p.metadata!.name!, id);
    }
    const toState: number[] = [];
    const toCondition: number[] = [];
    const stateToCondition: number[] = [];
    const toggling0 = await agentCounters(url);
    const podWrites0 = observer.podWrites;
    let missed = 0;
    const togglesStarted = performance.now();
    for (let i = 0; i < TOGGLES; i++) {
      const pod = pods[i % pods.length]!;
      const name = pod.metadata!.name!;
      const uid = pod.metadata!.uid!;
      const nowTrue = observer.conditions.get(name) !== 'False';
      const wantState = nowTrue ? 'Failed' : 'Succeeded';
      const wantCondition = nowTrue ? 'False' : 'True';
      let stateAt: number | undefined;
      let check: (() => void) | undefined;
      const done = new Promise<number | undefined>((resolve) => {
        const timer = setTimeout(() => resolve(undefined), TOGGLE_TIMEOUT_MS);
        check = () => {
          const at = performance.now();
          if (stateAt === undefined && observer.states.get(uid) === wantState) stateAt = at;
          if (observer.conditions.get(name) === wantCondition) {
            clearTimeout(timer);
            resolve(at);
          }
        };
        observer.onChange.push(check);
      });
      await cri.execSync({
        container_id: containerIds.get(name)!,
        cmd: ['sh', '-c', nowTrue ? 'rm -f /tmp/ready' : 'touch /tmp/ready'],
        timeout: 5,
      });
      const changedAt = performance.now();
      const conditionAt = await done;
      observer.onChange.splice(observer.onChange.indexOf(check!), 1);
      if (conditionAt === undefined) {
        missed++;
        log(`missed: ${name} ${READY_CONDITION} not ${wantCondition} within ${TOGGLE_TIMEOUT_MS / 1000} s`);
        if (missed > 5) throw new Error(`more than 5 of ${i + 1} result changes not seen on the pod in time`);
        continue;
      }
      toCondition.push(conditionAt - changedAt);
      if (stateAt !== undefined) {
        toState.push(stateAt - changedAt);
        stateToCondition.push(conditionAt - stateAt);
      }
    }
    const togglesMs = performance.now() - togglesStarted;
    const toggling = minus(await agentCounters(url), toggling0);
    const togglingPodWrites = observer.podWrites - podWrites0;

    log('exec overhead: marker deleted, our ExecSync vs crictl exec --sync on one container');
    await stack.client.delete(POD_PROBE_MARKERS, MARKER, { namespace: stack.namespace });
    await waitFor(async () => (await podProbesOfNamespace(stack.client, stack.namespace)).length === 0, {
      timeoutMs: 120_000,
      intervalMs: 500,
      message: 'the probes out of the NodePodProbe',
    });
    const id = containerIds.get('pb-0')!;
    // a command that succeeds whatever the changes did to /tmp/ready (crictl exits non-zero with the command)
    const cmd = ['test', '-d', '/tmp'];
    const ours = await timeEach(EXEC_RUNS, () => cri.execSync({ container_id: id, cmd, timeout: 1 }));
    const crictl = binaryPathsOf(stack.cluster.dir).crictl;
    const endpoint = `unix://${node.hostPaths.runtimeSocket}`;
    const viaCrictl = await timeEach(EXEC_RUNS, () =>
      execFileP(crictl, ['--runtime-endpoint', endpoint, '--timeout', '5s', 'exec', '--sync', id, ...cmd]),
    );

    const r = (x: number): number => Math.round(x * 10) / 10;
    const perMinute = (n: number, ms: number): number => r((n * 60_000) / ms);
    const mean = (seconds: number, count: number): number => (count > 0 ? r((seconds * 1000) / count) : 0);
    const wantedPerS = (count * 2) / PERIOD_S;
    const setup = `${count} pods x 2 exec probes, period ${PERIOD_S} s, on ${node.name}; 2 cores shared with other work`;
    const figures: Figure[] = [
      { name: 'pods', value: count, unit: 'count', note: setup },
      {
        name: 'agent.cpu.noProbes',
        value: r(baseline.cpuPercent),
        unit: '%',
        note: `${count} pods, no marker; ${r(baseline.ms / 1000)} s window; % of one core`,
      },
      { name: 'agent.cpu.probes', value: r(probed.cpuPercent), unit: '%', note: `same node, ${count * 2} probes` },
      { name: 'agent.cpu.cost', value: r(probed.cpuPercent - baseline.cpuPercent), unit: '%', note: 'the increase' },
      { name: 'agent.rss.noProbes', value: r(baseline.rssMiB), unit: 'MiB', note: 'max over the window' },
      { name: 'agent.rss.probes', value: r(probed.rssMiB), unit: 'MiB' },
      { name: 'agent.rss.cost', value: r(probed.rssMiB - baseline.rssMiB), unit: 'MiB', note: 'the increase' },
      ...(['baseline', 'probes'] as const).flatMap((phase) => {
        const w = phase === 'baseline' ? baseline : probed;
        const note = 'at the highest RSS sample';
        return [
          { name: `agent.heapTotal.${phase}`, value: r(w.heapTotalMiB), unit: 'MiB', note },
          { name: `agent.heapUsed.${phase}`, value: r(w.heapUsedMiB), unit: 'MiB', note },
          { name: `agent.external.${phase}`, value: r(w.externalMiB), unit: 'MiB', note },
        ];
      }),
      {
        name: 'probeRuns.perSecond',
        value: r((probed.agent.runs * 1000) / probed.ms),
        unit: '/s',
        note: `runs the agent completed (${wantedPerS}/s asked); the rest skipped while waiting for a slot`,
      },
      {
        name: 'probeRuns.timeouts',
        value: probed.agent.timeouts,
        unit: 'count',
        note: 'runs cut at timeoutSeconds (1 s) in the window',
      },
      {
        name: 'probeRun.mean',
        value: mean(probed.agent.runSeconds, probed.agent.runCount),
        unit: 'ms',
        note: 'one run, from its slot to its result (the agent histogram)',
      },
      {
        name: 'slotWait.mean',
        value: mean(probed.agent.slotWaitSeconds, probed.agent.slotWaitCount),
        unit: 'ms',
        note: 'a run waiting for one of the --max-concurrent-probes slots (16)',
      },
      {
        name: 'markerToAllConditions',
        value: r(allConditionsS),
        unit: 's',
        note: `marker created -> ${count * 2} conditions True`,
      },
      {
        name: 'steady.nppStatusWritesPerMinute',
        value: perMinute(probed.agent.statusWrites, probed.ms),
        unit: 'count',
        note: "the agent's NodePodProbe status patches, no result changing",
      },
      {
        name: 'steady.nppSpecWritesPerMinute',
        value: perMinute(probed.nppSpecWrites, probed.ms),
        unit: 'count',
        note: 'seen on a watch',
      },
      {
        name: 'steady.podWritesPerMinute',
        value: perMinute(probed.podWrites, probed.ms),
        unit: 'count',
        note: 'pod updates seen on a watch',
      },
      {
        name: 'toggling.nppStatusWritesPerMinute',
        value: perMinute(toggling.statusWrites, togglesMs),
        unit: 'count',
        note: `${TOGGLES} result changes one at a time over ${r(togglesMs / 1000)} s`,
      },
      { name: 'toggling.podWritesPerMinute', value: perMinute(togglingPodWrites, togglesMs), unit: 'count' },
      {
        name: 'toggling.missed',
        value: missed,
        unit: 'count',
        note: `not on the pod within ${TOGGLE_TIMEOUT_MS / 1000} s`,
      },
      ...p50p99(
        'fileToState',
        toState,
        `file changed -> new state in the NodePodProbe status (includes 0-${PERIOD_S} s to the next tick); n=${toState.length}`,
      ),
      ...p50p99(
        'stateToCondition',
        stateToCondition,
        'NodePodProbe status seen -> pod condition seen (both on watches): the result reaching the pod',
      ),
      ...p50p99('fileToCondition', toCondition, `n=${toCondition.length}`),
      ...p50p99(
        'exec.ours',
        ours,
        `CriClient.execSync (the agent's call) of \`test -d /tmp\`, ${EXEC_RUNS} runs, marker deleted`,
      ),
      ...p50p99('exec.crictl', viaCrictl, 'crictl exec --sync, same container and command (a process per call)'),
      {
        name: 'exec.ours/crictl',
        value: Math.round((percentile(ours, 50) / percentile(viaCrictl, 50)) * 100) / 100,
        unit: 'x',
        note: 'p50 ratio',
      },
    ];
    return figures;
  },
};
