// `npm run openkruise-e2e -- <suite> [kruise-e2e.test flags...]`: OpenKruise's own e2e suites against our system on
// the real local cluster (issue 18; not part of `npm test`). Builds OpenKruise if needed (build.sh openkruise: its
// kruise-e2e.test), brings the cluster up as the e2e tests do (REAL_CLUSTER_DIR; taken down at the end if this run
// started it), pushes look-alikes of the images the suites name into the local registry (KUBE_TEST_REPO_LIST points
// the suite at them, through a registry proxy that can hold each blob response OPENKRUISE_E2E_BLOB_DELAY_MS, default 0,
// for a pull as slow as a real image's: the doc says when that matters; Docker Hub's images through a docker.io
// mirror in the nodes' runtime) and removes them from the nodes, then starts the suite's setup (E2eSetup):
// - `ours` (images): the pull-secret reader bound cluster-wide (OpenKruise's manager reads every namespace's secrets;
//   the suite's namespaces are random), our controller on the host and our agent in every node (as test/e2e does),
//   a NodeImage per node waited for;
// - `agent-only` (crr, podprobe): OpenKruise's kruise-manager on the host (test/cluster/openkruise/manager-process.ts:
//   its CRDs, controllers and webhooks) and our agent in every node with deploy/overlays/agent-only's RBAC and
//   ServiceAccount (kruise-daemon-ts); no controller of ours, no kruise-daemon of OpenKruise's;
// runs the suite's specs (selected by OpenKruise's ginkgo labels), prints one line per case and ginkgo's summary, and
// takes it all down. Flags after the suite name go to kruise-e2e.test (e.g. `-ginkgo.focus='two jobs'`). Exit 0 only
// when every selected case passed or failed exactly as KNOWN_FAILURES (test/cluster/openkruise/e2e-suites.ts) says,
// with the reason printed. Logs in $REAL_CLUSTER_DIR/logs/openkruise-e2e/. docs/openkruise-side-by-side.md.
import { spawn } from 'node:child_process';
import { chmodSync, createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NODE_IMAGES } from '../../src/api/nodeimage.js';
import { CriClient } from '../../src/cri/client.js';
import { isNotFound } from '../../src/kube/errors.js';
import { errorMessage } from '../../src/util/error-message.js';
import { packageRoot } from '../../src/util/repo-root.js';
import { kubectl } from '../cluster/k8s/system.js';
import {
  E2E_SUITES,
  e2eArgs,
  e2eEnv,
  e2eRunAccepted,
  formatE2eRun,
  isE2eSuiteName,
  DOCKER_HUB_LOOKALIKES,
  dockerHubLookalikeReference,
  isBuiltLookalike,
  LOOKALIKE_IMAGES,
  lookalikeConfigArgs,
  type LookalikeImage,
  lookalikeReference,
  readE2eReport,
  repoListYaml,
} from '../cluster/openkruise/e2e-suites.js';
import { OpenKruiseManagerProcess } from '../cluster/openkruise/manager-process.js';
import { openKruiseBuild, type OpenKruiseBuild } from '../cluster/openkruise/openkruise.js';
import { runChecked } from '../cluster/runtime/exec.js';
import { installAgentOnly, type AgentOnlyInstall } from '../support/agent-only.js';
import { mochaGlobalTeardown } from '../support/fixtures.js';
import { removeImages } from '../support/nodeimages.js';
import { nodeRegistryProxy, writeNodeRegistry } from '../support/real-images.js';
import { startSystem, useRealCluster, type RealCluster, type RealSystem } from '../support/real-cluster.js';
import { waitFor } from '../support/wait.js';

const USAGE = `usage: npm run openkruise-e2e -- <suite> [kruise-e2e.test flags...]
suites: ${Object.keys(E2E_SUITES).join(', ')}`;

const started = performance.now();
const log = (message: string): void =>
  console.error(`[openkruise-e2e ${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${message}`);

const PULL_SECRET_READER_CLUSTER_WIDE = join(
  packageRoot(),
  'deploy',
  'overlays',
  'pull-secret-reader-cluster-wide.yaml',
);

