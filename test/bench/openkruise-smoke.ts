// `node dist/test/bench/openkruise-smoke.js`: OpenKruise's own kruise-daemon on the real local cluster, once.
// Builds OpenKruise if needed (test/cluster/k8s/build.sh openkruise), brings the cluster up as the e2e tests do
// (REAL_CLUSTER_DIR; taken down at the end if this run started it), installs the API objects OpenKruise's daemon
// needs from OpenKruise's own manifests (in place of ours, which have the same names; ours are put back at the end),
// runs its kruise-daemon inside the first node with the kruise-daemon ServiceAccount's node-bound token, writes one
// NodeImage tag by hand (no manager runs) and waits for Succeeded. Prints what it measured (start → healthy,
// spec write → Succeeded, RSS, the daemon's API requests) as text and JSON. docs/openkruise-side-by-side.md.
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { NODE_IMAGES, type NodeImage } from '../../src/api/nodeimage.js';
import { nameAndTag, parseImageReference } from '../../src/api/image-reference.js';
import { CriClient } from '../../src/cri/client.js';
import { errorMessage } from '../../src/util/error-message.js';
import { OpenKruiseDaemonProcess } from '../cluster/openkruise/daemon-process.js';
import { daemonApiObjects, openKruiseBuild, swapInObjects } from '../cluster/openkruise/openkruise.js';
import { rssMiB } from '../component/daemon/agent-process.js';
import { mochaGlobalTeardown } from '../support/fixtures.js';
import { getNodeImage, removeImages, setNodeImageSpec, tagStatusOf, waitForStatus } from '../support/nodeimages.js';
import { agentKubeconfigOf, useRealCluster } from '../support/real-cluster.js';
import { waitFor } from '../support/wait.js';

const log = (message: string): void => console.error(`[openkruise-smoke ${new Date().toISOString()}] ${message}`);

/** Peak resident set size (VmHWM) in MiB. */
function peakRssMiB(pid: number): number {
  const match = /^VmHWM:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmHWM in /proc/${pid}/status`);
  return Number(match[1]) / 1024;
}

/** Sum of the daemon's client-go request counter (controller-runtime's registry, on its /metrics). */
async function apiRequests(url: string): Promise<number> {
  const body = await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
  let sum = 0;
  for (const line of body.split('\n')) {
    const match = /^rest_client_requests_total(\{[^}]*\})? (\S+)$/.exec(line);
    if (match) sum += Number(match[2]);
  }
  return sum;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<Record<string, number | string>> {
  const results: Record<string, number | string> = {};
  const buildStarted = performance.now();
  const build = await openKruiseBuild(log);
  results['build.s'] = (performance.now() - buildStarted) / 1000;

  log('the real cluster (REAL_CLUSTER_DIR)');
  const cluster = await useRealCluster();
  const node = cluster.nodes[0]!;
  const client = cluster.admin;

  log(`OpenKruise ${build.version}'s API objects for its daemon, from ${build.moduleDir}/config`);
  const restore = swapInObjects(cluster.layout, daemonApiObjects(cluster.layout, build));
  const cri = new CriClient({ socket: node.hostPaths.runtimeSocket });
  let daemon: OpenKruiseDaemonProcess | undefined;
  const nodeImageBefore = await getNodeImage(client, node.name);
  try {
    const image = cluster.images.busybox2;
    const { name, tag } = nameAndTag(parseImageReference(image));
    await removeImages(cri, [image]);

    const logFile = join(cluster.layout.logDir, `openkruise-daemon-${node.name}.log`);
    log(`kruise-daemon inside ${node.name} (log: ${logFile})`);
    const started = performance.now();
    daemon = await OpenKruiseDaemonProcess.start({
      binary: build.daemon,
      node,
      kubeconfig: agentKubeconfigOf(cluster, node),
      logFile,
    });
    const running = daemon;
    await waitFor(() => running.healthy(), {
      timeoutMs: 60_000,
      intervalMs: 100,
      message: 'kruise-daemon /healthz 200',
    });
    results['start→healthy.ms'] = performance.now() - started;
    results.pid = daemon.pid;
    results.exe = readFileSync(`/proc/${daemon.pid}/comm`, 'utf8').trim();

    await sleep(10_000);
    results['rss.idle.MiB'] = rssMiB(daemon.pid);
    const requestsIdle0 = await apiRequests(daemon.url);
    await sleep(30_000);
    results['apiRequests.idle30s'] = (await apiRequests(daemon.url)) - requestsIdle0;

    log(`NodeImage ${node.name}: ${name}:${tag}`);
    const requestsBefore = await apiRequests(daemon.url);
    const written = performance.now();
    await setNodeImageSpec(client, node.name, { images: { [name]: { tags: [{ tag, version: 0 }] } } });
    const done: NodeImage = await waitForStatus(
      client,
      node.name,
      (status) => {
        const phase = tagStatusOf(status, name, tag)?.phase;
        if (phase === 'Failed') throw new Error(`the pull failed: ${JSON.stringify(status)}`);
        return phase === 'Succeeded';
      },
      { timeoutMs: 120_000, message: `${name}:${tag} Succeeded` },
    );
    results['specWrite→Succeeded.ms'] = performance.now() - written;
    results.status = JSON.stringify(done.status);
    const present = await cri.imageStatus({ image: { image } });
    results['image.onNode'] = present.image?.id ?? 'absent';
    await sleep(3000);
    results['apiRequests.pull'] = (await apiRequests(daemon.url)) - requestsBefore;
    results['rss.afterPull.MiB'] = rssMiB(daemon.pid);
    results['rss.peak.MiB'] = peakRssMiB(daemon.pid);
  } catch (err) {
    if (daemon) log(`kruise-daemon's last log lines:\n${daemon.log().slice(-20).join('\n')}`);
    throw err;
  } finally {
    if (daemon) {
      const exit = await daemon.stop();
      results.exit = JSON.stringify(exit);
    }
    cri.close();
    if (!nodeImageBefore) await client.delete(NODE_IMAGES, node.name).catch(() => undefined);
    log('putting our API objects back');
    try {
      restore();
    } catch (err) {
      // said, not thrown: an error of the run itself must not be hidden by this one
      log(`putting our API objects back failed: ${errorMessage(err)}`);
      results.restore = `failed: ${errorMessage(err)}`;
    }
  }
  return results;
}

let code = 0;
try {
  const results = await main();
  for (const [key, value] of Object.entries(results)) {
    console.log(`${key.padEnd(26)} ${typeof value === 'number' ? value.toFixed(1) : value}`);
  }
  console.log(JSON.stringify({ at: new Date().toISOString(), results }));
} catch (err) {
  console.error(`openkruise-smoke failed: ${errorMessage(err)}`);
  code = 1;
} finally {
  await mochaGlobalTeardown(); // the cluster, if this run started it
}
process.exitCode = code;
