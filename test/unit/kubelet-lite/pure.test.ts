// kubelet-lite's pure parts: the container hash, $(VAR) expansion, env resolution, crash backoff, sync-trigger
// filter, timers and config validation.
import assert from 'node:assert/strict';
import { CrashBackoff } from '../../cluster/kubelet-lite/crash-backoff.js';
import { EnvError, makeEnvironment, type ConfigSource } from '../../cluster/kubelet-lite/env.js';
import { expand } from '../../cluster/kubelet-lite/expansion.js';
import { containerHash, goJsonString } from '../../cluster/kubelet-lite/hash.js';
import { containerAnnotations, containerLabels, sandboxLabels } from '../../cluster/kubelet-lite/labels.js';
import { podsDifferSemantically } from '../../cluster/kubelet-lite/node-kubelet.js';
import { formatDuration } from '../../cluster/kubelet-lite/pod-sync.js';
import { parseKubeletLiteConfig } from '../../cluster/kubelet-lite/process-config.js';
import { hostDnsConfig } from '../../cluster/kubelet-lite/sandbox-config.js';
import { lastLogText } from '../../cluster/kubelet-lite/termination-message.js';
import { scaledTimers } from '../../cluster/kubelet-lite/timers.js';
import type { ConfigMap, Container, Pod, Secret } from '../../cluster/kubelet-lite/types.js';

export function testPod(extra: Partial<Pod['spec']> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'web',
      namespace: 'ns1',
      uid: 'uid-1',
      labels: { app: 'web', 'io.kubernetes.pod.name': 'spoofed' },
      annotations: { note: 'hi', 'kubernetes.io/config.seen': 'x' },
    },
    spec: { nodeName: 'node-a', serviceAccountName: 'sa', terminationGracePeriodSeconds: 7, containers: [], ...extra },
  };
}

function source(configMaps: Record<string, ConfigMap> = {}, secrets: Record<string, Secret> = {}): ConfigSource {
  return {
    configMap: (ns, name) => Promise.resolve(configMaps[`${ns}/${name}`]),
    secret: (ns, name) => Promise.resolve(secrets[`${ns}/${name}`]),
  };
}

describe('kubelet-lite: container hash', () => {
  it("matches kubelet's HashContainer test vector", () => {
    assert.equal(containerHash({ name: 'test_container', image: 'foo/image:v1' }), '8e45cbd0');
  });
  it('escapes like encoding/json', () => {
    assert.equal(goJsonString('a<b>&"\\\n\u2028'), '"a\\u003cb\\u003e\\u0026\\"\\\\\\n\\u2028"');
  });
  it('changes with the image only among spec fields', () => {
    const a = containerHash({ name: 'c', image: 'x:1' });
    assert.notEqual(a, containerHash({ name: 'c', image: 'x:2' }));
    assert.equal(a, containerHash({ name: 'c', image: 'x:1', command: ['other'] } as Container));
  });
});

describe('kubelet-lite: $(VAR) expansion', () => {
  const vars: Record<string, string> = { A: 'alpha', B: 'beta' };
  const lookup = (n: string): string | undefined => vars[n];
  for (const [input, want] of [
    ['$(A)-$(B)', 'alpha-beta'],
    ['$$(A)', '$(A)'],
    ['$(MISSING)', '$(MISSING)'],
    ['$(A', '$(A'],
    ['cost $5', 'cost $5'],
    ['end$', 'end$'],
    ['$()', '$()'],
  ] as const) {
    it(`${input} → ${want}`, () => assert.equal(expand(input, lookup), want));
  }
});

