import assert from 'node:assert/strict';
import {
  formatAge,
  formatBytes,
  imageDocuments,
  nanosToMillis,
  psDocument,
  renderImages,
  renderInfo,
  renderPs,
  renderTable,
  shortId,
  stateWord,
} from '../../../src/cri/present.js';
import type { Container__Output, Image__Output, PodSandbox__Output } from '../../../src/cri/types.js';

const NOW = Date.parse('2025-01-01T12:00:00Z');
const nanos = (iso: string): string => (BigInt(Date.parse(iso)) * 1_000_000n).toString();

function image(id: string, tags: string[], size: string, digests: string[] = []): Image__Output {
  return {
    id,
    repo_tags: tags,
    repo_digests: digests,
    size,
    uid: null,
    username: '',
    spec: null,
    pinned: false,
    image_source: '',
  };
}

describe('cri present (tables and JSON of `kruise-daemon cri`)', () => {
  it('renders aligned tables without trailing spaces', () => {
    assert.equal(
      renderTable(
        ['A', 'LONG HEADER', 'C'],
        [
          ['xxxxx', 'y', ''],
          ['1', '2', '3'],
        ],
      ),
      'A       LONG HEADER   C\nxxxxx   y\n1       2             3\n',
    );
  });

  it('formats sizes, ages, IDs and states', () => {
    assert.equal(formatBytes(0), '0 B');
    assert.equal(formatBytes('1073741'), '1.0 MiB');
    assert.equal(formatBytes('5368709120'), '5.0 GiB');
    assert.equal(formatBytes('x'), '-');
    assert.equal(nanosToMillis('1700000000123456789'), 1700000000123);
    assert.equal(nanosToMillis('0'), undefined);
    assert.equal(nanosToMillis('garbage'), undefined);
    assert.equal(formatAge(NOW - 5_000, NOW), '5s ago');
    assert.equal(formatAge(NOW - 3 * 60_000, NOW), '3m ago');
    assert.equal(formatAge(NOW - 2 * 3_600_000, NOW), '2h ago');
    assert.equal(formatAge(NOW - 3 * 86_400_000, NOW), '3d ago');
    assert.equal(formatAge(undefined, NOW), '-');
    assert.equal(shortId('sha256:0123456789abcdef0123'), '0123456789abc');
    assert.equal(stateWord('SANDBOX_NOTREADY'), 'NotReady');
    assert.equal(stateWord('CONTAINER_RUNNING'), 'Running');
  });

  it('lists one row per tag, untagged images by digest name, sorted', () => {
    const docs = imageDocuments([
      image('sha256:bbbbbbbbbbbbbbbbbbbb', ['127.0.0.1:5000/test/busybox:2.0'], '1100000'),
      image(
        'sha256:aaaaaaaaaaaaaaaaaaaa',
        ['127.0.0.1:5000/test/busybox:1.0', '127.0.0.1:5001/test/busybox:1.0'],
        '1048576',
      ),
      image('sha256:cccccccccccccccccccc', [], '10', ['127.0.0.1:5000/test/pause@sha256:dd']),
    ]);
    assert.deepEqual(docs[1], {
      id: 'sha256:aaaaaaaaaaaaaaaaaaaa',
      repoTags: ['127.0.0.1:5000/test/busybox:1.0', '127.0.0.1:5001/test/busybox:1.0'],
      repoDigests: [],
      size: 1048576,
      pinned: false,
    });
    assert.equal(
      renderImages(docs),
      [
        'IMAGE                         TAG      IMAGE ID        SIZE',
        '127.0.0.1:5000/test/busybox   1.0      aaaaaaaaaaaaa   1.0 MiB',
        '127.0.0.1:5000/test/busybox   2.0      bbbbbbbbbbbbb   1.0 MiB',
        '127.0.0.1:5000/test/pause     <none>   ccccccccccccc   10 B',
        '127.0.0.1:5001/test/busybox   1.0      aaaaaaaaaaaaa   1.0 MiB',
        '',
      ].join('\n'),
    );
  });

  it('shows runtime info with its conditions', () => {
    const text = renderInfo({
      socket: '/run/containerd/containerd.sock',
      runtimeName: 'containerd',
      runtimeVersion: '1.6.20~ds1',
      runtimeApiVersion: 'v1',
      conditions: [
        { type: 'RuntimeReady', status: true, reason: '', message: '' },
        { type: 'NetworkReady', status: false, reason: 'NetworkPluginNotReady', message: 'cni config uninitialized' },
      ],
    });
    assert.equal(
      text,
      [
        'Socket            /run/containerd/containerd.sock',
        'Runtime           containerd',
        'Runtime version   1.6.20~ds1',
        'CRI API version   v1',
        'RuntimeReady      true',
        'NetworkReady      false (NetworkPluginNotReady: cni config uninitialized)',
        '',
      ].join('\n'),
    );
  });

  it('shows sandboxes and containers with state, pod and age; JSON keeps CRI names and ISO times', () => {
    const sandbox: PodSandbox__Output = {
      id: 'a1b2c3d4e5f6a7b8c9d0',
      metadata: { name: 'web-0', namespace: 'default', uid: 'u-1', attempt: 0 },
      state: 'SANDBOX_READY',
      created_at: nanos('2025-01-01T11:58:00Z'),
      labels: {},
      annotations: {},
      runtime_handler: '',
    };
    const container: Container__Output = {
      id: 'f0e1d2c3b4a5968778695a4b',
      pod_sandbox_id: sandbox.id,
      metadata: { name: 'app', attempt: 1 },
      image: {
        image: '127.0.0.1:5000/test/busybox:1.0',
        annotations: {},
        user_specified_image: '',
        runtime_handler: '',
      },
      image_ref: 'sha256:aaaa',
      state: 'CONTAINER_EXITED',
      created_at: nanos('2025-01-01T11:59:30Z'),
      labels: {},
      annotations: {},
      image_id: '',
    };
    const doc = psDocument([sandbox], [container]);
    assert.deepEqual(doc.sandboxes[0], {
      id: sandbox.id,
      namespace: 'default',
      name: 'web-0',
      uid: 'u-1',
      attempt: 0,
      state: 'SANDBOX_READY',
      createdAt: '2025-01-01T11:58:00.000Z',
      runtimeHandler: '',
    });
    assert.equal(doc.containers[0]?.state, 'CONTAINER_EXITED');
    assert.equal(
      renderPs(doc, NOW),
      [
        'POD ID          POD             STATE   CREATED   ATTEMPT',
        'a1b2c3d4e5f6a   default/web-0   Ready   2m ago    0',
        '',
        'CONTAINER ID    NAME   STATE    POD ID          POD             IMAGE                             CREATED   ATTEMPT',
        'f0e1d2c3b4a59   app    Exited   a1b2c3d4e5f6a   default/web-0   127.0.0.1:5000/test/busybox:1.0   30s ago   1',
        '',
      ].join('\n'),
    );
    assert.equal(renderPs({ sandboxes: [], containers: [] }, NOW), 'No pod sandboxes.\n\nNo containers.\n');
  });
});
