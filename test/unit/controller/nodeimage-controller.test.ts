// The nodeimage controller's reconcile with fake caches, a recording client and a FakeClock: the Ready delay before a
// NodeImage is created, deletion with the Node (not for fake NodeImages), GC writes from a fresh read.
import assert from 'node:assert/strict';
import { NodeImageController } from '../../../src/controller/nodeimage/controller.js';
import type { SecretObject } from '../../../src/controller/resources.js';
import type { ImagePullJob } from '../../../src/api/imagepulljob.js';
import type { NodeImage } from '../../../src/api/nodeimage.js';
import type { WireNode } from '../../../src/api/wire.js';
import { controllerMetrics } from '../../../src/controller/shared/metrics.js';
import type { KubeClient } from '../../../src/kube/client.js';
import { ApiError } from '../../../src/kube/errors.js';
import type { EventRecorder } from '../../../src/kube/event-recorder.js';
import type { Informer } from '../../../src/kube/informer/informer.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { createRegistry } from '../../../src/observability/metrics.js';
import { FakeClock } from '../../../src/util/clock.js';

function cache<T extends KubeObject>(objects: T[]): Informer<T> {
  const byKey = new Map(
    objects.map((o) => [
      o.metadata?.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : (o.metadata?.name ?? ''),
      o,
    ]),
  );
  return {
    get: (key: string) => byKey.get(key),
    list: () => [...byKey.values()],
    addHandlers: () => () => undefined,
    store: { byIndex: () => [] },
  } as unknown as Informer<T>;
}

interface Call {
  verb: string;
  name: string;
  body?: unknown;
}

function recordingClient(stored: Record<string, KubeObject> = {}): { client: KubeClient; calls: Call[] } {
  const calls: Call[] = [];
  const notFound = (name: string): ApiError =>
    ApiError.fromResponse(
      404,
      JSON.stringify({ kind: 'Status', code: 404, reason: 'NotFound', message: `${name} not found` }),
      'GET',
      name,
    );
  const client = {
    create: (_rt: unknown, obj: KubeObject) => {
      calls.push({ verb: 'create', name: obj.metadata?.name ?? '', body: obj });
      return Promise.resolve(obj);
    },
    delete: (_rt: unknown, name: string) => {
      calls.push({ verb: 'delete', name });
      return Promise.resolve({});
    },
    get: (_rt: unknown, name: string) => {
      calls.push({ verb: 'get', name });
      const o = stored[name];
      if (!o) return Promise.reject(notFound(name));
      return Promise.resolve(structuredClone(o));
    },
    update: (_rt: unknown, obj: KubeObject) => {
      calls.push({ verb: 'update', name: obj.metadata?.name ?? '', body: obj });
      return Promise.resolve(obj);
    },
    updateStatus: (_rt: unknown, obj: KubeObject) => {
      calls.push({ verb: 'updateStatus', name: obj.metadata?.name ?? '', body: obj });
      return Promise.resolve(obj);
    },
  } as unknown as KubeClient;
  return { client, calls };
}

const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
const iso = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');

function node(name: string, readyAgoMs: number | undefined, labels: Record<string, string> = { zone: 'a' }): WireNode {
  const conditions =
    readyAgoMs === undefined
      ? [{ type: 'Ready', status: 'False' }]
      : [{ type: 'Ready', status: 'True', lastTransitionTime: iso(clock.now() - readyAgoMs) }];
  return { metadata: { name, labels }, status: { conditions } };
}

function controller(
  nodes: WireNode[],
  nodeImages: NodeImage[],
  client: KubeClient,
  secretCopies: SecretObject[] = [],
): NodeImageController {
  return new NodeImageController({
    client,
    nodes: cache(nodes),
    nodeImages: cache(nodeImages),
    jobs: cache<ImagePullJob>([]),
    secretCopies: cache(secretCopies),
    events: { event: () => undefined } as unknown as EventRecorder,
    clock,
    logger: silentLogger,
    metrics: controllerMetrics(createRegistry()),
    creationDelayMs: 30_000,
  });
}