/** OPENKRUISE_E2E_BLOB_DELAY_MS (default 0): how long the proxy holds each blob of the suite's images. */
function blobDelayMs(): number {
  const raw = process.env.OPENKRUISE_E2E_BLOB_DELAY_MS ?? '0';
  const ms = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(ms)) {
    throw new Error(`OPENKRUISE_E2E_BLOB_DELAY_MS must be a whole number of milliseconds, not ${JSON.stringify(raw)}`);
  }
  return ms;
}

/**
 * A look-alike into the local registry at `reference`: a copy of one of our test images, unless the registry holds
 * it already; one with a command or files of its own is made again each run (the source's image changed by umoci in
 * an OCI layout of the run, as test/cluster/runtime/test-images.ts builds the test images).
 */
async function pushLookalike(
  cluster: RealCluster,
  image: LookalikeImage,
  reference: string,
  workDir: string,
): Promise<void> {
  const source = cluster.images[image.source];
  if (isBuiltLookalike(image)) {
    log(`pushing ${reference} (${source}${image.cmd ? ` running ${image.cmd.join(' ')}` : ''})`);
    const layout = join(workDir, 'oci');
    const skopeo = ['--insecure-policy', 'copy', '--quiet', '--src-tls-verify=false', '--dest-tls-verify=false'];
    await runChecked('skopeo', [...skopeo, `docker://${source}`, `oci:${layout}:source`]);
    for (const [index, file] of (image.files ?? []).entries()) {
      const local = join(workDir, `file-${index}`);
      writeFileSync(local, file.content, { mode: file.mode });
      chmodSync(local, file.mode);
      await runChecked('umoci', ['insert', '--image', `${layout}:source`, local, file.path]);
    }
    await runChecked('umoci', [
      'config',
      '--image',
      `${layout}:source`,
      '--tag',
      'lookalike',
      ...lookalikeConfigArgs(image),
    ]);
    await runChecked('skopeo', [...skopeo, `oci:${layout}:lookalike`, `docker://${reference}`]);
    return;
  }
  const repository = reference.slice(cluster.registry.length + 1, reference.lastIndexOf(':'));
  const head = await fetch(`http://${cluster.registry}/v2/${repository}/manifests/${image.tag}`, {
    method: 'HEAD',
    headers: { accept: 'application/vnd.oci.image.manifest.v1+json' },
  });
  if (head.status === 200) return;
  log(`pushing ${reference} (a copy of ${source})`);
  await runChecked('skopeo', [
    'copy',
    '--quiet',
    '--src-tls-verify=false',
    '--dest-tls-verify=false',
    `docker://${source}`,
    `docker://${reference}`,
  ]);
}

/** Every look-alike into the local registry; returns their references there. */
async function pushLookalikes(cluster: RealCluster, workDir: string): Promise<string[]> {
  const all = [
    ...LOOKALIKE_IMAGES.map((image) => ({ image, reference: lookalikeReference(cluster.registry, image) })),
    ...DOCKER_HUB_LOOKALIKES.map((image) => ({
      image,
      reference: dockerHubLookalikeReference(cluster.registry, image),
    })),
  ];
  for (const { image, reference } of all) await pushLookalike(cluster, image, reference, workDir);
  return all.map(({ reference }) => reference);
}

/**
 * The nodes' runtime sends docker.io pulls to `registry` (containerd: a certs.d hosts.toml; CRI-O: a mirror drop-in):
 * the PodProbeMarker specs name Docker Hub images, and nothing here reaches Docker Hub. Returns what removes it.
 */
async function mirrorDockerHub(cluster: RealCluster, registry: string): Promise<() => Promise<void>> {
  const removers: (() => Promise<void>)[] = [];
  for (const node of cluster.nodes) {
    removers.push(await writeNodeRegistry(node, registry, 'docker.io'));
  }
  return async () => {
    for (const remove of removers) await remove();
  };
}

/** The nodes start without the images, so every pull of the suite is a real one. */
async function removeFromNodes(cluster: RealCluster, references: readonly string[]): Promise<void> {
  for (const node of cluster.nodes) {
    const cri = new CriClient({ socket: node.hostPaths.runtimeSocket });
    try {
      await removeImages(cri, references);
    } finally {
      cri.close();
    }
  }
}

/** OpenKruise's suites count NodeImages against Nodes (one each, plus their fake one) before every case. */
async function waitForNodeImages(cluster: RealCluster): Promise<void> {
  await waitFor(
    async () => {
      for (const node of cluster.nodes) {
        try {
          await cluster.admin.get(NODE_IMAGES, node.name);
        } catch (err) {
          if (isNotFound(err)) return false;
          throw err;
        }
      }
      return true;
    },
    { timeoutMs: 60_000, intervalMs: 250, message: 'a NodeImage per node' },
  );
}

