// kubectl-kruise-node without a cluster: its command line, the Prometheus reader, the NodeImage rows, and the
// pull/recreate follow loops against a fake API and a FakeClock (exit codes, progress lines, timeouts).
import assert from 'node:assert/strict';
import { parsePluginCommandLine, UsageError } from '../../../src/kubectl-plugin/command-line.js';
import type { PluginApi } from '../../../src/kubectl-plugin/context.js';
import { networksFromMetrics } from '../../../src/kubectl-plugin/ips.js';
import { runPlugin, type PluginDeps } from '../../../src/kubectl-plugin/main.js';
import { nodeImageRows } from '../../../src/kubectl-plugin/nodeimages.js';
import type { NodeImage } from '../../../src/api/nodeimage.js';
import { parsePrometheusText } from '../../../src/kubectl-plugin/prometheus-text.js';
import { imagePullJobFor, pullJobPrefix } from '../../../src/kubectl-plugin/pull.js';
import { recreateProblem } from '../../../src/kubectl-plugin/recreate.js';
import { ApiError } from '../../../src/kube/errors.js';
import type { KubeObject } from '../../../src/kube/object.js';
import type { ResourceType } from '../../../src/kube/resource.js';
import { FakeClock } from '../../../src/util/clock.js';

class Sink {
  text = '';
  write(chunk: string): boolean {
    this.text += chunk;
    return true;
  }
}

/** A fake API: objects by "resource/namespace/name"; `onGet` may change what the next read returns. */
class FakeApi {
  readonly objects = new Map<string, KubeObject>();
  readonly created: KubeObject[] = [];
  onGet?: (key: string, reads: number) => void;
  private reads = 0;
  readonly defaultNamespace = 'default';
  readonly requests: string[] = [];
  proxied: Record<string, { status: number; body: string }> = {};
  readonly transport = {
    request: (req: { path: string }) => {
      this.requests.push(req.path);
      const answer = this.proxied[req.path];
      return answer
        ? Promise.resolve({ ...answer, headers: {} })
        : Promise.reject(new Error(`connection refused (${req.path})`));
    },
  };

  key(rt: ResourceType, name: string, namespace?: string): string {
    return `${rt.resource}/${namespace ?? ''}/${name}`;
  }
  get<T extends KubeObject>(rt: ResourceType, name: string, opts: { namespace?: string } = {}): Promise<T> {
    const key = this.key(rt, name, opts.namespace);
    this.onGet?.(key, ++this.reads);
    const obj = this.objects.get(key);
    if (!obj) {
      return Promise.reject(
        new ApiError({ kind: 'Status', code: 404, reason: 'NotFound', message: `${key} not found` }, 'get', key),
      );
    }
    return Promise.resolve(structuredClone(obj) as T);
  }
  list<T extends KubeObject>(
    rt: ResourceType,
    opts: { namespace?: string; labelSelector?: string } = {},
  ): Promise<{ items: T[]; metadata: object }> {
    const [key, value] = (opts.labelSelector ?? '').split('=');
    const items = [...this.objects.entries()]
      .filter(([k]) => k.startsWith(`${rt.resource}/${opts.namespace ? `${opts.namespace}/` : ''}`))
      .map(([, o]) => o as T)
      .filter((o) => !key || o.metadata?.labels?.[key] === value);
    return Promise.resolve({ items, metadata: {} });
  }
  create<T extends KubeObject>(rt: ResourceType, obj: T, opts: { namespace?: string } = {}): Promise<T> {
    const name = obj.metadata?.name ?? `${obj.metadata?.generateName ?? ''}abcde`;
    const stored = { ...obj, metadata: { ...obj.metadata, name } };
    this.objects.set(this.key(rt, name, opts.namespace), stored);
    this.created.push(stored);
    return Promise.resolve(stored);
  }
}