describe('kubelet-lite: environment', () => {
  const ctx = (src = source()) => ({
    pod: testPod(),
    nodeName: 'node-a',
    podIPs: ['10.1.0.5'],
    hostIPs: ['127.0.0.1'],
    source: src,
  });

  it('resolves fieldRef paths and expands values against earlier variables', async () => {
    const env = await makeEnvironment(
      {
        name: 'c',
        image: 'i',
        env: [
          { name: 'NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          { name: 'NS', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
          { name: 'UID', valueFrom: { fieldRef: { fieldPath: 'metadata.uid' } } },
          { name: 'APP', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
          { name: 'NOTE', valueFrom: { fieldRef: { fieldPath: "metadata.annotations['note']" } } },
          { name: 'NONE', valueFrom: { fieldRef: { fieldPath: "metadata.annotations['absent']" } } },
          { name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
          { name: 'SA', valueFrom: { fieldRef: { fieldPath: 'spec.serviceAccountName' } } },
          { name: 'IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
          { name: 'HOST', valueFrom: { fieldRef: { fieldPath: 'status.hostIP' } } },
          { name: 'BOTH', value: '$(NAME).$(NS)' },
        ],
      },
      ctx(),
    );
    assert.deepEqual(Object.fromEntries(env.map((e) => [e.key, e.value])), {
      NAME: 'web',
      NS: 'ns1',
      UID: 'uid-1',
      APP: 'web',
      NOTE: 'hi',
      NONE: '',
      NODE: 'node-a',
      SA: 'sa',
      IP: '10.1.0.5',
      HOST: '127.0.0.1',
      BOTH: 'web.ns1',
    });
  });

  it("fails with kubelet's messages for a missing key, ConfigMap or Secret unless optional", async () => {
    const src = source(
      { 'ns1/cm': { data: { present: 'v' } } as ConfigMap },
      { 'ns1/s': { data: { k: Buffer.from('secret!').toString('base64') } } as Secret },
    );
    const one = (valueFrom: object) =>
      makeEnvironment({ name: 'c', image: 'i', env: [{ name: 'X', valueFrom }] }, ctx(src));
    await assert.rejects(
      one({ configMapKeyRef: { name: 'cm', key: 'p_1' } }),
      (e: Error) => e instanceof EnvError && e.message === "couldn't find key p_1 in ConfigMap ns1/cm",
    );
    await assert.rejects(one({ configMapKeyRef: { name: 'nope', key: 'k' } }), /configmap "nope" not found/);
    await assert.rejects(
      one({ secretKeyRef: { name: 's', key: 'other' } }),
      /couldn't find key other in Secret ns1\/s/,
    );
    assert.deepEqual(await one({ configMapKeyRef: { name: 'cm', key: 'p_1', optional: true } }), []);
    assert.deepEqual(await one({ secretKeyRef: { name: 's', key: 'k' } }), [{ key: 'X', value: 'secret!' }]);
    await assert.rejects(one({ fieldRef: { fieldPath: 'spec.hostname' } }), /unsupported fieldPath/);
  });

  it('puts envFrom first (prefix, invalid names skipped) and lets env override it', async () => {
    const src = source({ 'ns1/cm': { data: { A: '1', 'bad=name': 'x', B: '2' } } as ConfigMap });
    const env = await makeEnvironment(
      {
        name: 'c',
        image: 'i',
        envFrom: [{ configMapRef: { name: 'cm' }, prefix: 'P_' }],
        env: [{ name: 'P_B', value: 'override' }],
      },
      ctx(src),
    );
    assert.deepEqual(env, [
      { key: 'P_A', value: '1' },
      { key: 'P_B', value: 'override' },
    ]);
  });
});

describe('kubelet-lite: CRI labels and annotations', () => {
  it('sandbox labels: pod labels, then the identity labels win; containers get only identity + name', () => {
    const pod = testPod();
    assert.deepEqual(sandboxLabels(pod, 'node-a'), {
      app: 'web',
      'io.kubernetes.pod.name': 'web',
      'io.kubernetes.pod.namespace': 'ns1',
      'io.kubernetes.pod.uid': 'uid-1',
      'kubelet-lite.kruise.io/node': 'node-a',
    });
    assert.deepEqual(containerLabels(pod, { name: 'c', image: 'i' }), {
      'io.kubernetes.pod.name': 'web',
      'io.kubernetes.pod.namespace': 'ns1',
      'io.kubernetes.pod.uid': 'uid-1',
      'io.kubernetes.container.name': 'c',
    });
  });
  it('container annotations as kubelet writes them', () => {
    const pod = testPod();
    pod.metadata.deletionGracePeriodSeconds = 3;
    const c: Container = {
      name: 'c',
      image: 'i',
      ports: [{ containerPort: 80, protocol: 'TCP' }],
      lifecycle: { preStop: { exec: { command: ['sh', '-c', 'x'] } } },
    };
    assert.deepEqual(containerAnnotations(pod, c, 4, 'abc'), {
      'io.kubernetes.container.hash': 'abc',
      'io.kubernetes.container.restartCount': '4',
      'io.kubernetes.container.terminationMessagePath': '/dev/termination-log',
      'io.kubernetes.container.terminationMessagePolicy': 'File',
      'io.kubernetes.pod.deletionGracePeriod': '3',
      'io.kubernetes.pod.terminationGracePeriod': '7',
      'io.kubernetes.container.preStopHandler': '{"exec":{"command":["sh","-c","x"]}}',
      'io.kubernetes.container.ports': '[{"containerPort":80,"protocol":"TCP"}]',
    });
  });
});

describe('kubelet-lite: crash backoff', () => {
  it('restarts at once the first time, then waits base, 2 x base, ... capped, and forgets after the reset time', () => {
    let now = 1_000_000;
    const b = new CrashBackoff({ backoffBaseMs: 10, backoffMaxMs: 40, backoffResetMs: 1000 }, () => now);
    assert.equal(b.inBackoffSince('k', now), undefined);
    b.next('k');
    assert.equal(b.inBackoffSince('k', now), 10);
    now += 10;
    assert.equal(b.inBackoffSince('k', now - 10), undefined);
    b.next('k');
    assert.equal(b.inBackoffSince('k', now), 20);
    b.next('k');
    b.next('k');
    assert.equal(b.inBackoffSince('k', now), 40);
    now += 1001;
    assert.equal(b.inBackoffSince('k', now), undefined);
  });
  it('forgets the keys of a pod', () => {
    const b = new CrashBackoff({ backoffBaseMs: 10, backoffMaxMs: 40, backoffResetMs: 1000 }, () => 0);
    b.next('web_ns1_uid-1_c_abc');
    b.forgetPod('uid-1');
    assert.equal(b.inBackoffSince('web_ns1_uid-1_c_abc', 0), undefined);
  });
  it("formats durations as Go's time.Duration", () => {
    assert.equal(formatDuration(10_000), '10s');
    assert.equal(formatDuration(80_000), '1m20s');
    assert.equal(formatDuration(300_000), '5m0s');
  });
});

describe('kubelet-lite: sync triggers', () => {
  it('a metadata or spec change syncs; status-only and kubernetes.io/config.* changes do not', () => {
    const a = testPod();
    const status = { ...a, status: { phase: 'Running' } };
    assert.equal(podsDifferSemantically(a, status), false);
    const local = structuredClone(a);
    local.metadata.annotations = { ...local.metadata.annotations, 'kubernetes.io/config.seen': 'later' };
    assert.equal(podsDifferSemantically(a, local), false);
    const touched = structuredClone(a);
    touched.metadata.annotations = { ...touched.metadata.annotations, touch: '1' };
    assert.equal(podsDifferSemantically(a, touched), true);
    const deleting = structuredClone(a);
    deleting.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
    assert.equal(podsDifferSemantically(a, deleting), true);
  });
});

describe('kubelet-lite: timers, config, DNS', () => {
  it('scales every timer, relist not below 100 ms', () => {
    const t = scaledTimers(0.01);
    assert.equal(t.backoffBaseMs, 100);
    assert.equal(t.retryMs, 100);
    assert.equal(t.relistMs, 100);
    assert.throws(() => scaledTimers(0), /time scale/);
  });
  it('validates the process config and names the field', () => {
    const good = {
      nodes: ['n1'],
      kubeconfig: '/k',
      runtimeSocket: '/s',
      podCgroupParent: '/kd-1',
      podLogDir: '/l',
      stateDir: '/st',
      readyFile: '/r',
      hostIP: '127.0.0.1',
    };
    assert.equal(parseKubeletLiteConfig(JSON.stringify(good)).timeScale, 1);
    assert.throws(() => parseKubeletLiteConfig('{'), /not JSON/);
    assert.throws(
      () => parseKubeletLiteConfig(JSON.stringify({ ...good, nodes: ['Bad_Node'] })),
      /not a DNS subdomain/,
    );
    assert.throws(
      () => parseKubeletLiteConfig(JSON.stringify({ ...good, stateDir: 'rel' })),
      /stateDir must be an absolute path/,
    );
    assert.throws(() => parseKubeletLiteConfig(JSON.stringify({ ...good, timeScale: -1 })), /timeScale/);
  });
  it('takes the text of CRI log lines for FallbackToLogsOnError', () => {
    const log = '2026-01-01T00:00:00.1Z stdout F first line\n2026-01-01T00:00:00.2Z stderr F oops: it failed\n';
    assert.equal(lastLogText(log), 'first line\noops: it failed');
  });
  it("parses the host's resolv.conf", () => {
    assert.deepEqual(hostDnsConfig('# c\nnameserver 1.1.1.1\nsearch a b\nnameserver 8.8.8.8\noptions ndots:2\n'), {
      servers: ['1.1.1.1', '8.8.8.8'],
      searches: ['a', 'b'],
      options: ['ndots:2'],
    });
  });
});