/** kruise-e2e.test to completion: its output to `logFile`, each case's header to the terminal as it starts. */
function runE2e(binary: string, args: string[], env: NodeJS.ProcessEnv, cwd: string, logFile: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const out = createWriteStream(logFile);
    const child = spawn(binary, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let partial = '';
    let afterRule = false;
    const onData = (chunk: Buffer): void => {
      out.write(chunk);
      partial += chunk.toString('utf8');
      const lines = partial.split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        // -ginkgo.v prints each spec's full text on the line after a rule of dashes
        if (afterRule && !/^(\s|•|S+$|$)/.test(line)) log(`  ${line.trim()}`);
        afterRule = /^-{20,}$/.test(line);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      out.end(() => resolve(code ?? (signal ? 128 : 1)));
    });
  });
}

/** ginkgo's own summary lines from the output ("Ran N of M Specs ...", "FAIL! -- ..."). */
function ginkgoSummary(logFile: string): string[] {
  const lines = readFileSync(logFile, 'utf8').split('\n');
  const start = lines.findIndex((l) => /^Ran \d+ of \d+ Specs/.test(l));
  return start < 0 ? [] : lines.slice(start, start + 3).filter((l) => l.trim() !== '');
}

async function main(argv: string[]): Promise<number> {
  const [suiteName, ...extra] = argv;
  if (!suiteName || !isE2eSuiteName(suiteName)) {
    console.error(USAGE);
    return 2;
  }
  const suite = E2E_SUITES[suiteName];
  log(`suite ${suiteName}: ${suite.describe}`);
  const build = await openKruiseBuild(log);
  log(`OpenKruise ${build.version}'s e2e binary: ${build.e2e}`);

  log('the real cluster (REAL_CLUSTER_DIR)');
  const cluster = await useRealCluster();
  const runDir = join(cluster.layout.logDir, 'openkruise-e2e');
  mkdirSync(runDir, { recursive: true });

  const delayMs = blobDelayMs();
  const lookalikesDir = mkdtempSync(join(runDir, 'lookalikes-'));
  const references = await pushLookalikes(cluster, lookalikesDir).finally(() =>
    rmSync(lookalikesDir, { recursive: true, force: true }),
  );
  const served = await nodeRegistryProxy(cluster);
  served.proxy.blobDelayMs = delayMs;
  log(`the suite's images from ${served.proxy.host} (a proxy of ${cluster.registry}, ${delayMs} ms per blob)`);
  const repoList = join(runDir, 'repo-list.yaml');
  writeFileSync(repoList, repoListYaml(served.proxy.host));

  const running: Running = {};
  try {
    running.dockerHubMirror = await mirrorDockerHub(cluster, served.proxy.host);
    await removeFromNodes(cluster, [
      ...references,
      ...LOOKALIKE_IMAGES.map((image) => lookalikeReference(served.proxy.host, image)),
      ...DOCKER_HUB_LOOKALIKES.map((image) => `docker.io/${image.name}:${image.tag}`),
    ]);
    if (suite.setup === 'ours') await startOurs(cluster, running);
    else await startAgentOnly(cluster, build, runDir, running);

    const jsonReport = join(runDir, `${suiteName}.json`);
    const output = join(runDir, `${suiteName}.log`);
    const args = e2eArgs({ suite, jsonReport, outputDir: runDir, extra });
    log(`kruise-e2e.test ${args.join(' ')} (output: ${output})`);
    const suiteStarted = performance.now();
    const code = await runE2e(build.e2e, args, e2eEnv(process.env, cluster.adminKubeconfig, repoList), runDir, output);
    log(`kruise-e2e.test exited ${code} after ${((performance.now() - suiteStarted) / 1000).toFixed(0)} s`);
    const report = readE2eReport(readFileSync(jsonReport, 'utf8'));
    for (const line of [...formatE2eRun(report), ...ginkgoSummary(output)]) console.log(line);
    // the binary exits 1 when any spec failed, the known ones included
    return e2eRunAccepted(report) && (code === 0 || report.known > 0) ? 0 : 1;
  } finally {
    await stopAll(cluster, runDir, running);
    await served.close();
  }
}

