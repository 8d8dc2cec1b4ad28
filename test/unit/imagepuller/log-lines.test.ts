// The image puller's log lines as the agent writes them (the controller, its TagPulls, a real pino logger): each
// names the image once. A pull's lines are bound to `image` (name:tag); a field of the same name on the line would
// be written a second time into the same JSON object.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { ImagePullController } from '../../../src/daemon/imagepuller/controller.js';
import { imagePullMetrics } from '../../../src/daemon/imagepuller/metrics.js';
import { KubeClient } from '../../../src/kube/client.js';
import { createRegistry } from '../../../src/observability/metrics.js';
import { FakeClock } from '../../../src/util/clock.js';
import { duplicateKeys } from '../../support/json-keys.js';
import { waitFor } from '../../support/wait.js';
import { FakeTransport } from '../kube/support/fake-transport.js';
import { FakeImageRuntime, FakeLabelStore } from './fakes.js';

const NODE = 'node-a';
const REG = '127.0.0.1:5000';

const nodeImage = {
  apiVersion: 'apps.kruise.io/v1beta1',
  kind: 'NodeImage',
  metadata: { name: NODE, uid: 'u1', resourceVersion: '5' },
  spec: {
    images: {
      [`${REG}/test/busybox`]: { tags: [{ tag: '1.0' }, { tag: '2.0', pullPolicy: { backoffLimit: 1 } }] },
    },
  },
};

describe('imagepuller log lines', () => {
  it('finds a key written twice', () => {
    assert.deepEqual(duplicateKeys('{"a":1,"b":{"c":[{"d":"x,}"}],"e":2,"c":3},"a":{}}'), ['b.c', 'a']);
    assert.deepEqual(duplicateKeys('{"a":"\\"a\\"","b":[1,2]}'), []);
  });

  it('name the image once in every line of a pull: pulling, an attempt failed, pulled', async () => {
    const lines: string[] = [];
    const logger = pino(
      { level: 'info' },
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(...chunk.toString().split('\n').filter(Boolean));
          done();
        },
      }),
    );
    const transport = new FakeTransport((req) => {
      if (req.method === 'GET' && req.path.includes('watch=')) return { status: 200 };
      if (req.method === 'GET')
        return { status: 200, body: { metadata: { resourceVersion: '5' }, items: [nodeImage] } };
      if (req.method === 'PATCH') return { status: 200, body: nodeImage };
      return { status: 201, body: {} };
    });
    const client = new KubeClient(
      { server: 'http://127.0.0.1:1', insecureSkipTLSVerify: false, auth: { kind: 'none' }, origin: 'test' },
      { transport },
    );
    const runtime = new FakeImageRuntime();
    runtime.script.set(`${REG}/test/busybox:2.0`, [{ fail: 'registry hiccup' }, { id: `sha256:${'b'.repeat(64)}` }]);
    const clock = new FakeClock();
    const controller = new ImagePullController({
      nodeName: NODE,
      client,
      runtime: () => Promise.resolve(runtime),
      clock,
      logger,
      metrics: imagePullMetrics(createRegistry()),
      pinStore: () => Promise.resolve(new FakeLabelStore()),
    });
    controller.start();
    try {
      await waitFor(() => lines.filter((l) => l.includes('"msg":"image pulled"')).length === 1, {
        message: `1.0 pulled; lines: ${lines.join('\n')}`,
      });
      await waitFor(() => lines.some((l) => l.includes('"msg":"image pull attempt failed"')), {
        message: `2.0 failed once; lines: ${lines.join('\n')}`,
      });
      await clock.advance(10_000); // 2.0's backoff
      await waitFor(() => lines.filter((l) => l.includes('"msg":"image pulled"')).length === 2, {
        message: `2.0 pulled; lines: ${lines.join('\n')}`,
      });
    } finally {
      await controller.stop();
    }
    const pullLines = lines.filter((l) => /"msg":"(pulling image|image pull attempt failed|image pulled)"/.test(l));
    assert.equal(pullLines.length, 5, lines.join('\n'));
    for (const line of lines) assert.deepEqual(duplicateKeys(line), [], line);
    for (const line of pullLines) {
      const fields = JSON.parse(line) as { image?: string };
      assert.match(fields.image ?? '', new RegExp(`^${REG}/test/busybox:[12]\\.0$`), line);
    }
  });
});
