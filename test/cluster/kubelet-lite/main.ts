// kubelet-lite process (test infrastructure): `node main.js --config <file>`. Runs every node of the config on one
// containerd, writes the ready file once all are registered, and on SIGTERM/SIGINT stops watching and exits,
// leaving the pods running (the next start adopts them).
import { readFile, rm, writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { CriClient } from '../../../src/cri/index.js';
import { KubeClient, loadConnection } from '../../../src/kube/index.js';
import { createLogger } from '../../../src/observability/logger.js';
import { NodeKubelet } from './node-kubelet.js';
import { parseKubeletLiteConfig } from './process-config.js';
import { RuntimeWatcher } from './runtime-watcher.js';
import { scaledTimers } from './timers.js';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { config: { type: 'string' } } });
  if (!values.config) throw new Error('usage: kubelet-lite --config <file>');
  const config = parseKubeletLiteConfig(await readFile(values.config, 'utf8'));
  const logger = createLogger('kubelet-lite');
  const timers = scaledTimers(config.timeScale);
  const cri = new CriClient({ socket: config.runtimeSocket, logger });
  const version = await cri.version({});
  const kube = new KubeClient(await loadConnection({ kubeconfig: config.kubeconfig }), {
    logger,
    userAgent: 'kubelet-lite/0.1.0',
  });
  const watcher = new RuntimeWatcher(cri, timers.relistMs, logger);
  const nodes = config.nodes.map(
    (nodeName) =>
      new NodeKubelet({
        cri,
        kube,
        watcher,
        runtime: { name: version.runtime_name, version: version.runtime_version },
        settings: {
          nodeName,
          podCgroupParent: config.podCgroupParent,
          podLogDir: config.podLogDir,
          stateDir: config.stateDir,
          hostIPs: [config.hostIP],
          timers,
        },
        logger,
      }),
  );
  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping; pods keep running');
    watcher.stop();
    await Promise.all(nodes.map((n) => n.stop().catch(() => undefined)));
    await rm(config.readyFile, { force: true });
    cri.close();
    kube.close();
    process.exit(0);
  };
  // a bug in one sync must not take every node of the cluster down: log it and carry on
  process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled rejection'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  await Promise.all(nodes.map((n) => n.start()));
  watcher.start();
  await writeFile(config.readyFile, `${JSON.stringify({ pid: process.pid, nodes: config.nodes })}\n`);
  logger.info({ nodes: config.nodes, timeScale: config.timeScale }, 'kubelet-lite ready');
}

main().catch((err: unknown) => {
  process.stderr.write(`kubelet-lite: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
