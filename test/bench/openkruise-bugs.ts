// `npm run bench -- openkruise-bugs`: the bugs OpenKruise's users report (issue 18), each run as the same steps
// against OpenKruise v1.9.1's kruise-daemon and against our agent, one at a time on kd-node-1 of the real local
// cluster (REAL_CLUSTER_DIR): ours first (deploy/'s API objects), then OpenKruise's (its own API objects swapped in
// for the time it runs, ours put back). Each side in two stages (test/cluster/openkruise/bug-cases.ts): the agent
// alone, then with its controller (our kruise-controller; OpenKruise's kruise-manager, manager-process.ts, with its
// webhooks and all its CRDs). Prints per case whether each agent did what the issue's reporter expected,
// with the evidence, as a Markdown table (docs/openkruise-side-by-side.md); figures: 1/0 per agent and case, and
// the durations. OPENKRUISE_BUGS=2534,1263 runs only those cases. Not part of `npm run bench` without names, nor of
// `npm test`.
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { errorMessage } from '../../src/util/error-message.js';
import { BUG_CASES, type AgentSide, type BugCase, type CaseEnv } from '../cluster/openkruise/bug-cases.js';
import { OpenKruiseDaemonProcess } from '../cluster/openkruise/daemon-process.js';
import { OpenKruiseManagerProcess } from '../cluster/openkruise/manager-process.js';
import { daemonApiObjects, swapInObjects } from '../cluster/openkruise/openkruise.js';
import { runChecked } from '../cluster/runtime/exec.js';
import { setNodeImageSpec } from '../support/nodeimages.js';
import { splitReference } from '../support/real-images.js';
import { agentKubeconfigOf, startAgentOn, startSystem, type RealCluster } from '../support/real-cluster.js';
import { createTestNamespace, deleteTestNamespace } from '../support/test-namespace.js';
import { waitFor } from '../support/wait.js';
import { verdictFigures, verdictTable, type BugVerdict, type SideVerdict } from './bug-verdicts.js';
import { openKruiseOnFirstNode } from './openkruise/first-node.js';
import type { BenchSuite, Figure } from './framework.js';

/** OpenKruise's daemon at -v=3: client-go logs each client-side throttling wait over 50 ms at that level. */
const OPENKRUISE_VERBOSITY = '-v=3';

/** A case a stage left out (a stage that failed before it). */
const NOT_RUN: SideVerdict = { passed: false, evidence: 'not run', ms: 0 };

interface RunningAgent {
  side: AgentSide;
  stop(): Promise<unknown>;
}

/** A copy of the cluster's busybox image in a repository of its own, and its manifest digest. */
async function pushCaseImage(cluster: RealCluster): Promise<{ repository: string; digest: string }> {
  const repository = `${cluster.registry}/openkruise-bugs/busybox`;
  const flags = ['--src-tls-verify=false', '--dest-tls-verify=false'];
  await runChecked('skopeo', [
    'copy',
    '--quiet',
    ...flags,
    `docker://${cluster.images.busybox1}`,
    `docker://${repository}:1`,
  ]);
  const inspected = await runChecked('skopeo', [
    'inspect',
    '--tls-verify=false',
    '--format',
    '{{.Digest}}',
    `docker://${repository}:1`,
  ]);
  const digest = inspected.trim();
  if (!/^sha256:[0-9a-f]{64}$/.test(digest)) throw new Error(`skopeo inspect ${repository}:1 gave ${digest}`);
  return { repository, digest };
}

/** Run every case on one agent; a case that throws fails with the error as its evidence. */
async function runCases(
  cases: readonly BugCase[],
  env: CaseEnv,
  log: (message: string) => void,
): Promise<Map<number, SideVerdict>> {
  const verdicts = new Map<number, SideVerdict>();
  for (const bug of cases) {
    log(`${env.agent.name}: #${bug.issue} ${bug.title}`);
    const started = performance.now();
    let verdict: SideVerdict;
    try {
      const result = await bug.run(env);
      verdict = { passed: result.passed, evidence: result.evidence, ms: performance.now() - started };
    } catch (err) {
      verdict = { passed: false, evidence: `error: ${errorMessage(err)}`, ms: performance.now() - started };
    }
    log(`${env.agent.name}: #${bug.issue} ${verdict.passed ? 'passes' : 'fails'}: ${verdict.evidence}`);
    verdicts.set(bug.issue, verdict);
  }
  return verdicts;
}

