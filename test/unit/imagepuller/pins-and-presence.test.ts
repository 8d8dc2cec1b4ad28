// The image puller with pins and the presence check (controller, TagPulls, ImagePins, ImagePresence) on a fake API
// server and a fake runtime whose images carry containerd-like labels: a Succeeded tag's image is pinned and marked
// ours; an image that leaves the node is noticed at the next check (5 s), reported by an event and pulled again, its
// status saying so; a tag that leaves the spec has its pin released.
import assert from 'node:assert/strict';
import { CONTAINERD_PINNED_LABEL } from '../../../src/cri/containerd-images.js';
import { ImagePullController, PULLED_AGAIN_NOTE } from '../../../src/daemon/imagepuller/controller.js';
import { PINNED_BY_LABEL } from '../../../src/daemon/imagepuller/image-pins.js';
import { imagePullMetrics } from '../../../src/daemon/imagepuller/metrics.js';
import { KubeClient } from '../../../src/kube/client.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { createRegistry } from '../../../src/observability/metrics.js';
import { FakeClock } from '../../../src/util/clock.js';
import { waitFor } from '../../support/wait.js';
import { FakeTransport } from '../kube/support/fake-transport.js';
import { FakeImageRuntime, FakeLabelStore } from './fakes.js';

const NODE = 'node-a';
const IMAGE = '127.0.0.1:5000/test/busybox';
const REF = `${IMAGE}:1.0`;

interface TagStatus {
  tag: string;
  phase: string;
  message?: string;
}

function nodeImage(tags: string[], resourceVersion: string, status?: unknown) {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'NodeImage',
    metadata: { name: NODE, uid: 'u1', resourceVersion },
    spec: { images: { [IMAGE]: { tags: tags.map((tag) => ({ tag })) } } },
    ...(status !== undefined && { status }),
  };
}

describe('imagepuller: pins and the presence check', () => {
  it('pins a Succeeded tag, pulls it again when its image leaves the node, releases the pin when the tag leaves', async () => {
    let object = nodeImage(['1.0'], '5');
    let version = 5;
    const events: { reason?: string; message?: string }[] = [];
    const transport = new FakeTransport((req) => {
      if (req.method === 'GET' && req.path.includes('watch=')) return { status: 200 };
      if (req.method === 'GET') return { status: 200, body: { metadata: { resourceVersion: '5' }, items: [object] } };
      if (req.method === 'PATCH') {
        const patch = JSON.parse(req.body ?? '{}') as { status?: unknown };
        object = { ...object, metadata: { ...object.metadata, resourceVersion: String(++version) } };
        if (patch.status !== undefined) object = { ...object, status: patch.status };
        return { status: 200, body: object };
      }
      if (req.method === 'POST' && req.path.includes('/events')) {
        events.push(JSON.parse(req.body ?? '{}') as { reason?: string; message?: string });
      }
      return { status: 201, body: {} };
    });
    const client = new KubeClient(
      { server: 'http://127.0.0.1:1', insecureSkipTLSVerify: false, auth: { kind: 'none' }, origin: 'test' },
      { transport },
    );
    const runtime = new FakeImageRuntime();
    const labels = new FakeLabelStore(runtime);
    const clock = new FakeClock();
    const controller = new ImagePullController({
      nodeName: NODE,
      client,
      runtime: () => Promise.resolve(runtime),
      clock,
      logger: silentLogger,
      metrics: imagePullMetrics(createRegistry()),
      pinStore: () => Promise.resolve(labels),
    });
    const tagStatus = (): TagStatus | undefined =>
      (object as { status?: { imageStatuses?: Record<string, { tags?: TagStatus[] }> } }).status?.imageStatuses?.[IMAGE]
        ?.tags?.[0];
    controller.start();
    try {
      await waitFor(() => labels.images.get(REF)?.[CONTAINERD_PINNED_LABEL] === 'pinned', {
        message: `pinned after the pull: ${JSON.stringify([...labels.images])}`,
      });
      assert.equal(labels.images.get(REF)?.[PINNED_BY_LABEL], 'kruise-daemon');
      assert.equal(runtime.pullsOf(REF).length, 1);

      // the image leaves the node (kubelet's GC, crictl rmi): the next check sees it, and it is pulled again
      runtime.present.delete(REF);
      await clock.advance(5_000);
      await waitFor(() => runtime.pullsOf(REF).length === 2, { message: 'pulled again after the check' });
      await waitFor(() => events.some((e) => e.reason === 'PulledImageRemoved'), { message: 'event' });
      assert.match(events.find((e) => e.reason === 'PulledImageRemoved')?.message ?? '', /was removed from the node/);
      await waitFor(() => labels.images.get(REF)?.[CONTAINERD_PINNED_LABEL] === 'pinned', {
        message: 'pinned again',
      });
      await clock.advance(10_000); // the status writer's interval
      await waitFor(() => tagStatus()?.message === PULLED_AGAIN_NOTE, {
        message: 'the status says why it was pulled again',
      });
      assert.equal(tagStatus()?.phase, 'Succeeded');

      // the tag leaves the spec (the job's TTL): its pin is released
      object = nodeImage([], String(++version), (object as { status?: unknown }).status);
      transport.streams[0]!.write(`${JSON.stringify({ type: 'MODIFIED', object })}\n`);
      await waitFor(() => labels.images.get(REF)?.[CONTAINERD_PINNED_LABEL] === undefined, {
        message: 'unpinned when the tag left the spec',
      });
      assert.equal(labels.images.get(REF)?.[PINNED_BY_LABEL], undefined);
    } finally {
      await controller.stop();
    }
  });
});