async function run(
  argv: string[],
  api: FakeApi,
  clock: FakeClock,
  drive: (done: () => boolean) => Promise<void>,
  deps: Pick<PluginDeps, 'env' | 'fetchText'> = { env: {} },
) {
  const stdout = new Sink();
  const stderr = new Sink();
  let code: number | undefined;
  const running = runPlugin(argv, {
    stdout,
    stderr,
    ...deps,
    clock,
    connect: () => Promise.resolve(api as unknown as PluginApi),
    pollIntervalMs: 1000,
  }).then((c) => (code = c));
  await drive(() => code !== undefined);
  await running;
  return { code: code!, stdout: stdout.text, stderr: stderr.text };
}

describe('kubectl-kruise-node', () => {
  describe('command line', () => {
    it('parses each command', () => {
      assert.deepEqual(parsePluginCommandLine(['pull', 'reg:5000/a/b:1.0', '--nodes', 'n1,n2', '--nodes=n3']).command, {
        kind: 'pull',
        image: 'reg:5000/a/b:1.0',
        nodes: ['n1', 'n2', 'n3'],
        follow: true,
        timeoutMs: 600_000,
      });
      const recreate = parsePluginCommandLine([
        'recreate',
        'web-0',
        '-c',
        'app',
        '-c',
        'side',
        '--ordered',
        '-n',
        'db',
      ]);
      assert.equal(recreate.global.namespace, 'db');
      assert.deepEqual(recreate.command, {
        kind: 'recreate',
        pod: 'web-0',
        containers: ['app', 'side'],
        ordered: true,
        follow: true,
        timeoutMs: 600_000,
      });
      const ips = parsePluginCommandLine(['ips', '--agent', 'n1=http://127.0.0.1:10221']).command;
      assert.deepEqual(ips, {
        kind: 'ips',
        agents: [{ node: 'n1', url: 'http://127.0.0.1:10221/metrics' }],
        agentSource: '--agent',
        agentNamespace: 'kruise-system',
        agentPort: 10221,
      });
      assert.equal(parsePluginCommandLine([]).command.kind, 'help');
    });

    it('takes --agent from KRUISE_NODE_AGENTS unless the agents are named or looked for as pods', () => {
      const env = { KRUISE_NODE_AGENTS: 'n1=http://127.0.0.1:10221' };
      const agentsOf = (argv: string[]) => {
        const command = parsePluginCommandLine(argv, env).command;
        return command.kind === 'ips' ? command.agents : undefined;
      };
      assert.deepEqual(agentsOf(['ips']), [{ node: 'n1', url: 'http://127.0.0.1:10221/metrics' }]);
      assert.deepEqual(agentsOf(['ips', '--agent', 'n2=http://h:1']), [{ node: 'n2', url: 'http://h:1/metrics' }]);
      assert.deepEqual(agentsOf(['ips', '--agent-namespace', 'kruise-system']), []);
      assert.throws(
        () => parsePluginCommandLine(['ips'], { KRUISE_NODE_AGENTS: 'nourl' }),
        (err: unknown) => err instanceof UsageError && /KRUISE_NODE_AGENTS.*NODE=URL/.test(err.message),
      );
    });

    it('rejects bad input with a message naming it', () => {
      const bad: [string[], RegExp][] = [
        [['pull'], /exactly one IMAGE/],
        [['pull', 'UPPER/Case'], /IMAGE/],
        [['recreate', 'p'], /-c CONTAINER/],
        [['recreate', 'p', '-c', 'a', '-c', 'a'], /twice/],
        [['nodeimages', '--ordered'], /--ordered is not a flag of nodeimages/],
        [['probes', 'x'], /probes takes no arguments/],
        [['ips', '--agent', 'nourl'], /NODE=URL/],
        [['ips', '--agent', 'n=ftp://x'], /http/],
        [['pull', 'a:1', '--timeout', '-1'], /--timeout/],
        [['frobnicate'], /unknown command/],
        [['toString'], /unknown command "toString"/],
        [['constructor'], /unknown command/],
        [['nodeimages', '-o', 'yaml'], /table or json/],
        [['ips', '--agnet', 'n=http://h'], /^unknown flag --agnet$/],
        [['recreate', 'p', '-c'], /^--container needs a value$/],
        [['ips', '--agent', ','], /--agent names no agent/],
      ];
      for (const [argv, message] of bad) {
        assert.throws(
          () => parsePluginCommandLine(argv),
          (err: unknown) => err instanceof UsageError && message.test(err.message),
          argv.join(' '),
        );
      }
    });
  });

  it('reads Prometheus text: labels, escapes, comments; malformed lines skipped', () => {
    const samples = parsePrometheusText(
      [
        '# HELP kruise_daemon_ipam_reserved_ips x',
        '# TYPE kruise_daemon_ipam_reserved_ips gauge',
        'kruise_daemon_ipam_reserved_ips{network="kd-1"} 2',
        'kruise_daemon_ipam_allocated_ips{network="kd-1"} 5',
        'kruise_daemon_ipam_reservations_reused_total{network="kd-1",x="a\\"b"} 1',
        'garbage line here',
        'kruise_daemon_ipam_allocated_ips{network="other"} 0',
      ].join('\n'),
    );
    assert.equal(samples.length, 4);
    assert.equal(samples[2]!.labels.x, 'a"b');
    assert.deepEqual(networksFromMetrics(samples), [
      { network: 'kd-1', held: 5, reserved: 2, reused: 1, expired: 0 },
      { network: 'other', held: 0, reserved: 0, reused: 0, expired: 0 },
    ]);
  });

  it('shows a tag as Waiting until the agent reports its current version', () => {
    const ni: NodeImage = {
      metadata: { name: 'n1' },
      spec: { images: { 'reg/busybox': { tags: [{ tag: '1.0', version: 2 }, { tag: '2.0' }] } } },
      status: {
        desired: 2,
        imageStatuses: {
          'reg/busybox': {
            tags: [
              { tag: '1.0', phase: 'Succeeded', version: 1 },
              { tag: '2.0', phase: 'Failed', message: 'not found\nmore' },
            ],
          },
        },
      },
    };
    assert.deepEqual(
      nodeImageRows([ni]).map((r) => [r.tag, r.phase, r.message]),
      [
        ['1.0', 'Waiting', undefined],
        ['2.0', 'Failed', 'not found\nmore'],
      ],
    );
  });

  it("probes lists each node's custom probes with the agent's state, last probe and message", async () => {
    const api = new FakeApi();
    const clock = new FakeClock();
    const npp = (node: string, status?: object): void => {
      api.objects.set(`nodepodprobes//${node}`, {
        metadata: { name: node },
        spec: {
          podProbes: [
            {
              name: `web-${node}`,
              namespace: 'shop',
              uid: `u-${node}`,
              probes: [
                { name: 'ppm#ready', containerName: 'app', probe: { exec: { command: ['true'] } } },
                { name: 'ppm#alive', containerName: 'app', probe: { tcpSocket: { port: 80 } } },
              ],
            },
          ],
        },
        ...(status && { status }),
      } as KubeObject);
    };
    npp('n2');
    npp('n1', {
      podProbeStatuses: [
        {
          name: 'web-n1',
          namespace: 'shop',
          uid: 'u-n1',
          probeStates: [
            {
              name: 'ppm#ready',
              state: 'Failed',
              lastProbeTime: '2026-01-01T00:00:05Z',
              message: 'not ready\nmore',
            },
          ],
        },
      ],
    });
    const all = await run(['probes'], api, clock, () => Promise.resolve());
    assert.equal(all.code, 0);
    assert.deepEqual(all.stdout.split('\n'), [
      'NODE  POD          PROBE      CONTAINER  STATE    LAST PROBE            MESSAGE',
      'n1    shop/web-n1  ppm#ready  app        Failed   2026-01-01T00:00:05Z  not ready',
      'n1    shop/web-n1  ppm#alive  app        Unknown',
      'n2    shop/web-n2  ppm#ready  app        Unknown',
      'n2    shop/web-n2  ppm#alive  app        Unknown',
      '',
    ]);
    const one = await run(['probes', '--node', 'n1', '-o', 'json'], api, clock, () => Promise.resolve());
    assert.deepEqual(JSON.parse(one.stdout)[0], {
      node: 'n1',
      pod: 'shop/web-n1',
      probe: 'ppm#ready',
      container: 'app',
      state: 'Failed',
      lastProbeTime: '2026-01-01T00:00:05Z',
      message: 'not ready\nmore',
    });
    const missing = await run(['probes', '--node', 'n9'], api, clock, () => Promise.resolve());
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^kubectl kruise-node probes: the API server said: .*not found/);
    assert.equal(
      (await run(['probes'], new FakeApi(), clock, () => Promise.resolve())).stdout,
      'No custom probes on any NodePodProbe.\n',
    );
  });

  it('names jobs after the image and targets the nodes given', () => {
    assert.equal(pullJobPrefix('127.0.0.1:5000/test/busy_box:1.0'), 'pull-busy-box-');
    const job = imagePullJobFor({ image: 'nginx:1', nodes: ['a'], namespace: 'ns' });
    assert.deepEqual(job.spec.selector, { names: ['a'] });
    assert.equal(job.spec.completionPolicy.type, 'Always');
    assert.equal(imagePullJobFor({ image: 'nginx:1', nodes: [], namespace: 'ns' }).spec.selector, undefined);
  });

  it('refuses a CRR for a container the pod does not have, or an unscheduled pod', () => {
    const pod = { metadata: { namespace: 'd', name: 'p' }, spec: { nodeName: 'n', containers: [{ name: 'a' }] } };
    assert.equal(recreateProblem(pod, ['a']), undefined);
    assert.match(recreateProblem(pod, ['b']) ?? '', /no container b \(its containers: a\)/);
    assert.match(recreateProblem({ ...pod, spec: { containers: [{ name: 'a' }] } }, ['a']) ?? '', /not scheduled/);
  });

  it('pull follows the job until complete: progress lines, exit 0; failed nodes: exit 1', async () => {
    for (const failed of [0, 1]) {
      const api = new FakeApi();
      const clock = new FakeClock();
      api.onGet = (key, reads) => {
        const job = api.objects.get(key) as KubeObject & { status?: object };
        if (reads === 2) job.status = { desired: 2, active: 2, succeeded: 0 };
        if (reads === 3) {
          job.status = {
            desired: 2,
            active: 0,
            succeeded: 2 - failed,
            failed,
            completionTime: '2026-01-01T00:00:00Z',
            ...(failed && { failedNodes: ['n2'], message: 'pull failed on n2' }),
          };
        }
      };
      const result = await run(['pull', 'reg/busybox:1.0'], api, clock, async (done) => {
        while (!done()) await clock.advance(1000);
      });
      assert.equal(result.code, failed ? 1 : 0, result.stderr);
      assert.match(result.stdout, /imagepulljob default\/pull-busybox-abcde created/);
      assert.match(result.stdout, /0\/2 nodes pulled, 0 failed, 2 pulling/);
      if (failed) assert.match(result.stderr, /failed on 1 of 2 node\(s\): pull failed on n2\n {2}n2: /);
      else assert.match(result.stdout, /complete: reg\/busybox:1.0 is on 2 node\(s\)/);
    }
  });

  it("pull of an image no node could pull prints each failed node's reason from its NodeImage", async () => {
    const api = new FakeApi();
    const clock = new FakeClock();
    const nodeImage = (node: string, phase: string, message?: string) =>
      api.objects.set(`nodeimages//${node}`, {
        metadata: { name: node },
        spec: { images: { 'reg/nope': { tags: [{ tag: '1.0', version: 1 }] } } },
        status: {
          desired: 1,
          imageStatuses: { 'reg/nope': { tags: [{ tag: '1.0', phase, version: 1, ...(message && { message }) }] } },
        },
      } as KubeObject);
    nodeImage('n1', 'Failed', 'registry reg of reg/nope:1.0 cannot be reached:\nlookup reg: no such host');
    nodeImage('n2', 'Failed', 'manifest unknown');
    api.onGet = (key) => {
      if (!key.startsWith('imagepulljobs/')) return;
      (api.objects.get(key) as KubeObject & { status?: object }).status = {
        desired: 3,
        active: 0,
        succeeded: 0,
        failed: 3,
        failedNodes: ['n1', 'n2', 'n3'],
        completionTime: '2026-01-01T00:00:00Z',
        message: 'job has completed',
      };
    };
    const result = await run(['pull', 'reg/nope:1.0'], api, clock, async (done) => {
      while (!done()) await clock.advance(1000);
    });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /failed on 3 of 3 node\(s\)/);
    assert.match(
      result.stderr,
      /^ {2}n1: Failed: registry reg of reg\/nope:1\.0 cannot be reached: lookup reg: no such host$/m,
    );
    assert.match(result.stderr, /^ {2}n2: Failed: manifest unknown$/m);
    assert.match(result.stderr, /^ {2}n3: NodeImage n3 not found$/m);
  });

  it('pull refuses a node that does not exist, creating nothing', async () => {
    const api = new FakeApi();
    api.objects.set('nodes//n1', { metadata: { name: 'n1' } });
    const result = await run(['pull', 'reg/busybox:1.0', '--nodes', 'n1,n9'], api, new FakeClock(), () =>
      Promise.resolve(),
    );
    assert.equal(result.code, 1);
    assert.match(result.stderr, /node n9 not found: nothing created/);
    assert.equal(api.created.length, 0);
  });

  it('recreate gives up at --timeout with exit 1 and says where it stood', async () => {
    const api = new FakeApi();
    const clock = new FakeClock();
    api.objects.set('pods/default/web-0', {
      metadata: { namespace: 'default', name: 'web-0' },
      spec: { nodeName: 'n1', containers: [{ name: 'app' }] },
    } as KubeObject);
    api.onGet = (key) => {
      const crr = api.objects.get(key) as KubeObject & { status?: object };
      if (key.startsWith('containerrecreaterequests/')) {
        crr.status = { phase: 'Recreating', containerRecreateStates: [{ name: 'app', phase: 'Recreating' }] };
      }
    };
    const result = await run(['recreate', 'web-0', '-c', 'app', '--timeout', '5s'], api, clock, async (done) => {
      while (!done()) await clock.advance(1000);
    });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /not completed after 5s: Recreating: app=Recreating/);
    assert.equal(api.created.length, 1);
    assert.equal((api.created[0] as { spec?: { podName?: string } }).spec?.podName, 'web-0');
  });

  it('ips reads each agent pod through the pod proxy and lists the pods asking for a reserved IP', async () => {
    const api = new FakeApi();
    const agent = (name: string, node: string) =>
      api.objects.set(`pods/kruise-system/${name}`, {
        metadata: { namespace: 'kruise-system', name, labels: { 'control-plane': 'daemon' } },
        spec: { nodeName: node, containers: [] },
      } as KubeObject);
    agent('kruise-daemon-a', 'n1');
    agent('kruise-daemon-b', 'n2');
    api.objects.set('pods/db/web-0', {
      metadata: { namespace: 'db', name: 'web-0', annotations: { 'io.kubernetes.cri/reserved-ip-duration': '10' } },
      spec: { nodeName: 'n1', containers: [] },
      status: { podIP: '10.1.0.7', phase: 'Running' },
    } as KubeObject);
    api.proxied['/api/v1/namespaces/kruise-system/pods/kruise-daemon-a%3A10221/proxy/metrics'] = {
      status: 200,
      body: 'kruise_daemon_ipam_allocated_ips{network="net"} 3\nkruise_daemon_ipam_reserved_ips{network="net"} 1\n',
    };
    const result = await run(['ips'], api, new FakeClock(), () => Promise.resolve());
    assert.equal(result.code, 1, 'one agent unreachable');
    assert.match(result.stdout, /n1\s+net\s+3\s+1\s+0\s+0/);
    assert.match(result.stdout, /n2\s+-.*unreachable: connection refused/);
    assert.match(result.stdout, /db\s+web-0\s+n1\s+10\.1\.0\.7\s+10\s+Running/);
  });

  it('ips --node of a node that does not exist says so and exits 1', async () => {
    const api = new FakeApi();
    const result = await run(['ips', '--node', 'n9'], api, new FakeClock(), () => Promise.resolve(), {
      env: { KRUISE_NODE_AGENTS: 'n1=http://127.0.0.1:10221' },
      fetchText: () => Promise.resolve('kruise_daemon_ipam_allocated_ips{network="net"} 1\n'),
    });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /node n9 not found/);
  });

  it('ips --node of a node without an agent says so and exits 1', async () => {
    const api = new FakeApi();
    api.objects.set('nodes//n2', { metadata: { name: 'n2' } });
    const result = await run(['ips', '--node', 'n2'], api, new FakeClock(), () => Promise.resolve(), {
      env: { KRUISE_NODE_AGENTS: 'n1=http://127.0.0.1:10221' },
      fetchText: () => Promise.resolve(''),
    });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /no kruise-daemon agent for node n2 .*n1/);
  });

  it('ips tells an agent with --ipam but no network yet (only HELP/TYPE lines) from one without --ipam', async () => {
    const api = new FakeApi();
    const metrics: Record<string, string> = {
      'http://a/metrics': '# HELP kruise_daemon_ipam_allocated_ips x\n# TYPE kruise_daemon_ipam_allocated_ips gauge\n',
      'http://b/metrics': '# TYPE kruise_daemon_pulls_total counter\nkruise_daemon_pulls_total 0\n',
    };
    const result = await run(
      ['ips', '--agent', 'n1=http://a,n2=http://b'],
      api,
      new FakeClock(),
      () => Promise.resolve(),
      {
        env: {},
        fetchText: (url) => Promise.resolve(metrics[url] ?? ''),
      },
    );
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^n1\s+-\s+0\s+0\s+0\s+0\s+no kruise-ipam network yet$/m);
    assert.match(result.stdout, /^n2\s+-\s+agent runs without --ipam$/m);
  });

  it('ips finding no agent exits 1 and says how to point it at one', async () => {
    const api = new FakeApi();
    const result = await run(['ips'], api, new FakeClock(), () => Promise.resolve());
    assert.equal(result.code, 1);
    assert.match(result.stderr, /no kruise-daemon agent found: no pod labelled control-plane=daemon in kruise-system/);
    assert.match(result.stderr, /--agent NODE=URL/);
    assert.match(result.stderr, /KRUISE_NODE_AGENTS/);
  });

  it('ips reads the agents named in KRUISE_NODE_AGENTS when no --agent is given (npm run dev sets it)', async () => {
    const api = new FakeApi();
    const fetched: string[] = [];
    const result = await run(['ips'], api, new FakeClock(), () => Promise.resolve(), {
      env: { KRUISE_NODE_AGENTS: 'n1=http://127.0.0.1:10221,n2=http://127.0.0.1:10222' },
      fetchText: (url) => {
        fetched.push(url);
        return Promise.resolve('kruise_daemon_ipam_allocated_ips{network="net"} 2\n');
      },
    });
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(fetched.sort(), ['http://127.0.0.1:10221/metrics', 'http://127.0.0.1:10222/metrics']);
    assert.match(result.stdout, /n1\s+net\s+2/);
    assert.match(result.stdout, /n2\s+net\s+2/);
    assert.deepEqual(api.requests, [], 'no pod proxy');
  });

  it('exits 2 on bad usage without touching the API', async () => {
    const api = new FakeApi();
    const result = await run(['recreate', 'web-0'], api, new FakeClock(), () => Promise.resolve());
    assert.equal(result.code, 2);
    assert.match(result.stderr, /needs at least one -c CONTAINER/);
    assert.equal(api.created.length, 0);
  });
});
