// `npm run openkruise-e2e -- images [kruise-e2e.test flags...]`: OpenKruise's own e2e suites against our system on
// the real local cluster (issue 18; not part of `npm test`). Builds OpenKruise if needed (build.sh openkruise: its
// kruise-e2e.test), brings the cluster up as the e2e tests do (REAL_CLUSTER_DIR; taken down at the end if this run
// started it), pushes look-alikes of the images the suite names into the local registry (KUBE_TEST_REPO_LIST points
// the suite at them, through a registry proxy that can hold each blob response OPENKRUISE_E2E_BLOB_DELAY_MS, default 0,
// for a pull as slow as a real image's: the doc says when that matters) and removes them from the nodes, binds the pull-secret reader cluster-wide (OpenKruise's
// manager reads every namespace's secrets; the suite's namespaces are random), starts our controller on the host and
// our agent in every node (as test/e2e does), waits for a NodeImage per node, runs the suite's specs (selected by
// OpenKruise's ginkgo labels), prints one line per case and ginkgo's summary, and takes it all down. Flags after the
// suite name go to kruise-e2e.test (e.g. `-ginkgo.focus='two jobs'`). Exit 0 only when every selected case passed
// or failed exactly as KNOWN_FAILURES (test/cluster/openkruise/e2e-suites.ts) says, with the reason printed.
// Logs in $REAL_CLUSTER_DIR/logs/openkruise-e2e/. docs/openkruise-side-by-side.md.
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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
  LOOKALIKE_IMAGES,
  lookalikeReference,
  readE2eReport,
  repoListYaml,
} from '../cluster/openkruise/e2e-suites.js';
import { openKruiseBuild } from '../cluster/openkruise/openkruise.js';
import { runChecked } from '../cluster/runtime/exec.js';
import { mochaGlobalTeardown } from '../support/fixtures.js';
import { removeImages } from '../support/nodeimages.js';
import { nodeRegistryProxy } from '../support/real-images.js';
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

/** Copy each look-alike from our test images into the local registry, unless the registry holds it already. */
async function pushLookalikes(cluster: RealCluster): Promise<string[]> {
  const references: string[] = [];
  for (const image of LOOKALIKE_IMAGES) {
    const reference = lookalikeReference(cluster.registry, image);
    references.push(reference);
    const source = cluster.images[image.source];
    const repository = reference.slice(cluster.registry.length + 1, reference.lastIndexOf(':'));
    const head = await fetch(`http://${cluster.registry}/v2/${repository}/manifests/${image.tag}`, {
      method: 'HEAD',
      headers: { accept: 'application/vnd.oci.image.manifest.v1+json' },
    });
    if (head.status === 200) continue;
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
  return references;
}

/** The nodes start without the images, so every pull of the suite is a real one. */
async function removeFromNodes(cluster: RealCluster, references: readonly string[]): Promise<void> {
  for (const node of cluster.nodes) {
    const cri = new CriClient({ socket: node.hostPaths.containerdSocket });
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
  const references = await pushLookalikes(cluster);
  const served = await nodeRegistryProxy(cluster);
  served.proxy.blobDelayMs = delayMs;
  log(`the suite's images from ${served.proxy.host} (a proxy of ${cluster.registry}, ${delayMs} ms per blob)`);
  const repoList = join(runDir, 'repo-list.yaml');
  writeFileSync(repoList, repoListYaml(served.proxy.host));

  let system: RealSystem | undefined;
  try {
    const bound = kubectl(cluster.layout, ['apply', '-f', PULL_SECRET_READER_CLUSTER_WIDE]);
    if (!bound.ok) throw new Error(`kubectl apply ${PULL_SECRET_READER_CLUSTER_WIDE}: ${bound.out}`);
    await removeFromNodes(cluster, [
      ...references,
      ...LOOKALIKE_IMAGES.map((image) => lookalikeReference(served.proxy.host, image)),
    ]);
    log('our controller on the host, our agent in every node');
    system = await startSystem(cluster, { controllerArgs: ['--nodeimage-creation-delay=1s'] });
    await waitForNodeImages(cluster);

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
    if (system) {
      writeLogs(runDir, system);
      await system.stop();
    }
    kubectl(cluster.layout, ['delete', '--ignore-not-found', '-f', PULL_SECRET_READER_CLUSTER_WIDE]);
    await served.close();
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
