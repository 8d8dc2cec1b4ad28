// Custom probes end to end on the real cluster, the other probe kinds and what goes wrong: OpenKruise's tcpCheck and
// httpCheck scenarios (test/e2e/apps/podprobemarker.go) against busybox httpd in the pod (a named port converted to
// its number), then bad input, each with the message a user would read: a probe command the image does not have, a
// container that is not running, a marker naming a container the pods lack, a marker refused at admission, and a
// selector matching many pods. Through all of it the agents stay up (`/healthz` 200, no exit).
import assert from 'node:assert/strict';
import { POD_PROBE_MARKERS, type PodContainerProbe } from '../../../src/api/podprobemarker.js';
import { ApiError } from '../../../src/kube/errors.js';
import { CoreResources } from '../../../src/kube/resource.js';
import { waitFor } from '../../support/wait.js';
import {
  activePods,
  conditionOf,
  createStatefulSet,
  deleteMarker,
  eventsFor,
  execProbe,
  getMarker,
  getPod,
  markerManifest,
  podProbeEntry,
  podProbesOfNamespace,
  probeState,
  runningPods,
  SLEEP_FOREVER,
  startProbeStack,
  statefulSetManifest,
  type PodObject,
  type ProbeStack,
  podShows as shows,
} from './stack.js';

const WEB = 'web';
const WEB_SELECTOR = `app=${WEB}`;
const WEB_COMMAND = [
  'sh',
  '-c',
  'mkdir -p /www && echo ok > /www/index.html && trap "exit 0" TERM; httpd -f -p 8080 -h /www & wait',
];
const READY = 'probe.e2e/ready';
const WAIT = { timeoutMs: 60_000, intervalMs: 250 };

function tcpProbe(port: number | string): PodContainerProbe {
  return {
    name: 'port',
    containerName: 'web',
    probe: { tcpSocket: { port }, periodSeconds: 1, timeoutSeconds: 1 },
    podConditionType: READY,
  };
}

function httpProbe(path: string): PodContainerProbe {
  return {
    name: 'page',
    containerName: 'web',
    probe: { httpGet: { path, port: 8080, scheme: 'HTTP' }, periodSeconds: 1, timeoutSeconds: 1 },
    podConditionType: 'probe.e2e/page',
  };
}

