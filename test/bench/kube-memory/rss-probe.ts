// A child process that holds an informer over the pods of one node and reports its RSS, for the memory figures of
// docs/adr/0001. Usage: node --expose-gc rss-probe.js <light|client-node|bare> <server-url>
// Protocol on stdio: prints "synced <n>" once its cache holds the pods, then waits for "measure <round>" on stdin,
// waits until every cached pod carries annotation round=<round>, collects garbage and prints one JSON line.
import { createInterface } from 'node:readline';
import type { KubeObject } from '../../../src/kube/object.js';

interface Cached {
  metadata?: { annotations?: Record<string, string> };
}

type Holder = { list(): Cached[]; stop(): Promise<void> };

const [mode, url] = process.argv.slice(2);
if (!mode || !url) {
  console.error('usage: rss-probe <light|client-node|bare> <server-url>');
  process.exit(2);
}
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) {
  console.error('run with --expose-gc');
  process.exit(2);
}

async function light(server: string): Promise<Holder> {
  const kube = await import('../../../src/kube/index.js');
  const client = new kube.KubeClient(
    { server, insecureSkipTLSVerify: false, auth: { kind: 'none' }, origin: 'probe' },
    { metrics: kube.kubeMetrics((await import('../../../src/observability/metrics.js')).createRegistry()) },
  );
  const informer = new kube.Informer<Cached & KubeObject>(kube.CoreResources.pods, client, {
    fieldSelector: 'spec.nodeName=kd-node-1',
  });
  informer.start();
  await informer.synced;
  return { list: () => informer.list(), stop: () => informer.stop() };
}

async function clientNode(server: string): Promise<Holder> {
  const k8s = await import('@kubernetes/client-node');
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server, skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const informer = k8s.makeInformer(kc, '/api/v1/pods', () => core.listPodForAllNamespaces());
  let resolveSynced!: () => void;
  const synced = new Promise<void>((r) => (resolveSynced = r));
  informer.on('connect', () => resolveSynced());
  informer.on('error', (err: unknown) => console.error('informer error', err));
  await informer.start();
  await synced;
  return { list: () => informer.list() as Cached[], stop: () => informer.stop() };
}

function rssMiB(): number {
  return Math.round((process.memoryUsage().rss / 1048576) * 10) / 10;
}

async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) {
    gc!();
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function main(): Promise<void> {
  const started = Date.now();
  const holder: Holder =
    mode === 'light'
      ? await light(url!)
      : mode === 'client-node'
        ? await clientNode(url!)
        : { list: () => [], stop: () => Promise.resolve() };
  const loadMs = Date.now() - started;
  console.log(`synced ${holder.list().length}`);
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    const m = /^measure (\S+)$/.exec(line.trim());
    if (!m) continue;
    const round = m[1]!;
    const deadline = Date.now() + 30_000;
    while (mode !== 'bare' && !holder.list().every((p) => p.metadata?.annotations?.round === round)) {
      if (Date.now() > deadline) throw new Error(`round ${round} not seen within 30 s`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await settle();
    const mu = process.memoryUsage();
    console.log(
      JSON.stringify({
        mode,
        execArgv: process.execArgv.filter((a) => a !== '--expose-gc'),
        objects: holder.list().length,
        rssMiB: rssMiB(),
        heapUsedMiB: Math.round((mu.heapUsed / 1048576) * 10) / 10,
        loadMs,
      }),
    );
    break;
  }
  lines.close();
  await holder.stop();
  process.exit(0);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exit(1);
});
