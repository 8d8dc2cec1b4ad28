// The pull-credentials endpoint (hole 2 of issue 26): who may ask (TokenReview of a pod-bound token of the agent's
// ServiceAccount, cached with a fake clock), what it answers (its node's tags only, the tag's owners' secrets only),
// and the agent's side of it (cache, refusals, the controller down).
import assert from 'node:assert/strict';
import {
  ACCEPTED_CACHE_MS,
  AgentIdentities,
  NODE_NAME_EXTRA,
  POD_NAME_EXTRA,
  REFUSED_CACHE_MS,
} from '../../../src/controller/pullcredentials/agent-identity.js';
import { answerFor, cacheMayCatchUp, type CredentialsLookup } from '../../../src/controller/pullcredentials/answer.js';
import { request } from 'node:https';
import type { NodeImage } from '../../../src/api/nodeimage.js';
import { createWebhookCertificates } from '../../../src/controller/admission/certs.js';
import {
  CACHE_GRACE_MS,
  CACHE_GRACE_STEP_MS,
  PullCredentialsServer,
} from '../../../src/controller/pullcredentials/server.js';
import { silentLogger } from '../../../src/observability/logger.js';
import type { SecretObject } from '../../../src/controller/resources.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { FakeClock } from '../../../src/util/clock.js';
import {
  ControllerPullCredentials,
  serviceAddress,
  type HttpsGet,
} from '../../../src/daemon/imagepuller/controller-credentials.js';
import { PullSecretProblem } from '../../../src/daemon/imagepuller/pull-secrets.js';

type Extra = Record<string, string[]>;

/** A fake API server answering TokenReviews from a table of tokens. */
function reviewer(table: Record<string, { username: string; extra?: Extra } | undefined>) {
  const calls: string[] = [];
  return {
    calls,
    client: {
      create<T extends KubeObject>(_rt: unknown, obj: T): Promise<T> {
        const token = (obj as unknown as { spec: { token: string } }).spec.token;
        calls.push(token);
        const user = table[token];
        return Promise.resolve({ ...obj, status: user ? { authenticated: true, user } : { authenticated: false } });
      },
    },
  };
}

