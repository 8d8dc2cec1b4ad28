// Pull-secret rotation: how soon an edit of a job's source pull secret is in its copy in kruise-daemon-config, the
// one secret the agents read. kruise-controller as a real process (its ServiceAccount token, bound to read pull
// secrets in the bench's namespace as docs/install.md says) on the real local cluster, one running (Never)
// ImagePullJob naming the secret and selecting no node; each edit is a PUT of the source, timed until a watch of
// kruise-daemon-config (this process's own informer) shows the copy with the new data. The controller's requests are
// read from its own metrics (kruise_controller_api_requests_total).
import { IMAGE_PULL_JOBS, type ImagePullJob } from '../../src/api/imagepulljob.js';
import type { SecretObject } from '../../src/controller/resources.js';
import { copyNameFor } from '../../src/controller/pullsecrets/secret-sync.js';
import { isNotFound } from '../../src/kube/errors.js';
import { Informer } from '../../src/kube/informer/informer.js';
import type { KubeObject } from '../../src/kube/object.js';
import { CoreResources, type ResourceType } from '../../src/kube/resource.js';
import type { ControllerProcess } from '../e2e/controller/controller-process.js';
import { startSystem, useRealCluster } from '../support/real-cluster.js';
import { createTestNamespace, deleteTestNamespace } from '../support/test-namespace.js';
import { waitFor } from '../support/wait.js';
import type { BenchSuite, Figure } from './framework.js';
import { percentile } from './stats.js';

const CONFIG_NS = 'kruise-daemon-config';
const MAX_EDITS = 50;
const ROLE_BINDINGS = {
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  resource: 'rolebindings',
  namespaced: true,
  kind: 'RoleBinding',
};

function token(i: number): Record<string, string> {
  const auth = Buffer.from(`user:password-${i}`).toString('base64');
  return { '.dockerconfigjson': Buffer.from(JSON.stringify({ auths: { 'r.invalid': { auth } } })).toString('base64') };
}

/** Every request kruise-controller has sent the API server, by its own counter. */
async function controllerRequests(controller: ControllerProcess): Promise<number> {
  let sum = 0;
  for (const m of (await controller.metrics()).matchAll(/^kruise_controller_api_requests_total\{[^}]*\} (\d+)$/gm)) {
    sum += Number(m[1]);
  }
  return sum;
}

export const pullSecretsSuite: BenchSuite = {
  name: 'pull-secrets',
  description: `source pull secret edited → its copy in ${CONFIG_NS} updated, p50/p90/max (kruise-controller process)`,
  inDefaultRun: true,
  async run(context) {
    const edits = Math.min(context.iterations, MAX_EDITS);
    const cluster = await useRealCluster();
    const client = cluster.admin;
    const system = await startSystem(cluster, { nodes: [] });
    context.defer(() => system.stop());
    const controller = system.controller!;
    const ns = await createTestNamespace(client, 'bench-secrets');
    const copyName = copyNameFor(ns, 'regcred');
    context.defer(async () => {
      // deleted while the controller runs, so it releases the job (its finalizer) and deletes the copy
      await deleteTestNamespace(client, ns);
      const gone = (rt: ResourceType, name: string, namespace?: string) => (): Promise<boolean> =>
        client.get(rt, name, namespace ? { namespace } : {}).then(
          () => false,
          (err: unknown) => {
            if (isNotFound(err)) return true;
            throw err;
          },
        );
      await waitFor(gone(CoreResources.namespaces, ns), { timeoutMs: 60_000, message: `namespace ${ns} gone` });
      await waitFor(gone(CoreResources.secrets, copyName, CONFIG_NS), { timeoutMs: 60_000, message: 'the copy gone' });
    });
    await client.create(
      ROLE_BINDINGS,
      {
        metadata: { name: 'kruise-controller-pull-secret-reader', namespace: ns },
        roleRef: {
          apiGroup: 'rbac.authorization.k8s.io',
          kind: 'ClusterRole',
          name: 'kruise-controller-pull-secret-reader',
        },
        subjects: [{ kind: 'ServiceAccount', name: 'kruise-controller', namespace: 'kruise-system' }],
      } as KubeObject,
      { namespace: ns },
    );
    let source = await client.create<SecretObject>(
      CoreResources.secrets,
      { metadata: { name: 'regcred', namespace: ns }, type: 'kubernetes.io/dockerconfigjson', data: token(0) },
      { namespace: ns },
    );
    const copies = new Informer<SecretObject>(CoreResources.secrets, client, { namespace: CONFIG_NS });
    context.defer(() => copies.stop());
    const copyKey = `${CONFIG_NS}/${copyName}`;
    /** When (performance.now()) the copy was first seen with each edit's data. */
    const seenAt = new Map<string, number>();
    const record = (s: SecretObject): void => {
      const data = s.data?.['.dockerconfigjson'];
      if (`${s.metadata?.namespace}/${s.metadata?.name}` === copyKey && data && !seenAt.has(data)) {
        seenAt.set(data, performance.now());
      }
    };
    copies.addHandlers({ onAdd: record, onUpdate: (_, s) => record(s) });
    copies.start();
    await copies.synced;

    await client.create<ImagePullJob>(
      IMAGE_PULL_JOBS,
      {
        metadata: { name: 'rotation', namespace: ns },
        spec: {
          image: 'r.invalid/app:1',
          pullSecrets: ['regcred'],
          // no node pulls anything: only the copy is measured
          selector: { matchLabels: { 'kruise-daemon.io/bench': 'no-such-node' } },
          completionPolicy: { type: 'Never' },
        },
      },
      { namespace: ns },
    );
    await waitFor(() => copies.get(copyKey), { timeoutMs: 30_000, message: 'the first copy' });
    context.log(`copy made; ${edits} edits of the source`);

    const requestsBefore = await controllerRequests(controller);
    const samples: number[] = [];
    for (let i = 1; i <= edits; i++) {
      const data = token(i);
      const started = performance.now();
      source = await client.update<SecretObject>(CoreResources.secrets, { ...source, data }, { namespace: ns });
      // The time is the handler's; polling only decides when the next edit starts.
      const at = await waitFor(() => seenAt.get(data['.dockerconfigjson']!), {
        timeoutMs: 30_000,
        intervalMs: 5,
        message: `edit ${i} in the copy`,
      });
      samples.push(at - started);
    }
    const requests = (await controllerRequests(controller)) - requestsBefore;
    const figures: Figure[] = [
      { name: 'edits', value: edits, unit: 'count' },
      { name: 'edit→copy.p50', value: percentile(samples, 50), unit: 'ms', note: 'PUT of the source → copy seen' },
      { name: 'edit→copy.p90', value: percentile(samples, 90), unit: 'ms' },
      { name: 'edit→copy.max', value: Math.max(...samples), unit: 'ms' },
      {
        name: 'controller.requestsPerEdit',
        value: requests / edits,
        unit: 'count',
        note: 'all of kruise-controller (the Lease included) over the edits, per edit, by its own counter',
      },
    ];
    return figures;
  },
};
