// Memory figures of the agent's Kubernetes layer: a child process holds an informer over 110 pods (about 4 KB each)
// through 5 rounds of updates to every pod, with our light client and with client-node whole. The light one must
// stay well inside the agent's 100 MiB budget. Figures are printed for docs/adr/0001.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { KubeClient } from '../../../src/kube/client.js';
import { CoreResources } from '../../../src/kube/resource.js';
import { emulatorAvailable, startEmulator, type ApiServer } from './support/emulator.js';
import { clientFor, podFor } from './support/objects.js';

const PODS = 110;
const ROUNDS = 5;
const HEAP_FLAGS = ['--max-semi-space-size=1', '--max-old-space-size=64'];

interface Figure {
  mode: string;
  execArgv: string[];
  objects: number;
  rssMiB: number;
  heapUsedMiB: number;
  loadMs: number;
}

async function probe(url: string, client: KubeClient, mode: string, flags: string[]): Promise<Figure> {
  const script = join(dirname(fileURLToPath(import.meta.url)), 'memory', 'rss-probe.js');
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
    assert.match(synced, /^synced \d+$/);
    if (mode !== 'bare') assert.equal(synced, `synced ${PODS}`);
    const round = `${mode}-${flags.length}-${Date.now()}`;
    // Five rounds of updates to every pod (550 watch events), the last one marking the round the probe waits for.
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
    return JSON.parse(await next()) as Figure;
  } finally {
    lines.close();
    child.kill();
  }
}

describe('memory of the Kubernetes layer with 110 pods (component)', function () {
  this.timeout(120_000);
  let emu: ApiServer;
  let client: KubeClient;

  before(async function () {
    if (!emulatorAvailable()) this.skip();
    emu = await startEmulator();
    client = clientFor(emu.url);
    for (let i = 0; i < PODS; i++) await client.create(CoreResources.pods, podFor(`pod-${i}`, 'kd-node-1'));
  });

  after(async () => {
    client?.close();
    await emu?.close();
  });

  it('the light informer stays far below 100 MiB, client-node whole costs much more', async () => {
    const figures: Figure[] = [];
    for (const flags of [[], HEAP_FLAGS]) {
      for (const mode of ['bare', 'light', 'client-node']) figures.push(await probe(emu.url, client, mode, flags));
    }
    console.log('      RSS MiB after 110 pods x 5 update rounds (mode, flags, rss, heapUsed, load ms):');
    for (const f of figures)
      console.log(
        `        ${f.mode.padEnd(12)} ${(f.execArgv.join(' ') || 'default').padEnd(50)} ${f.rssMiB} ${f.heapUsedMiB} ${f.loadMs}`,
      );
    const light = figures.filter((f) => f.mode === 'light');
    const whole = figures.filter((f) => f.mode === 'client-node');
    assert.ok(light.every((f) => f.objects === PODS));
    assert.ok(
      light.every((f) => f.rssMiB < 100),
      'light informer under the 100 MiB budget',
    );
    assert.ok(light[0]!.rssMiB < whole[0]!.rssMiB, 'lighter than client-node whole');
  });
});
