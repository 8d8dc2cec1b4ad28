// emulator: the subject under test (the emulator's own component tests)
// The emulator as a cluster component: a detached process with a PID file, a kubeconfig, the Node registered,
// state kept across down/up only when asked.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClusterContext } from '../../cluster/component.js';
import { apiServerComponent, apiServerPaths } from '../../cluster/apiserver/component.js';
import { isAlive } from '../../cluster/runtime/processes.js';
import { RawClient } from './http-client.js';

describe('API emulator cluster component (process)', function () {
  this.timeout(60_000);
  let dir: string;
  let ctx: ClusterContext;
  const logs: string[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'apiserver-component-'));
    await mkdir(join(dir, 'run'), { recursive: true });
    await mkdir(join(dir, 'logs'), { recursive: true });
    ctx = { dir, env: { NODE_NAME: 'kd-test-node' }, log: (m) => logs.push(m) };
  });
  after(async () => {
    await apiServerComponent().down(ctx);
    await rm(dir, { recursive: true, force: true });
  });

  it('starts detached, writes a kubeconfig and registers the Node', async () => {
    const env = await apiServerComponent().up(ctx);
    assert.equal(env.NODE_NAME, 'kd-test-node');
    assert.equal(env.KUBECONFIG, join(dir, 'kubeconfig'));
    assert.match(env.API_SERVER_URL!, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.match(await readFile(env.KUBECONFIG!, 'utf8'), new RegExp(env.API_SERVER_URL!));
    const api = new RawClient(env.API_SERVER_URL!);
    const node = await api.get('/api/v1/nodes/kd-test-node');
    assert.equal(node.status, 200);
    assert.equal(node.body.metadata.labels['kubernetes.io/os'], 'linux');
    assert.equal(node.body.metadata.labels['kubernetes.io/arch'], 'amd64');
    assert.equal(node.body.status.conditions.find((c: any) => c.type === 'Ready').status, 'True');
    const pid = Number((await readFile(apiServerPaths(dir).pidFile, 'utf8')).trim());
    assert.ok(isAlive(pid));
    const again = await apiServerComponent().up(ctx);
    assert.equal(again.API_SERVER_URL, env.API_SERVER_URL);
    assert.equal(Number((await readFile(apiServerPaths(dir).pidFile, 'utf8')).trim()), pid, 'up is idempotent');
  });

  it('keeps data across down/up only when asked', async () => {
    const env = await apiServerComponent().up(ctx);
    const api = new RawClient(env.API_SERVER_URL!);
    await api.create('/api/v1/namespaces/default/configmaps', { metadata: { name: 'kept' } });
    await apiServerComponent().down(ctx);
    const kept = await apiServerComponent({ keepData: true }).up(ctx);
    assert.equal(kept.API_SERVER_URL, env.API_SERVER_URL, 'same port after a restart');
    assert.equal((await api.get('/api/v1/namespaces/default/configmaps/kept')).status, 200);
    await apiServerComponent().down(ctx);
    await apiServerComponent({ keepData: false }).up(ctx);
    assert.equal((await api.get('/api/v1/namespaces/default/configmaps/kept')).status, 404);
    assert.equal((await api.get('/api/v1/nodes/kd-test-node')).status, 200, 'the Node is registered again');
  });

  it('down stops the process and is a no-op when nothing runs', async () => {
    const pid = Number((await readFile(apiServerPaths(dir).pidFile, 'utf8')).trim());
    await apiServerComponent().down(ctx);
    assert.equal(isAlive(pid), false);
    await apiServerComponent().down(ctx);
  });
});
