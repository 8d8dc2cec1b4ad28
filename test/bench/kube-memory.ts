// emulator: a cluster whose only pods are the bench's 110, bound to a node no kubelet runs and pod GC never removes
// Memory of the agent's Kubernetes layer: a child process holds an informer over 110 pods (about 4 KB each)
// through 5 rounds of updates to every pod, with our light client, with client-node whole, and with nothing
// (bare), each with Node's defaults and with the DaemonSet's heap flags. Figures for docs/adr/0001.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { KubeClient } from '../../src/kube/client.js';
import { CoreResources } from '../../src/kube/resource.js';
import { startApiServer } from '../cluster/apiserver/index.js';
import { clientFor, podFor } from '../component/kube/support/objects.js';
import { DAEMONSET_HEAP_FLAGS } from './agent-memory.js';
import type { BenchSuite, Figure } from './framework.js';

const PODS = 110;
const ROUNDS = 5;
const MODES = ['bare', 'light', 'client-node'] as const;

interface ProbeFigure {
  mode: string;
  objects: number;
  rssMiB: number;
  heapUsedMiB: number;
  loadMs: number;
}

async function probe(url: string, client: KubeClient, mode: string, flags: string[]): Promise<ProbeFigure> {
  const script = join(dirname(fileURLToPath(import.meta.url)), 'kube-memory', 'rss-probe.js');
  const child = spawn(process.execPath, ['--expose-gc', ...flags, script, mode, url], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout });
  const iterator = lines[Symbol.asyncIterator]();
  const next = async (): Promise<string> => {
    const r = await iterator.next();
    if (r.done) throw new Error(`probe ${mode} ended early`);
    return r.value;
  };
  try {
    const synced = await next();
    if (!/^synced \d+$/.test(synced)) throw new Error(`probe ${mode}: unexpected first line ${synced}`);
    const round = `${mode}-${flags.length}-${Date.now()}`;
    // Five rounds of updates to every pod (550 watch events); the last marks the round the probe waits for.
    for (let r = 1; r <= ROUNDS; r++) {
      await Promise.all(
        Array.from({ length: PODS }, (_, i) =>
          client.patch(
            CoreResources.pods,
            `pod-${i}`,
            { metadata: { annotations: { round: r === ROUNDS ? round : `${round}-${r}` } } },
            { type: 'merge', namespace: 'default' },
          ),
        ),
      );
    }
    child.stdin.write(`measure ${round}\n`);
    const figure = JSON.parse(await next()) as ProbeFigure;
    if (mode !== 'bare' && figure.objects !== PODS) throw new Error(`probe ${mode} holds ${figure.objects} pods`);
    return figure;
  } finally {
    lines.close();
    child.kill();
  }
}

export const kubeMemorySuite: BenchSuite = {
  name: 'kube-memory',
  description: 'RSS (MiB) of a process holding an informer over 110 pods: light client vs client-node whole',
  inDefaultRun: true,
  async run(context) {
    const emu = await startApiServer({});
    context.defer(() => emu.close());
    const client = clientFor(emu.url);
    context.defer(() => client.close());
    for (let i = 0; i < PODS; i++) await client.create(CoreResources.pods, podFor(`pod-${i}`, 'kd-node-1'));
    const figures: Figure[] = [];
    const byKey = new Map<string, number>();
    for (const [flagsName, flags] of [
      ['default', []],
      ['heapFlags', DAEMONSET_HEAP_FLAGS.split(' ')],
    ] as const) {
      for (const mode of MODES) {
        context.log(`probe ${mode} (${flagsName})`);
        const f = await probe(emu.url, client, mode, [...flags]);
        byKey.set(`${mode}.${flagsName}`, f.rssMiB);
        figures.push({
          name: `rss.${mode}.${flagsName}`,
          value: f.rssMiB,
          unit: 'MiB',
          note: `${PODS} pods x ${ROUNDS} update rounds; load ${f.loadMs} ms`,
        });
      }
    }
    for (const flagsName of ['default', 'heapFlags']) {
      const light = byKey.get(`light.${flagsName}`) ?? NaN;
      const whole = byKey.get(`client-node.${flagsName}`) ?? NaN;
      figures.push({ name: `ratio.light/client-node.${flagsName}`, value: light / whole, unit: 'x' });
      figures.push({ name: `budget.light.${flagsName}`, value: light / 100, unit: 'x', note: 'of the 100 MiB budget' });
    }
    return figures;
  },
};
