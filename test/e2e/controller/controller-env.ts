// emulator: startControllerEnv serves the scale and PersistentPodState benchmarks (Nodes and pods no kubelet runs); the
// e2e tests on the real cluster use only its job and NodeImage helpers
// What the controller's e2e tests and the scale benchmark share: an in-process API emulator with deploy/crds and the
// namespaces the controller needs, a kubeconfig for it, Ready Nodes, the controller as a real process, a test
// client, and helpers to read jobs and NodeImages.
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load as loadYaml } from 'js-yaml';
import { KubeClient } from '../../../src/kube/client.js';
import { isAlreadyExists, isNotFound } from '../../../src/kube/errors.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { CoreResources } from '../../../src/kube/resource.js';
import { packageRoot } from '../../../src/util/repo-root.js';
import { IMAGE_LIST_PULL_JOBS, type ImageListPullJob } from '../../../src/api/imagelistpulljob.js';
import { IMAGE_PULL_JOBS, type ImagePullJob } from '../../../src/api/imagepulljob.js';
import { NODE_IMAGES, type NodeImage } from '../../../src/api/nodeimage.js';
import {
  startApiServer,
  writeKubeconfig,
  type ApiServer,
  type ApiServerOptions,
} from '../../cluster/apiserver/index.js';
import { waitFor } from '../../support/wait.js';
import { ensureNamespace } from '../../support/test-namespace.js';
import { ControllerProcess, freePort } from './controller-process.js';

export const TEST_USER_AGENT = 'kd-controller-test';
export const CRD_TYPE = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  resource: 'customresourcedefinitions',
  namespaced: false,
  kind: 'CustomResourceDefinition',
};

export interface ControllerEnv {
  api: ApiServer;
  kubeconfig: string;
  dir: string;
  client: KubeClient;
  controller?: ControllerProcess;
  startController(extraArgs?: string[]): Promise<ControllerProcess>;
  close(): Promise<void>;
}

export async function startControllerEnv(apiOptions: ApiServerOptions = {}): Promise<ControllerEnv> {
  const api = await startApiServer({ bookmarkIntervalMs: 5_000, ...apiOptions });
  const dir = await mkdtemp(join(tmpdir(), 'kd-controller-'));
  const kubeconfig = join(dir, 'kubeconfig');
  await writeKubeconfig(kubeconfig, api.url);
  const client = new KubeClient(
    { server: api.url, insecureSkipTLSVerify: false, auth: { kind: 'none' }, origin: `emulator ${api.url}` },
    { userAgent: TEST_USER_AGENT, timeoutMs: 30_000 },
  );
  const statusPort = await freePort();
  const webhookPort = await freePort();
  const env: ControllerEnv = {
    api,
    kubeconfig,
    dir,
    client,
    async startController(extraArgs = []) {
      const controller = new ControllerProcess({
        kubeconfig,
        statusPort,
        webhookPort,
        certDir: join(dir, 'certs'),
        extraArgs: ['--nodeimage-creation-delay', '1s', ...extraArgs],
      });
      env.controller = controller;
      await controller.ready();
      return controller;
    },
    async close() {
      await env.controller?.stop();
      client.close();
      await api.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
  await applyCrds(client);
  for (const ns of ['kruise-system', 'kruise-daemon-config']) await ensureNamespace(client, ns);
  return env;
}

export async function applyCrds(client: KubeClient): Promise<void> {
  const dir = join(packageRoot(), 'deploy', 'crds');
  for (const file of readdirSync(dir).filter((f) => f.startsWith('apps.kruise.io_') && f.endsWith('.yaml'))) {
    const crd = loadYaml(readFileSync(join(dir, file), 'utf8')) as KubeObject;
    await client.create(CRD_TYPE, crd).catch((err: unknown) => {
      if (!isAlreadyExists(err)) throw err;
    });
  }
  await waitFor(
    async () => {
      await client.list(NODE_IMAGES);
      await client.list(IMAGE_PULL_JOBS, { namespace: 'default' });
      await client.list(IMAGE_LIST_PULL_JOBS, { namespace: 'default' });
      return true;
    },
    { timeoutMs: 10_000, message: 'the image kinds to be served' },
  );
}

/** A Node that has been Ready for a minute (so the NodeImage creation delay has passed). */
export async function createReadyNode(
  client: KubeClient,
  name: string,
  labels: Record<string, string> = {},
): Promise<void> {
  const since = new Date(Date.now() - 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
  const node = {
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...labels } },
    status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: since, reason: 'KubeletReady' }] },
  };
  try {
    await client.create(CoreResources.nodes, node);
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
  // status is a subresource for Nodes: make sure it says Ready
  const stored = await client.get<KubeObject & { status?: unknown }>(CoreResources.nodes, name);
  if (JSON.stringify(stored.status ?? {}).includes('"Ready"')) return;
  await client.updateStatus(CoreResources.nodes, { ...stored, status: node.status });
}

export async function getJob(client: KubeClient, namespace: string, name: string): Promise<ImagePullJob | undefined> {
  try {
    return await client.get<ImagePullJob>(IMAGE_PULL_JOBS, name, { namespace });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

export async function getListJob(
  client: KubeClient,
  namespace: string,
  name: string,
): Promise<ImageListPullJob | undefined> {
  try {
    return await client.get<ImageListPullJob>(IMAGE_LIST_PULL_JOBS, name, { namespace });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

export async function getNodeImage(client: KubeClient, name: string): Promise<NodeImage | undefined> {
  try {
    return await client.get<NodeImage>(NODE_IMAGES, name);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** Wait for a job's status to satisfy `check`; the last status is in the error. */
export async function waitForJob(
  client: KubeClient,
  namespace: string,
  name: string,
  check: (job: ImagePullJob) => boolean,
  timeoutMs = 60_000,
): Promise<ImagePullJob> {
  let last: unknown;
  try {
    return await waitFor(
      async () => {
        const job = await getJob(client, namespace, name);
        last = job?.status;
        return job && check(job) ? job : undefined;
      },
      { timeoutMs, intervalMs: 100, message: `ImagePullJob ${namespace}/${name}` },
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}; last status: ${JSON.stringify(last)}`);
  }
}
