// The image puller's controller on a fake API server (its NodeImage, status PATCHes applied, events recorded) and
// a fake runtime whose images carry containerd-like labels: for the tests of pins, the presence check and the disk.
import type { FsSpace } from '../../../src/daemon/imagepuller/image-fs.js';
import type { ContentStore } from '../../../src/cri/containerd-content.js';
import { ImagePullController } from '../../../src/daemon/imagepuller/controller.js';
import { imagePullMetrics } from '../../../src/daemon/imagepuller/metrics.js';
import { KubeClient } from '../../../src/kube/client.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { createRegistry } from '../../../src/observability/metrics.js';
import { FakeClock } from '../../../src/util/clock.js';
import { FakeTransport } from '../kube/support/fake-transport.js';
import { FakeImageRuntime, FakeLabelStore } from './fakes.js';

export const NODE = 'node-a';
export const IMAGE = '127.0.0.1:5000/test/busybox';

export interface TagStatus {
  tag: string;
  phase: string;
  message?: string;
  progress?: number;
}

interface NodeImageObject {
  metadata: { name: string; uid: string; resourceVersion: string };
  spec: { images: Record<string, { tags: { tag: string; createdAt?: string }[] }> };
  status?: { imageStatuses?: Record<string, { tags?: TagStatus[] }> };
}

export interface Harness {
  controller: ImagePullController;
  runtime: FakeImageRuntime;
  labels: FakeLabelStore;
  clock: FakeClock;
  events: { reason?: string; message?: string }[];
  /** Status PATCHes sent so far. */
  statusWrites(): number;
  tagStatus(tag: string): TagStatus | undefined;
  /** Replace the spec's tags (a watch event, as the API server sends it). */
  setTags(tags: { tag: string; createdAt?: string }[]): void;
}

export function startController(
  tags: { tag: string; createdAt?: string }[],
  options: {
    disk?: { space: (path: string) => Promise<FsSpace> };
    content?: ContentStore;
    /** References whose pulls hang until cancelled. */
    hang?: string[];
    /** References on the node before the start. */
    present?: string[];
    /** The runtime cannot pin, for this reason. */
    unsupportedPins?: string;
    /** The NodeImage's status as an earlier agent left it. */
    status?: NodeImageObject['status'];
  } = {},
): Harness {
  let version = 5;
  let object: NodeImageObject = {
    metadata: { name: NODE, uid: 'u1', resourceVersion: '5' },
    spec: { images: { [IMAGE]: { tags } } },
    ...(options.status !== undefined && { status: options.status }),
  };
  const events: Harness['events'] = [];
  let writes = 0;
  const transport = new FakeTransport((req) => {
    if (req.method === 'GET' && req.path.includes('watch=')) return { status: 200 };
    if (req.method === 'GET') return { status: 200, body: { metadata: { resourceVersion: '5' }, items: [object] } };
    if (req.method === 'PATCH') {
      writes++;
      const patch = JSON.parse(req.body ?? '{}') as { status?: NodeImageObject['status'] };
      object = { ...object, metadata: { ...object.metadata, resourceVersion: String(++version) } };
      if (patch.status !== undefined) object = { ...object, status: patch.status };
      return { status: 200, body: { apiVersion: 'apps.kruise.io/v1beta1', kind: 'NodeImage', ...object } };
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
  for (const reference of options.hang ?? []) runtime.script.set(reference, ['hang']);
  for (const reference of options.present ?? []) runtime.present.set(reference, `sha256:${'e'.repeat(64)}`);
  const labels = new FakeLabelStore(runtime);
  const clock = new FakeClock();
  const controller = new ImagePullController({
    nodeName: NODE,
    client,
    runtime: () => Promise.resolve(runtime),
    clock,
    logger: silentLogger,
    metrics: imagePullMetrics(createRegistry()),
    pinStore: () =>
      Promise.resolve(options.unsupportedPins !== undefined ? { unsupported: options.unsupportedPins } : labels),
    ...(options.disk && { disk: { space: options.disk.space } }),
    ...(options.content && { contentStore: () => Promise.resolve(options.content) }),
  });
  controller.start();
  return {
    controller,
    runtime,
    labels,
    clock,
    events,
    statusWrites: () => writes,
    tagStatus: (tag) => object.status?.imageStatuses?.[IMAGE]?.tags?.find((t) => t.tag === tag),
    setTags(next) {
      object = {
        ...object,
        metadata: { ...object.metadata, resourceVersion: String(++version) },
        spec: { images: next.length > 0 ? { [IMAGE]: { tags: next } } : {} },
      };
      const event = {
        type: 'MODIFIED',
        object: { apiVersion: 'apps.kruise.io/v1beta1', kind: 'NodeImage', ...object },
      };
      transport.streams[0]!.write(`${JSON.stringify(event)}\n`);
    },
  };
}
