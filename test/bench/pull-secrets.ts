// Pull-secret rotation: how soon an edit of a job's source pull secret is in its copy in kruise-daemon-config, the
// one secret the agents read. kruise-controller as a real process against the in-process API emulator, one running
// (Never) ImagePullJob naming the secret; each edit is a PUT of the source, timed until a watch of
// kruise-daemon-config (this process's own informer) shows the copy with the new data.
import { IMAGE_PULL_JOBS, type ImagePullJobObject, type SecretObject } from '../../src/controller/resources.js';
import { copyNameFor } from '../../src/controller/pullsecrets/secret-sync.js';
import { Informer } from '../../src/kube/informer/informer.js';
import { CoreResources } from '../../src/kube/resource.js';
import { createNamespace, startControllerEnv } from '../e2e/controller/controller-env.js';
import { waitFor } from '../support/wait.js';
import type { BenchSuite, Figure } from './framework.js';
import { percentile } from './stats.js';

const NS = 'bench-secrets';
const CONFIG_NS = 'kruise-daemon-config';
const MAX_EDITS = 50;

function token(i: number): Record<string, string> {
  const auth = Buffer.from(`user:password-${i}`).toString('base64');
  return { '.dockerconfigjson': Buffer.from(JSON.stringify({ auths: { 'r.invalid': { auth } } })).toString('base64') };
}

export const pullSecretsSuite: BenchSuite = {
  name: 'pull-secrets',
  description: `source pull secret edited → its copy in ${CONFIG_NS} updated, p50/p90/max (kruise-controller process)`,
  inDefaultRun: true,
  async run(context) {
    const edits = Math.min(context.iterations, MAX_EDITS);
    const env = await startControllerEnv();
    context.defer(() => env.close());
    await createNamespace(env.client, NS);
    let source = await env.client.create<SecretObject>(CoreResources.secrets, {
      metadata: { name: 'regcred', namespace: NS },
      type: 'kubernetes.io/dockerconfigjson',
      data: token(0),
    });
    const copies = new Informer<SecretObject>(CoreResources.secrets, env.client, { namespace: CONFIG_NS });
    context.defer(() => copies.stop());
    const copyKey = `${CONFIG_NS}/${copyNameFor(NS, 'regcred')}`;
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

    await env.startController();
    await env.client.create<ImagePullJobObject>(IMAGE_PULL_JOBS, {
      metadata: { name: 'rotation', namespace: NS },
      spec: { image: 'r.invalid/app:1', pullSecrets: ['regcred'], completionPolicy: { type: 'Never' } },
    } as ImagePullJobObject);
    await waitFor(() => copies.get(copyKey), { timeoutMs: 30_000, message: 'the first copy' });
    context.log(`copy made; ${edits} edits of the source`);

    const requestsBefore = env.api.requestCount({ userAgent: 'kruise-controller' });
    const samples: number[] = [];
    for (let i = 1; i <= edits; i++) {
      const data = token(i);
      const started = performance.now();
      source = await env.client.update<SecretObject>(CoreResources.secrets, { ...source, data });
      // The time is the handler's; polling only decides when the next edit starts.
      const at = await waitFor(() => seenAt.get(data['.dockerconfigjson']!), {
        timeoutMs: 30_000,
        intervalMs: 5,
        message: `edit ${i} in the copy`,
      });
      samples.push(at - started);
    }
    const requests = env.api.requestCount({ userAgent: 'kruise-controller' }) - requestsBefore;
    const figures: Figure[] = [
      { name: 'edits', value: edits, unit: 'count' },
      { name: 'edit→copy.p50', value: percentile(samples, 50), unit: 'ms', note: 'PUT of the source → copy seen' },
      { name: 'edit→copy.p90', value: percentile(samples, 90), unit: 'ms' },
      { name: 'edit→copy.max', value: Math.max(...samples), unit: 'ms' },
      {
        name: 'controller.requestsPerEdit',
        value: requests / edits,
        unit: 'count',
        note: 'all of kruise-controller (the Lease included) over the edits, per edit',
      },
    ];
    return figures;
  },
};