describe('nodeimage controller: reconcile', () => {
  it('waits until the Node has been Ready for the delay, then creates its NodeImage with the Node labels', async () => {
    const { client, calls } = recordingClient();
    assert.deepEqual(await controller([node('n1', 10_000)], [], client).reconcile('n1'), { requeueAfter: 20_000 });
    assert.equal(calls.length, 0);
    await controller([node('n1', 30_000)], [], client).reconcile('n1');
    assert.deepEqual(
      calls.map((c) => [c.verb, c.name]),
      [['create', 'n1']],
    );
    assert.deepEqual((calls[0]?.body as NodeImage).metadata.labels, { zone: 'a' });
  });

  it('does nothing for a Node that is not Ready or is a virtual kubelet', async () => {
    const { client, calls } = recordingClient();
    await controller([node('n1', undefined)], [], client).reconcile('n1');
    await controller([node('vk', 60_000, { type: 'virtual-kubelet' })], [], client).reconcile('vk');
    assert.equal(calls.length, 0);
  });

  it('deletes the NodeImage of a Node that is gone, but not a fake one', async () => {
    const { client, calls } = recordingClient();
    const ni = { metadata: { name: 'n1', uid: 'u' }, spec: {} } as NodeImage;
    const fake = {
      metadata: { name: 'f1', labels: { 'apps.kruise.io/fake-nodeimage': 'true' } },
      spec: {},
    } as NodeImage;
    await controller([], [ni, fake], client).reconcile('n1');
    await controller([], [ni, fake], client).reconcile('f1');
    assert.deepEqual(
      calls.map((c) => [c.verb, c.name]),
      [
        ['get', 'n1'],
        ['delete', 'n1'],
      ],
    );
  });

  it('writes label changes and collected tags from a fresh read, and nothing when all is current', async () => {
    const ni = {
      metadata: { name: 'n1', labels: { zone: 'old' }, resourceVersion: '5' },
      spec: { images: { nginx: { tags: [{ tag: '1' }] } } },
    } as NodeImage;
    const { client, calls } = recordingClient({ n1: ni });
    await controller([node('n1', 60_000)], [ni], client).reconcile('n1');
    assert.deepEqual(
      calls.map((c) => c.verb),
      ['get', 'update'],
    );
    const written = calls[1]?.body as NodeImage;
    assert.deepEqual(written.metadata.labels, { zone: 'a' });
    assert.deepEqual(written.spec?.images, {});
    assert.equal(written.metadata.resourceVersion, '5', 'the update is checked against the version read');

    const current = { metadata: { name: 'n1', labels: { zone: 'a' } }, spec: {} } as NodeImage;
    const quiet = recordingClient({ n1: current });
    assert.equal(await controller([node('n1', 60_000)], [current], quiet.client).reconcile('n1'), undefined);
    assert.equal(quiet.calls.length, 0);
  });

  it('drops a reference to a pull-secret copy that is gone (not cached, and a GET says 404), keeps the others', async () => {
    const kdc = 'kruise-daemon-config';
    const copy = (name: string): SecretObject => ({ metadata: { name, namespace: kdc } });
    const ni = {
      metadata: { name: 'n1', labels: { zone: 'a' }, resourceVersion: '5' },
      spec: {
        images: {
          nginx: {
            tags: [{ tag: '1', createdAt: iso(clock.now()) }],
            pullSecrets: [
              { namespace: kdc, name: 'copy-deleted', mode: 'batch' },
              { namespace: kdc, name: 'copy-cached', mode: 'batch' },
              { namespace: kdc, name: 'copy-not-cached-yet', mode: 'batch' },
            ],
          },
        },
      },
    } as NodeImage;
    const { client, calls } = recordingClient({ n1: ni, 'copy-not-cached-yet': copy('copy-not-cached-yet') });
    await controller([node('n1', 60_000)], [ni], client, [copy('copy-cached')]).reconcile('n1');
    assert.deepEqual(
      calls.map((c) => `${c.verb} ${c.name}`),
      ['get copy-deleted', 'get copy-not-cached-yet', 'get n1', 'update n1'],
    );
    const written = calls[3]?.body as NodeImage;
    assert.deepEqual(
      written.spec?.images?.nginx?.pullSecrets?.map((ref) => ref.name),
      ['copy-cached', 'copy-not-cached-yet'],
    );
    assert.equal(written.spec?.images?.nginx?.tags.length, 1, 'the tag stays');
  });
});