function jwt(expSeconds: number): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'RS256' })}.${part({ exp: expSeconds })}.sig`;
}

const AGENT = 'system:serviceaccount:kruise-system:kruise-daemon';
const podBound = (node: string): Extra => ({ [NODE_NAME_EXTRA]: [node], [POD_NAME_EXTRA]: [`kruise-daemon-${node}`] });

describe('pull credentials: who may ask', () => {
  it('accepts a pod-bound token of the agent ServiceAccount and names its node', async () => {
    const clock = new FakeClock();
    const token = jwt(clock.now() / 1000 + 3600);
    const api = reviewer({ [token]: { username: AGENT, extra: podBound('node-1') } });
    const ids = new AgentIdentities({ client: api.client, clock, serviceAccount: 'kruise-system/kruise-daemon' });
    assert.deepEqual(await ids.identify(`Bearer ${token}`), { ok: true, node: 'node-1', pod: 'kruise-daemon-node-1' });
  });

  it('refuses no token, a bad token, another ServiceAccount, a Node-bound and an unbound token', async () => {
    const clock = new FakeClock();
    const api = reviewer({
      other: { username: 'system:serviceaccount:tenant:default', extra: podBound('node-1') },
      nodeBound: { username: AGENT, extra: { [NODE_NAME_EXTRA]: ['node-1'] } },
      unbound: { username: AGENT },
    });
    const ids = new AgentIdentities({ client: api.client, clock, serviceAccount: 'kruise-system/kruise-daemon' });
    const refusal = async (header: string | undefined) => {
      const r = await ids.identify(header);
      assert.equal(r.ok, false);
      return r.ok ? undefined : r;
    };
    assert.equal((await refusal(undefined))?.status, 401);
    assert.equal((await refusal('Basic abc'))?.status, 401);
    assert.match((await refusal('Bearer forged'))?.message ?? '', /not accepted by the API server/);
    assert.match((await refusal('Bearer other'))?.message ?? '', /only the agent's ServiceAccount/);
    const node = await refusal('Bearer nodeBound');
    assert.equal(node?.status, 403);
    assert.match(node?.message ?? '', /not bound to a pod/);
    assert.match((await refusal('Bearer unbound'))?.message ?? '', /not bound to a pod/);
  });

  it('one TokenReview per token: kept until 5 min or its expiry, whichever is first; a refusal for 10 s', async () => {
    const clock = new FakeClock();
    const long = jwt(clock.now() / 1000 + 3600);
    const short = jwt(clock.now() / 1000 + 60);
    const api = reviewer({
      [long]: { username: AGENT, extra: podBound('n') },
      [short]: { username: AGENT, extra: podBound('n') },
    });
    const ids = new AgentIdentities({ client: api.client, clock, serviceAccount: 'kruise-system/kruise-daemon' });
    await Promise.all([
      ids.identify(`Bearer ${long}`),
      ids.identify(`Bearer ${long}`),
      ids.identify(`Bearer ${short}`),
    ]);
    assert.equal(api.calls.length, 2, 'concurrent asks share one review');
    await clock.advance(60_000);
    await ids.identify(`Bearer ${long}`);
    await ids.identify(`Bearer ${short}`);
    assert.equal(api.calls.length, 3, 'the short token is reviewed again once it expired; the long one is not');
    await clock.advance(ACCEPTED_CACHE_MS);
    await ids.identify(`Bearer ${long}`);
    assert.equal(api.calls.length, 4, 'after 5 min even a valid token is reviewed again (its pod may be gone)');
    await ids.identify('Bearer nope');
    await ids.identify('Bearer nope');
    assert.equal(api.calls.length, 5);
    await clock.advance(REFUSED_CACHE_MS);
    await ids.identify('Bearer nope');
    assert.equal(api.calls.length, 6);
  });
});

describe('pull credentials: the answer', () => {
  const refs = (...jobs: string[]) => ({ 'imagepulljobs.kruise.io/references': jobs.join(',') });
  const secrets: Record<string, SecretObject> = {
    's-copy': {
      metadata: { name: 's-copy', annotations: refs('s/job') },
      type: 'kubernetes.io/dockerconfigjson',
      data: { '.dockerconfigjson': 'UwO=' },
    },
    'u-copy': { metadata: { name: 'u-copy', annotations: refs('u/job') }, data: { '.dockerconfigjson': 'VQ==' } },
  };
  const nodeImage: NodeImage = {
    metadata: { name: 'node-2' },
    spec: {
      images: {
        'reg/app': {
          pullSecrets: [
            { namespace: 'kruise-daemon-config', name: 's-copy' },
            { namespace: 'kruise-daemon-config', name: 'u-copy' },
            { namespace: 'kruise-daemon-config', name: 'gone' },
          ],
          tags: [
            { tag: 's', ownerReferences: [{ kind: 'ImagePullJob', namespace: 's', name: 'job' }] },
            { tag: 'u', ownerReferences: [{ kind: 'ImagePullJob', namespace: 'u', name: 'job' }] },
            { tag: 'hand' },
          ],
        },
      },
    },
  };
  const lookup: CredentialsLookup = {
    nodeImage: (node) => (node === 'node-2' ? nodeImage : undefined),
    secret: (name) => secrets[name],
  };

  it("answers only a tag of the asker's node, with its owners' secrets", () => {
    const s = answerFor('node-2', { image: 'reg/app', tag: 's' }, lookup);
    assert.equal(s.status, 200);
    assert.deepEqual(s.status === 200 && s.body, {
      secrets: [{ name: 's-copy', type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': 'UwO=' } }],
      missing: 1,
    });
    const u = answerFor('node-2', { image: 'reg/app', tag: 'u' }, lookup);
    assert.deepEqual(u.status === 200 && u.body.secrets.map((x) => x.name), ['u-copy']);
    const hand = answerFor('node-2', { image: 'reg/app', tag: 'hand' }, lookup);
    assert.deepEqual(hand.status === 200 && [hand.body.secrets.length, hand.body.missingNames], [2, ['gone']]);
    assert.ok(!('unsettled' in JSON.parse(JSON.stringify(s.body))), 'what the caches are unsure of is never sent');
  });

  it("says when its caches may be behind the agent's view: an older generation, a named secret unseen, an owner's own copy not naming it yet", () => {
    const at = (generation: number): CredentialsLookup => ({
      nodeImage: (node) =>
        node === 'node-2' ? { ...nodeImage, metadata: { ...nodeImage.metadata, generation } } : undefined,
      secret: (name) => secrets[name],
    });
    const behind = answerFor('node-2', { image: 'reg/app', tag: 'u', generation: 8 }, at(7));
    assert.equal(behind.status, 503);
    assert.match(
      'message' in behind.body ? behind.body.message : '',
      /seen generation 7 of NodeImage node-2, the agent read 8/,
    );
    assert.ok(cacheMayCatchUp(behind));
    const current = answerFor('node-2', { image: 'reg/app', tag: 'u', generation: 7 }, at(7));
    assert.equal(current.status, 200, 'the same generation, or a newer one, is answered');
    assert.equal(answerFor('node-2', { image: 'reg/app', tag: 'u', generation: 6 }, at(7)).status, 200);
    // 'gone' is named by the spec and not in the cache: the answer may change once the cache has it
    assert.ok(cacheMayCatchUp(current));
    const settled: CredentialsLookup = {
      nodeImage: () => ({
        metadata: { name: 'node-2', generation: 7 },
        spec: {
          images: {
            'reg/app': {
              pullSecrets: [
                { namespace: 'kruise-daemon-config', name: 'u-copy' },
                { namespace: 'kruise-daemon-config', name: 's-copy' },
                { namespace: 'kruise-daemon-config', name: 'u-other' },
              ],
              tags: [{ tag: 'u', ownerReferences: [{ kind: 'ImagePullJob', namespace: 'u', name: 'job' }] }],
            },
          },
        },
      }),
      secret: (name) =>
        name === 'u-other'
          ? {
              metadata: {
                name,
                annotations: { ...refs('u/earlier'), 'imagepulljobs.kruise.io/source-key': 'u/other' },
              },
              data: {},
            }
          : secrets[name],
    };
    const withOwnCopy = answerFor('node-2', { image: 'reg/app', tag: 'u' }, settled);
    assert.deepEqual(withOwnCopy.status === 200 && withOwnCopy.body.secrets.map((x) => x.name), ['u-copy']);
    assert.ok(cacheMayCatchUp(withOwnCopy), "u's own copy that does not name u/job yet: its references may be behind");
    const otherTenants: CredentialsLookup = {
      ...settled,
      secret: (name) => (name === 'u-other' ? undefined : secrets[name]),
    };
    const tenantsOnly = answerFor(
      'node-2',
      { image: 'reg/app', tag: 'u' },
      {
        ...otherTenants,
        nodeImage: () => {
          const ni = structuredClone(settled.nodeImage('node-2')!);
          ni.spec!.images!['reg/app']!.pullSecrets = ni.spec!.images!['reg/app']!.pullSecrets!.slice(0, 2);
          return ni;
        },
      },
    );
    assert.equal(tenantsOnly.status, 200);
    assert.ok(!cacheMayCatchUp(tenantsOnly), "another tenant's copy left out is settled: nothing to wait for");
  });

  it('403 with a clear message for another node, an unknown image or tag; 400 without them', () => {
    const msg = (r: ReturnType<typeof answerFor>) => `${r.status} ${'message' in r.body ? r.body.message : ''}`;
    assert.equal(msg(answerFor('node-1', { image: 'reg/app', tag: 's' }, lookup)), '403 node node-1 has no NodeImage');
    assert.equal(
      msg(answerFor('node-2', { image: 'reg/other', tag: 's' }, lookup)),
      '403 image reg/other is not in the spec of NodeImage node-2',
    );
    assert.equal(
      msg(answerFor('node-2', { image: 'reg/app', tag: 'x' }, lookup)),
      '403 tag reg/app:x is not in the spec of NodeImage node-2',
    );
    assert.equal(
      msg(answerFor('node-2', { image: 'constructor', tag: 's' }, lookup)),
      '403 image constructor is not in the spec of NodeImage node-2',
    );
    assert.equal(answerFor('node-2', { image: '', tag: '' }, lookup).status, 400);
  });
});

describe('pull credentials: the listener waits for its caches to catch up with the agent', () => {
  const certs = createWebhookCertificates({ hosts: ['127.0.0.1'], now: Date.now() });
  const copy = (name: string, job: string): SecretObject => ({
    metadata: {
      name,
      annotations: { 'imagepulljobs.kruise.io/references': job, 'imagepulljobs.kruise.io/source-key': `s/${name}` },
    },
    data: { '.dockerconfigjson': 'e30=' },
  });
  const written = (generation: number, secretNames: string[], owners: string[]): NodeImage => ({
    metadata: { name: 'node-2', generation },
    spec: {
      images: {
        'reg/app': {
          pullSecrets: secretNames.map((name) => ({ namespace: 'kruise-daemon-config', name })),
          tags: [{ tag: '1', ownerReferences: owners.map((name) => ({ kind: 'ImagePullJob', namespace: 's', name })) }],
        },
      },
    },
  });

  async function listen(lookup: CredentialsLookup, onPause: () => void) {
    const pauses: number[] = [];
    const server = new PullCredentialsServer({
      certPem: certs.serving.certPem,
      keyPem: certs.serving.keyPem,
      identities: { identify: () => Promise.resolve({ ok: true, node: 'node-2', pod: 'agent-x' }) },
      lookup,
      notReady: () => undefined,
      logger: silentLogger,
      pause: (ms) => {
        pauses.push(ms);
        onPause();
        return Promise.resolve();
      },
    });
    const port = await server.listen('127.0.0.1', 0);
    const ask = (query: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(
          `https://127.0.0.1:${port}/pull-credentials/v1?${query}`,
          { ca: certs.ca.certPem, headers: { authorization: 'Bearer t' } },
          (res) => {
            let body = '';
            res.setEncoding('utf8').on('data', (c: string) => (body += c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on('error', reject);
        req.end();
      });
    return { server, ask, pauses };
  }

  it("answers from the write the agent read: the job that joined the tag and its secret's copy, not the cache's older view", async () => {
    // the cache has generation 7 (one owner, its good secret); the agent read 8 (a second job and its copy); the
    // write reaches the NodeImage cache after two looks, the secret cache after four
    let looks = 0;
    const lookup: CredentialsLookup = {
      nodeImage: () =>
        looks >= 2 ? written(8, ['good', 'bad'], ['private', 'malformed']) : written(7, ['good'], ['private']),
      secret: (name) =>
        name === 'good' || looks >= 4 ? copy(name, name === 'good' ? 's/private' : 's/malformed') : undefined,
    };
    const { server, ask, pauses } = await listen(lookup, () => looks++);
    try {
      const answer = await ask('image=reg%2Fapp&tag=1&generation=8');
      assert.equal(answer.status, 200, answer.body);
      assert.deepEqual(
        (JSON.parse(answer.body) as { secrets: Array<{ name: string }> }).secrets.map((s) => s.name),
        ['good', 'bad'],
      );
      assert.equal(pauses.length, 4);
    } finally {
      await server.close();
    }
  });

  it('503 once the grace is spent with the cache still behind (the agent retries); 400 for a generation that is no number', async () => {
    const lookup: CredentialsLookup = {
      nodeImage: () => written(7, ['good'], ['private']),
      secret: (n) => copy(n, 's/private'),
    };
    const { server, ask, pauses } = await listen(lookup, () => undefined);
    try {
      const behind = await ask('image=reg%2Fapp&tag=1&generation=9');
      assert.equal(behind.status, 503);
      assert.match(behind.body, /seen generation 7 of NodeImage node-2, the agent read 9/);
      assert.equal(pauses.length, CACHE_GRACE_MS / CACHE_GRACE_STEP_MS);
      const settled = await ask('image=reg%2Fapp&tag=1&generation=7');
      assert.equal(settled.status, 200, 'a settled answer is given at once');
      assert.equal(pauses.length, CACHE_GRACE_MS / CACHE_GRACE_STEP_MS);
      assert.equal((await ask('image=reg%2Fapp&tag=1&generation=x')).status, 400);
      assert.equal((await ask('image=reg%2Fapp&tag=1&generation=-1')).status, 400);
    } finally {
      await server.close();
    }
  });
});