/** What a run started, stopped at its end in reverse order. */
interface Running {
  system?: RealSystem;
  pullSecretReader?: boolean;
  manager?: OpenKruiseManagerProcess;
  agentOnly?: AgentOnlyInstall;
  dockerHubMirror?: () => Promise<void>;
}

/** Our controller on the host (reading pull secrets in every namespace), our agent in every node, a NodeImage each. */
async function startOurs(cluster: RealCluster, running: Running): Promise<void> {
  const bound = kubectl(cluster.layout, ['apply', '-f', PULL_SECRET_READER_CLUSTER_WIDE]);
  running.pullSecretReader = true;
  if (!bound.ok) throw new Error(`kubectl apply ${PULL_SECRET_READER_CLUSTER_WIDE}: ${bound.out}`);
  log('our controller on the host, our agent in every node');
  running.system = await startSystem(cluster, { controllerArgs: ['--nodeimage-creation-delay=1s'] });
  await waitForNodeImages(cluster);
}

/**
 * OpenKruise's kruise-manager on the host (its CRDs over ours, its webhooks), then our agent in every node with the
 * RBAC and ServiceAccount of deploy/overlays/agent-only; no controller of ours, no kruise-daemon of OpenKruise's.
 */
async function startAgentOnly(
  cluster: RealCluster,
  build: OpenKruiseBuild,
  runDir: string,
  running: Running,
): Promise<void> {
  const logFile = join(runDir, 'kruise-manager.log');
  log(`OpenKruise ${build.version}'s kruise-manager on the host (log: ${logFile})`);
  const started = performance.now();
  const manager = await OpenKruiseManagerProcess.start({
    build,
    layout: cluster.layout,
    logFile,
    extraArgs: ['--nodeimage-creation-delay=1s'],
  });
  running.manager = manager;
  await waitFor(() => manager.ready(), { timeoutMs: 180_000, intervalMs: 250, message: 'kruise-manager /readyz 200' });
  log(`kruise-manager ready after ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const agentOnly = installAgentOnly(cluster);
  running.agentOnly = agentOnly;
  log('our agent in every node (deploy/overlays/agent-only: ServiceAccount kruise-daemon-ts), no controller of ours');
  running.system = await startSystem(agentOnly.cluster, { controller: false });
}

async function stopAll(cluster: RealCluster, runDir: string, running: Running): Promise<void> {
  const steps: [string, () => unknown][] = [
    [
      'our system',
      async () => {
        if (!running.system) return;
        writeLogs(runDir, running.system);
        await running.system.stop();
      },
    ],
    ['the agent-only RBAC', () => running.agentOnly?.remove()],
    ['kruise-manager', () => running.manager?.stop()],
    [
      'the pull-secret reader',
      () =>
        running.pullSecretReader &&
        kubectl(cluster.layout, ['delete', '--ignore-not-found', '-f', PULL_SECRET_READER_CLUSTER_WIDE]),
    ],
    ['the docker.io mirror', () => running.dockerHubMirror?.()],
  ];
  for (const [what, step] of steps) {
    try {
      await step();
    } catch (err) {
      // said, not thrown: the others must still be stopped, and the run's own error not hidden
      log(`stopping ${what} failed: ${errorMessage(err)}`);
    }
  }
}

/** Our processes' JSON logs beside the suite's output. */
function writeLogs(runDir: string, system: RealSystem): void {
  const lines = (logs: readonly unknown[]): string => logs.map((l) => JSON.stringify(l)).join('\n') + '\n';
  if (system.controller) {
    writeFileSync(join(runDir, 'kruise-controller.log'), lines(system.controller.logs));
    if (system.controller.stderr) writeFileSync(join(runDir, 'kruise-controller.stderr'), system.controller.stderr);
  }
  for (const [node, agent] of system.agents) {
    writeFileSync(join(runDir, `kruise-daemon-${node}.log`), lines(agent.process.logs));
  }
}

let code = 1;
try {
  code = await main(process.argv.slice(2));
} catch (err) {
  console.error(`openkruise-e2e failed: ${errorMessage(err)}`);
} finally {
  await mochaGlobalTeardown(); // the cluster, if this run started it
  log(`done (exit ${code})`);
}
process.exitCode = code;