describe('custom probes e2e: tcp and http probes, bad input, many pods', function () {
  this.timeout(300_000);
  let stack: ProbeStack;
  let web: PodObject[];

  before(async () => {
    stack = await startProbeStack({ namespacePrefix: 'kd-probe-bad-e2e' });
    await createStatefulSet(
      stack,
      statefulSetManifest(stack.namespace, WEB, 2, stack.cluster.images.busybox1, [
        { name: 'web', command: WEB_COMMAND, ports: [{ name: 'http', containerPort: 8080 }] },
      ]),
    );
    web = await runningPods(stack, WEB_SELECTOR, 2);
  });

  after(async () => {
    if (stack) await stack.close();
  });

  afterEach(async function () {
    // whatever a test did, the agents are still up and say so
    for (const [name, agent] of stack.system.agents) {
      assert.equal(agent.process.hasExited, false, `the agent on ${name} is running`);
      const res = await fetch(`${agent.url}/healthz`);
      assert.equal(res.status, 200, `the agent on ${name}: /healthz ${res.status}: ${await res.text()}`);
    }
    if (this.currentTest?.state === 'failed') return;
    for (const m of (await stack.client.list(POD_PROBE_MARKERS, { namespace: stack.namespace })).items) {
      await deleteMarker(stack, m.metadata!.name!);
    }
  });

  function createMarker(name: string, probes: PodContainerProbe[], app = WEB) {
    return stack.client.create(POD_PROBE_MARKERS, markerManifest(stack.namespace, name, { app }, probes), {
      namespace: stack.namespace,
    });
  }

  const podShows = (name: string, what: string, check: (p: PodObject) => boolean, timeoutMs?: number) =>
    shows(stack, name, what, check, timeoutMs);

  it('tcpSocket on a named port: the number in the NodePodProbe, True while the port listens, False on another', async () => {
    await createMarker('ppm-tcp', [tcpProbe('http')]);
    for (const p of web) {
      const entry = await waitFor(() => podProbeEntry(stack.client, p), { ...WAIT, message: 'tcp probe entry' });
      assert.equal(entry.probes?.[0]?.probe.tcpSocket?.port, 8080, 'the named port converted to its number');
      await podShows(p.metadata!.name!, `${READY} True`, (x) => conditionOf(x, READY)?.status === 'True');
    }
    await stack.client.patch(
      POD_PROBE_MARKERS,
      'ppm-tcp',
      { spec: { probes: [tcpProbe(8081)] } },
      {
        type: 'merge',
        namespace: stack.namespace,
      },
    );
    // a changed action first reports Unknown (condition False, no message), then the new result
    for (const p of web) {
      await podShows(
        p.metadata!.name!,
        `${READY} False with the connect error`,
        (x) =>
          conditionOf(x, READY)?.status === 'False' &&
          /ECONNREFUSED|refused/i.test(conditionOf(x, READY)?.message ?? ''),
      );
    }
  });

  it('httpGet: True on a page that exists, False on a 404', async () => {
    await createMarker('ppm-http', [httpProbe('/index.html')]);
    for (const p of web) {
      await podShows(
        p.metadata!.name!,
        'probe.e2e/page True',
        (x) => conditionOf(x, 'probe.e2e/page')?.status === 'True',
      );
    }
    await stack.client.patch(
      POD_PROBE_MARKERS,
      'ppm-http',
      { spec: { probes: [httpProbe('/missing')] } },
      {
        type: 'merge',
        namespace: stack.namespace,
      },
    );
    for (const p of web) {
      await podShows(
        p.metadata!.name!,
        'probe.e2e/page False with the status code',
        (x) =>
          conditionOf(x, 'probe.e2e/page')?.status === 'False' &&
          /statuscode: 404/.test(conditionOf(x, 'probe.e2e/page')?.message ?? ''),
      );
    }
  });

  it('a probe command the image lacks: Failed with a message that names it', async () => {
    await createMarker('ppm-nocmd', [
      execProbe({
        name: 'nocmd',
        containerName: 'web',
        command: ['/no/such/probe'],
        podConditionType: 'probe.e2e/nocmd',
      }),
    ]);
    for (const p of web) {
      const state = await waitFor(
        async () => {
          const s = await probeState(stack.client, p, 'ppm-nocmd#nocmd');
          return s?.state === 'Failed' ? s : undefined;
        },
        { ...WAIT, message: `ppm-nocmd#nocmd Failed on ${p.metadata!.name}` },
      );
      assert.match(state.message ?? '', /\/no\/such\/probe/, `the message names the command: ${state.message}`);
      await podShows(
        p.metadata!.name!,
        'probe.e2e/nocmd False, naming the command',
        (x) =>
          conditionOf(x, 'probe.e2e/nocmd')?.status === 'False' &&
          /\/no\/such\/probe/.test(conditionOf(x, 'probe.e2e/nocmd')?.message ?? ''),
      );
    }
  });

  it('a container that is not running: Failed, saying so', async () => {
    const name = 'half-done';
    await stack.client.create(
      CoreResources.pods,
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, labels: { app: name } },
        spec: {
          restartPolicy: 'Never',
          terminationGracePeriodSeconds: 1,
          containers: [
            { name: 'main', image: stack.cluster.images.busybox1, command: SLEEP_FOREVER },
            { name: 'oneshot', image: stack.cluster.images.busybox1, command: ['true'] },
          ],
        },
      },
      { namespace: stack.namespace },
    );
    await podShows(
      name,
      'main running, oneshot terminated',
      (x) =>
        x.status?.containerStatuses?.find((s) => s.name === 'oneshot')?.state?.terminated !== undefined &&
        x.status.containerStatuses.find((s) => s.name === 'main')?.state?.running !== undefined,
      90_000,
    );
    await createMarker(
      'ppm-stopped',
      [execProbe({ name: 'alive', containerName: 'oneshot', command: ['true'], podConditionType: 'probe.e2e/alive' })],
      name,
    );
    await podShows(
      name,
      'probe.e2e/alive False: Container(oneshot) is Non-running',
      (x) =>
        conditionOf(x, 'probe.e2e/alive')?.status === 'False' &&
        conditionOf(x, 'probe.e2e/alive')?.message === 'Container(oneshot) is Non-running',
    );
    await stack.client.delete(CoreResources.pods, name, { namespace: stack.namespace, gracePeriodSeconds: 0 });
  });

  it('a marker naming a container the pods lack: a Warning event on the marker naming it, the probe left out', async () => {
    // Admission cannot know every pod a selector will match, so the marker is accepted; the controller leaves the
    // probe out for each pod without that container and says so on the marker (OpenKruise writes the probe, which
    // then never runs: no state, no event, no condition, nothing said anywhere).
    await createMarker('ppm-ghost', [
      execProbe({ name: 'ghost', containerName: 'ghost', command: ['true'], podConditionType: 'probe.e2e/ghost' }),
    ]);
    const warning = await waitFor(
      async () =>
        (await eventsFor(stack, 'ppm-ghost', ['ProbeNotApplied'])).find(
          (e) => e.type === 'Warning' && /no container ghost/.test(e.message ?? ''),
        ),
      { ...WAIT, message: 'a ProbeNotApplied Warning event on ppm-ghost naming container ghost' },
    );
    assert.match(
      warning.message ?? '',
      new RegExp(`no container ghost in ${web.length} pods`),
      'how many pods lack it',
    );
    for (const entry of await podProbesOfNamespace(stack.client, stack.namespace)) {
      assert.ok(!(entry.probes ?? []).some((x) => x.name === 'ppm-ghost#ghost'), `no ghost probe for ${entry.name}`);
    }
    for (const p of web)
      assert.equal(conditionOf(await getPod(stack, p.metadata!.name!), 'probe.e2e/ghost'), undefined);
  });

  it('refuses an invalid marker at admission with OpenKruise’s message (and a probe naming a host)', async () => {
    const bad = [
      {
        probe: execProbe({ name: 'a#b', containerName: 'web', command: ['true'], podConditionType: 'probe.e2e/x' }),
        message: /probe name can't contains '#'/,
      },
      {
        probe: execProbe({ name: 'bare', containerName: 'web', command: ['true'] }),
        message: /podConditionType and markerPolicy cannot be empty at the same time/,
      },
      {
        // ours, as OpenKruise after CVE-2026-24005: a probe reaches only its pod
        probe: {
          name: 'elsewhere',
          containerName: 'web',
          probe: { tcpSocket: { port: 443, host: 'kubernetes.default' } },
          podConditionType: 'probe.e2e/elsewhere',
        },
        message: /spec\.probes\[0\]\.probe\.tcpSocket\.host: Forbidden: a custom probe reaches only its pod's own IP/,
      },
    ];
    for (const { probe, message } of bad) {
      await assert.rejects(createMarker('ppm-invalid', [probe]), (err: unknown) => {
        assert.ok(err instanceof ApiError, String(err));
        assert.match(err.message, message);
        return true;
      });
    }
    assert.equal(await getMarker(stack, 'ppm-invalid'), undefined);
  });

  it('a selector matching many pods: every one probed and marked', async () => {
    const app = 'many';
    const replicas = 16;
    await createStatefulSet(
      stack,
      statefulSetManifest(stack.namespace, app, replicas, stack.cluster.images.busybox1, [
        { name: 'main', command: ['sh', '-c', 'touch /tmp/ok; trap "exit 0" TERM; while true; do sleep 1; done'] },
      ]),
    );
    const pods = await runningPods(stack, `app=${app}`, replicas, 240_000);
    await createMarker(
      'ppm-many',
      [
        execProbe({
          name: 'ok',
          containerName: 'main',
          command: ['test', '-f', '/tmp/ok'],
          podConditionType: 'probe.e2e/ok',
          markerPolicy: [{ state: 'Succeeded', labels: { 'probe-ok': 'yes' } }],
        }),
      ],
      app,
    );
    await waitFor(
      async () => {
        const now = await activePods(stack, `app=${app}`);
        return (
          now.length === replicas &&
          now.every(
            (p) => conditionOf(p, 'probe.e2e/ok')?.status === 'True' && p.metadata?.labels?.['probe-ok'] === 'yes',
          )
        );
      },
      { timeoutMs: 120_000, intervalMs: 500, message: `all ${replicas} pods True and labelled` },
    );
    const uids = new Set(pods.map((p) => p.metadata!.uid));
    const entries = (await podProbesOfNamespace(stack.client, stack.namespace)).filter((e) => uids.has(e.uid));
    assert.equal(entries.length, replicas, 'one NodePodProbe entry per pod');
    const marker = await waitFor(
      async () => {
        const m = await getMarker(stack, 'ppm-many');
        return m?.status?.matchedPods === replicas ? m : undefined;
      },
      { ...WAIT, message: `ppm-many status.matchedPods ${replicas}` },
    );
    assert.equal(marker.status?.observedGeneration, marker.metadata.generation);
  });
});