/** OPENKRUISE_BUGS (issue numbers, comma-separated; default every case) picks the cases to run. */
function selectedCases(raw: string | undefined): BugCase[] {
  if (!raw) return [...BUG_CASES];
  const wanted = raw.split(',').map((n) => Number(n.trim().replace(/^#/, '')));
  const unknown = wanted.filter((n) => !BUG_CASES.some((bug) => bug.issue === n));
  if (unknown.length > 0) {
    throw new Error(
      `OPENKRUISE_BUGS: no case for ${unknown.join(', ')} (cases: ${BUG_CASES.map((b) => b.issue).join(', ')})`,
    );
  }
  return BUG_CASES.filter((bug) => wanted.includes(bug.issue));
}

export const openKruiseBugsSuite: BenchSuite = {
  name: 'openkruise-bugs',
  description: "OpenKruise's reported bugs, each run against its kruise-daemon and our agent on one real node",
  inDefaultRun: false,
  async run(context) {
    const { log } = context;
    const loads: number[] = [loadavg()[0]!];
    const { build, cluster, node, client, cri } = await openKruiseOnFirstNode(context);
    const namespace = await createTestNamespace(client, 'openkruise-bugs', { forPods: true });
    context.defer(() => deleteTestNamespace(client, namespace));
    context.defer(() => setNodeImageSpec(client, node.name, { images: {} }));
    const { repository, digest } = await pushCaseImage(cluster);
    log(`case image ${repository}:1 (${digest})`);

    const envFor = (side: AgentSide): CaseEnv => ({
      client,
      namespace,
      node,
      cri,
      agent: side,
      repository,
      digest,
      otherImage: splitReference(cluster.images.busybox2),
      log,
    });
    const selected = selectedCases(process.env.OPENKRUISE_BUGS);
    const stage = (name: BugCase['stage']): BugCase[] => selected.filter((bug) => bug.stage === name);
    const onAgent = async (
      cases: readonly BugCase[],
      start: () => Promise<RunningAgent>,
    ): Promise<Map<number, SideVerdict>> => {
      if (cases.length === 0) return new Map();
      await setNodeImageSpec(client, node.name, { images: {} });
      const agent = await start();
      try {
        return await runCases(cases, envFor(agent.side), log);
      } finally {
        await agent.stop();
        loads.push(loadavg()[0]!);
      }
    };
    const startOpenKruiseDaemon = async (): Promise<RunningAgent> => {
      const daemon = await OpenKruiseDaemonProcess.startHealthy({
        binary: build.daemon,
        node,
        kubeconfig: agentKubeconfigOf(cluster, node),
        logFile: join(cluster.layout.logDir, `openkruise-bugs-daemon-${node.name}.log`),
        extraArgs: [OPENKRUISE_VERBOSITY],
      });
      return { side: { name: 'openkruise', logLines: () => daemon.log() }, stop: () => daemon.stop() };
    };

    const startOurAgent = async (): Promise<RunningAgent> => {
      const agent = await startAgentOn(cluster, node);
      return {
        side: { name: 'ours', logLines: () => agent.process.logs.map((l) => JSON.stringify(l)) },
        stop: () => agent.process.stop(),
      };
    };

    log(`ours on ${node.name}: the agent alone`);
    const ours = await onAgent(stage('agent'), startOurAgent);
    log(`ours on ${node.name}: kruise-controller on the host, the agent`);
    for (const [issue, verdict] of await onAgent(stage('system'), async () => {
      const system = await startSystem(cluster, { nodes: [node] });
      const agent = system.agentProcess(node);
      return {
        side: { name: 'ours', logLines: () => agent.logs.map((l) => JSON.stringify(l)) },
        stop: () => system.stop(),
      };
    })) {
      ours.set(issue, verdict);
    }

    /** `run` with OpenKruise's kruise-manager on the host (stopped after, its CRDs and webhooks removed). */
    const withManager = async <T>(run: () => Promise<T>): Promise<T> => {
      const manager = await OpenKruiseManagerProcess.start({ build, layout: cluster.layout });
      try {
        await waitFor(() => manager.ready(), {
          timeoutMs: 120_000,
          intervalMs: 250,
          message: 'kruise-manager /readyz',
        });
        return await run();
      } finally {
        await manager.stop();
      }
    };
    const managed = stage('openkruise-manager');
    if (managed.length > 0) {
      log(`ours on ${node.name} beside OpenKruise's kruise-manager (its CRDs and webhooks; a CloneSet)`);
      for (const [issue, verdict] of await withManager(() => onAgent(managed, startOurAgent))) ours.set(issue, verdict);
    }

    log(`OpenKruise ${build.version}'s API objects for its daemon (ours are put back after)`);
    const restoreOurs = swapInObjects(cluster.layout, daemonApiObjects(cluster.layout, build));
    let theirs: Map<number, SideVerdict>;
    try {
      log(`OpenKruise's kruise-daemon on ${node.name} (${OPENKRUISE_VERBOSITY}): the daemon alone`);
      theirs = await onAgent(stage('agent'), startOpenKruiseDaemon);
      const withItsManager = [...stage('system'), ...managed];
      if (withItsManager.length > 0) {
        log(`OpenKruise's kruise-manager on the host (its CRDs and webhooks), its daemon on ${node.name}`);
        const verdicts = await withManager(() => onAgent(withItsManager, startOpenKruiseDaemon));
        for (const [issue, verdict] of verdicts) theirs.set(issue, verdict);
      }
    } finally {
      log('putting our API objects back');
      restoreOurs();
    }

    const verdicts: BugVerdict[] = selected.map((bug) => ({
      issue: bug.issue,
      title: bug.title,
      ours: ours.get(bug.issue) ?? NOT_RUN,
      theirs: theirs.get(bug.issue) ?? NOT_RUN,
    }));
    const load = `load average (1 min) ${Math.min(...loads).toFixed(1)} to ${Math.max(...loads).toFixed(1)}`;
    log(`OpenKruise's reported bugs on ${node.name}, side by side (${load}):\n${verdictTable(verdicts)}`);
    const figures: Figure[] = verdicts.flatMap(verdictFigures);
    figures.push({ name: 'machine.load1.max', value: Math.max(...loads), unit: 'load', note: load });
    return figures;
  },
};