describe("pull credentials: the agent's side", () => {
  const auths = Buffer.from(JSON.stringify({ auths: { 'reg:5000': { username: 'u', password: 'p' } } })).toString(
    'base64',
  );
  const request = {
    imageName: 'reg:5000/app',
    tag: '1',
    pullSecrets: [{ name: 'u-copy' }],
    ownerReferences: [{ namespace: 'u', name: 'job' }],
  };

  function agent(replies: Array<{ status: number; body: unknown } | Error>) {
    const clock = new FakeClock();
    const asked: string[] = [];
    let caReads = 0;
    const get: HttpsGet = (url, options) => {
      asked.push(`${url.pathname}${url.search} ${options.headers.authorization}`);
      const next = replies.shift() ?? new Error('no more replies');
      return next instanceof Error
        ? Promise.reject(next)
        : Promise.resolve({ status: next.status, body: JSON.stringify(next.body) });
    };
    const source = new ControllerPullCredentials({
      url: 'https://10.0.0.1:9443',
      token: () => Promise.resolve('tok'),
      readCa: () => {
        caReads++;
        return Promise.resolve('-----BEGIN CERTIFICATE-----');
      },
      clock,
      get,
    });
    return { clock, asked, source, caReads: () => caReads };
  }

  it('asks once per tag within a minute, with its token, and builds the credentials', async () => {
    const a = agent([
      { status: 200, body: { secrets: [{ name: 'u-copy', data: { '.dockerconfigjson': auths } }], missing: 0 } },
    ]);
    const first = await a.source.credentials(request);
    await a.source.credentials(request);
    assert.deepEqual(
      first.credentials.map((c) => c.username),
      ['u'],
    );
    assert.deepEqual(a.asked, ['/pull-credentials/v1?image=reg%3A5000%2Fapp&tag=1 Bearer tok']);
  });

  it('says which generation of its NodeImage it read the tag from', async () => {
    const a = agent([{ status: 200, body: { secrets: [], missing: 0 } }]);
    await a.source.credentials({ ...request, generation: 12 });
    assert.deepEqual(a.asked, ['/pull-credentials/v1?image=reg%3A5000%2Fapp&tag=1&generation=12 Bearer tok']);
  });

  it('asks again when the tag gets another owner or its image another secret (no stale answer)', async () => {
    const none = { status: 200, body: { secrets: [], missing: 0 } };
    const a = agent([none, none, none]);
    await a.source.credentials(request);
    await a.source.credentials({
      ...request,
      ownerReferences: [...request.ownerReferences, { namespace: 'u', name: 'two' }],
    });
    await a.source.credentials({ ...request, pullSecrets: [{ name: 'u-copy' }, { name: 'v-copy' }] });
    await a.source.credentials(request);
    assert.equal(a.asked.length, 3);
    await a.clock.advance(60_000);
    await assert.rejects(a.source.credentials(request), /no more replies/, 'after a minute it asks again');
  });

  it('asks nothing for an image without pull secrets (a public one)', async () => {
    const a = agent([]);
    assert.deepEqual((await a.source.credentials({ ...request, pullSecrets: [] })).credentials, []);
    assert.deepEqual(a.asked, []);
  });

  it("reaches a Service URL at the ClusterIP kubelet put in the pod's environment (no cluster DNS needed)", () => {
    const env = { KRUISE_CONTROLLER_CREDENTIALS_SERVICE_HOST: '10.96.0.12' };
    const at = (url: string) => serviceAddress(new URL(url), env);
    assert.equal(at('https://kruise-controller-credentials.kruise-system.svc:443'), '10.96.0.12');
    assert.equal(at('https://kruise-controller-credentials.kruise-system.svc.cluster.local'), '10.96.0.12');
    assert.equal(at('https://other.kruise-system.svc:443'), undefined, 'no variable for it: resolved by name');
    assert.equal(at('https://10.0.0.1:9443'), undefined);
  });

  it("a refusal is a PullSecretProblem with the controller's reason; the controller down is an error, retried", async () => {
    const a = agent([
      { status: 403, body: { message: 'tag reg:5000/app:1 is not in the spec of NodeImage n' } },
      new Error('connect ECONNREFUSED 10.0.0.1:9443'),
      { status: 503, body: { message: 'not ready: the NodeImage cache has not synced yet' } },
      { status: 200, body: { secrets: [], missing: 0 } },
    ]);
    await assert.rejects(
      a.source.credentials(request),
      (err: unknown) =>
        err instanceof PullSecretProblem &&
        /refused the pull credentials \(403\): tag reg:5000\/app:1 is not in the spec/.test(err.message),
    );
    await assert.rejects(a.source.credentials(request), /could not be read: connect ECONNREFUSED/);
    await assert.rejects(a.source.credentials(request), /could not be read \(503\): not ready/);
    assert.deepEqual((await a.source.credentials(request)).credentials, []);
    assert.equal(a.caReads(), 2, 'the CA is read again after a connection failure');
  });
});
