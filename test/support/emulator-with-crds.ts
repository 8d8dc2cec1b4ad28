// emulator: an in-process API server with deploy/'s CRDs, for unit tests and benches that need no cluster
// An in-process API emulator with deploy/crds applied and a kubeconfig file for it: what an agent process needs
// to be healthy (its NodeImage informer must sync). Used by the CRR unit tests and benchmarks.
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load as loadYaml } from 'js-yaml';
import { NODE_IMAGES } from '../../src/api/nodeimage.js';
import { KubeClient } from '../../src/kube/client.js';
import type { KubeObject } from '../../src/kube/object.js';
import type { Clock } from '../../src/util/clock.js';
import { packageRoot } from '../../src/util/repo-root.js';
import { startApiServer, writeKubeconfig, type ApiServer } from '../cluster/apiserver/index.js';
import { waitFor } from './wait.js';

export interface EmulatorWithCrds {
  api: ApiServer;
  /** A kubeconfig file for the emulator (give it to the agent as KUBECONFIG). */
  kubeconfig: string;
  /** A client for the test itself. */
  client: KubeClient;
  close(): Promise<void>;
}

export async function startEmulatorWithCrds(
  options: { applyCrds?: boolean; userAgent?: string; clock?: Clock } = {},
): Promise<EmulatorWithCrds> {
  const api = await startApiServer({ bookmarkIntervalMs: 5_000, clock: options.clock });
  const dir = await mkdtemp(join(tmpdir(), 'kd-emulator-'));
  const kubeconfig = join(dir, 'kubeconfig');
  await writeKubeconfig(kubeconfig, api.url);
  const client = new KubeClient(
    { server: api.url, insecureSkipTLSVerify: false, auth: { kind: 'none' }, origin: `emulator ${api.url}` },
    { userAgent: options.userAgent ?? 'kd-test', timeoutMs: 10_000 },
  );
  const env: EmulatorWithCrds = {
    api,
    kubeconfig,
    client,
    async close() {
      client.close();
      await api.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
  if (options.applyCrds ?? true) await applyCrds(client);
  return env;
}

/** Create the CustomResourceDefinitions of deploy/crds and wait until NodeImages are served. */
export async function applyCrds(client: KubeClient): Promise<void> {
  const dir = join(packageRoot(), 'deploy', 'crds');
  const crdType = {
    group: 'apiextensions.k8s.io',
    version: 'v1',
    resource: 'customresourcedefinitions',
    namespaced: false,
    kind: 'CustomResourceDefinition',
  };
  for (const file of readdirSync(dir).filter((f) => f.startsWith('apps.kruise.io_') && f.endsWith('.yaml'))) {
    const crd = loadYaml(readFileSync(join(dir, file), 'utf8')) as KubeObject;
    await client.create(crdType, crd);
  }
  await waitFor(
    async () => {
      await client.list(NODE_IMAGES);
      return true;
    },
    { timeoutMs: 10_000, message: 'NodeImages to be served' },
  );
}
