// deploy/chart installed for real, on a cluster of this test's own (test/support/own-cluster.ts: nothing of deploy/
// applied beforehand; the shared cluster's deploy/ objects hold other tests' tokens): `helm install` with the image
// the cluster built (KRUISE_IMAGE) and IPRetention on (the cluster's pods are on kruise-ipam), the DaemonSet and
// Deployment rolled out, README's "Try it" block run against the pods (as readme-examples.test.ts runs it against
// `npm run dev`), a private image pre-pulled by the agent and what kubelet does with it, KubeletEnsureSecretPulledImages
// off and on (docs/image-pull.md), `helm upgrade --set daemon.log.level=debug` rolling the DaemonSet, `helm uninstall`
// leaving nothing but the CRDs (and what they keep). Then, on the same cluster, deploy/overlays/agent-only: our agent (kruise-daemon-ts) only on the node
// labelled kruise-daemon.io/agent=true, pulling that node's NodeImage, nothing of ours on the other node; deleted
// again. Figures (install to Ready, upgrade roll) are printed for docs/install.md.
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { load } from 'js-yaml';
import { join } from 'node:path';
import { packageRoot } from '../../../src/util/repo-root.js';
import { KubeClient } from '../../../src/kube/client.js';
import { loadKubeconfig } from '../../../src/kube/credentials/kubeconfig.js';
import { CHART_DIR, useHelm, type Helm } from '../../support/helm.js';
import { setNodeImageSpec, waitForStatus } from '../../support/nodeimages.js';
import { restartKubelet, startOwnCluster, writeTryItEnv, type OwnCluster } from '../../support/own-cluster.js';
import { assertTryItOutput, readmeBlock, runScript } from '../../support/readme.js';
import { waitFor } from '../../support/wait.js';

const NS = 'kruise-system';
const CRDS = [
  'containerrecreaterequests.apps.kruise.io',
  'imagelistpulljobs.apps.kruise.io',
  'imagepulljobs.apps.kruise.io',
  'nodeimages.apps.kruise.io',
  'nodepodprobes.apps.kruise.io',
  'persistentpodstates.apps.kruise.io',
  'podprobemarkers.apps.kruise.io',
];

interface Pod {
  metadata: { name: string; uid: string; labels?: Record<string, string> };
  spec: { nodeName?: string; containers: { env?: { name: string; value?: string }[] }[] };
  status: { phase?: string };
}

const figure = (what: string, ms: number): void =>
  void process.stderr.write(`      [figure] ${what}: ${(ms / 1000).toFixed(1)} s\n`);

describe('deploy/chart installed, upgraded and uninstalled on a real cluster of its own; then agent-only', function () {
  this.timeout(15 * 60_000);
  let cluster: OwnCluster;
  let helm: Helm;
  let admin: KubeClient;

  before(async () => {
    helm = await useHelm();
    const started = Date.now();
    cluster = await startOwnCluster('helm');
    figure('own cluster up', Date.now() - started);
    admin = new KubeClient(await loadKubeconfig(cluster.layout.adminKubeconfig), { timeoutMs: 30_000 });
  });

  after(async () => {
    helm?.close();
    await cluster?.stop();
  });

  const helmRun = (args: string[]): string => {
    const result = helm.run(
      [...args, '--kubeconfig', cluster.layout.adminKubeconfig, '--namespace', 'default'],
      300_000,
    );
    assert.equal(result.code, 0, `helm ${args.join(' ')}: ${result.err}`);
    return result.out;
  };
  const pods = (selector: string): Pod[] =>
    (JSON.parse(cluster.must(['get', 'pods', '-n', NS, '-l', selector, '-o', 'json'])) as { items: Pod[] }).items;
  const rollout = (what: string): void => void cluster.must(['rollout', 'status', '-n', NS, what, '--timeout=240s']);

  /** Every cluster-scoped object (kind/name) but those that come and go by themselves (leases, events, reviews). */
  const clusterScoped = (): Set<string> => {
    const types = cluster
      .must(['api-resources', '--namespaced=false', '--verbs=list', '-o', 'name'])
      .split(/\s+/)
      .filter((t) => t && !/^(leases|events|componentstatuses)\b/.test(t));
    return new Set(
      cluster
        .must(['get', types.join(','), '-o', 'name'])
        .split(/\s+/)
        .filter(Boolean),
    );
  };
  let beforeInstall = new Set<string>();

  it('helm install: the DaemonSet on every node and the controller Ready, NodeImages created', async () => {
    beforeInstall = clusterScoped();
    const started = Date.now();
    helmRun([
      'install',
      'kruise-daemon',
      CHART_DIR,
      '--set',
      `manager.image.repository=${cluster.image.repository}`,
      '--set',
      `manager.image.tag=${cluster.image.tag}`,
      '--set',
      'featureGates=IPRetention=true',
    ]);
    const installed = Date.now();
    rollout('ds/kruise-daemon');
    rollout('deploy/kruise-controller');
    figure('helm install returned', installed - started);
    figure('helm install to DaemonSet and Deployment rolled out', Date.now() - started);
    const agents = pods('app.kubernetes.io/name=kruise-daemon');
    assert.deepEqual(
      agents.map((p) => p.spec.nodeName).sort(),
      cluster.layout.nodes.map((n) => n.name),
      'one agent per node',
    );
    // the controller creates each node's NodeImage 30 s after the node got Ready (the chart's default)
    await waitFor(
      () => {
        const names = cluster.must(['get', 'nodeimages', '-o', 'jsonpath={.items[*].metadata.name}']).split(/\s+/);
        return cluster.layout.nodes.every((n) => names.includes(n.name));
      },
      { timeoutMs: 90_000, intervalMs: 500, message: 'a NodeImage per node' },
    );
    figure('helm install to every NodeImage created', Date.now() - started);
  });

  it("README's Try it block passes against the installed chart", async () => {
    const envFile = writeTryItEnv(cluster);
    const block = readmeBlock('test/e2e/operate/readme-examples.test.ts');
    const script = block.replace('source .cluster/dev.env', `source ${envFile}`);
    assert.notEqual(script, block, 'the block sources .cluster/dev.env');
    const started = Date.now();
    const { code, out } = await runScript(script);
    figure('Try it block', Date.now() - started);
    assert.equal(code, 0, out);
    assertTryItOutput(out);
  });

  it('a private image pre-pulled by the agent, and kubelet with KubeletEnsureSecretPulledImages off and on', async () => {
    const [node1, node2] = cluster.layout.nodes;
    assert.ok(node1 && node2);
    const v = cluster.vars;
    const ref = v.TEST_IMAGE_AUTH_BUSYBOX_1!;
    const name = ref.slice(0, ref.lastIndexOf(':'));
    cluster.must([
      'create',
      'secret',
      'docker-registry',
      'regcred',
      `--docker-server=${v.AUTH_REGISTRY!}`,
      `--docker-username=${v.AUTH_USER!}`,
      `--docker-password=${v.AUTH_PASSWORD!}`,
    ]);
    cluster.must([
      'create',
      'rolebinding',
      'kruise-controller-pull-secret-reader',
      '--clusterrole=kruise-controller-pull-secret-reader',
      '--serviceaccount=kruise-system:kruise-controller',
    ]);
    const job = {
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'ImagePullJob',
      metadata: { name: 'private', namespace: 'default' },
      spec: {
        image: ref,
        pullSecrets: ['regcred'],
        selector: { names: [node1.name] },
        completionPolicy: { type: 'Always' },
      },
    };
    cluster.must(['apply', '-f', '-'], JSON.stringify(job));
    await waitForStatus(
      admin,
      node1.name,
      (status) => status.imageStatuses?.[name]?.tags.some((t) => t.tag === '1.0' && t.phase === 'Succeeded') === true,
      { timeoutMs: 120_000, intervalMs: 500, message: `${ref} pre-pulled on ${node1.name} with regcred` },
    );

    /** A pod of `ref` on `node` (IfNotPresent), with or without the secret: Running, or kubelet's pull error. */
    const outcome = async (pod: string, node: string, secret: boolean): Promise<string> => {
      const manifest = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: pod, namespace: 'default' },
        spec: {
          nodeName: node,
          terminationGracePeriodSeconds: 0,
          ...(secret ? { imagePullSecrets: [{ name: 'regcred' }] } : {}),
          containers: [{ name: 'c', image: ref, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] }],
        },
      };
      cluster.must(['apply', '-f', '-'], JSON.stringify(manifest));
      const result = await waitFor(
        () => {
          const got = JSON.parse(cluster.must(['get', 'pod', pod, '-o', 'json'])) as {
            status: {
              containerStatuses?: { state: { running?: object; waiting?: { reason?: string; message?: string } } }[];
            };
          };
          const state = got.status.containerStatuses?.[0]?.state;
          if (state?.running) {
            // kubelet's own word on the image: "already present on machine" or "Successfully pulled"
            const pulled = cluster.must([
              'get',
              'events',
              '--field-selector',
              `involvedObject.name=${pod},reason=Pulled`,
              '-o',
              'jsonpath={.items[*].message}',
            ]);
            return pulled
              ? `Running (${pulled.replace(/ in [\d.]+m?s.*$/, '').replace(/"[^"]*"/, 'IMAGE')})`
              : undefined;
          }
          const reason = state?.waiting?.reason;
          return reason === 'ErrImagePull' || reason === 'ImagePullBackOff'
            ? `${reason}: ${state?.waiting?.message ?? ''}`
            : undefined;
        },
        { timeoutMs: 90_000, intervalMs: 250, message: `pod ${pod} running or failing to pull` },
      );
      cluster.must(['delete', 'pod', pod, '--wait=true', '--timeout=60s']);
      process.stderr.write(`      [kubelet] ${pod} on ${node}${secret ? ' with the secret' : ''}: ${result}\n`);
      return result;
    };

    const unauthorized = /^(ErrImagePull|ImagePullBackOff): .*401 Unauthorized/;
    const present = 'Running (Container image IMAGE already present on machine)';
    // the image is private: a node without it cannot pull it without the secret
    assert.match(await outcome('private-elsewhere', node2.name, false), unauthorized);
    // gate off (1.33's default): the pre-pulled image is used by any pod on the node, with or without the secret
    assert.equal(await outcome('private-gate-off', node1.name, false), present);

    const dropIn = join(cluster.dir, 'kubelet-config.d');
    mkdirSync(dropIn, { recursive: true });
    try {
      // gate on, its default policy NeverVerifyPreloadedImages: an image kubelet has no pull record of (ours pulled
      // it) counts as preloaded and is never verified
      const on = await restartKubelet(cluster, node1, ['--feature-gates=KubeletEnsureSecretPulledImages=true']);
      assert.equal(on.imagePullCredentialsVerificationPolicy, 'NeverVerifyPreloadedImages');
      // (kubelet's message says so now: "... already present on machine and can be accessed by the pod")
      assert.equal(
        await outcome('private-gate-on', node1.name, false),
        `${present.slice(0, -1)} and can be accessed by the pod)`,
      );
      // gate on, AlwaysVerify: kubelet checks the pod's own credentials against the registry
      writeFileSync(
        join(dropIn, '50-verify.conf'),
        'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nimagePullCredentialsVerificationPolicy: AlwaysVerify\n',
      );
      const always = await restartKubelet(cluster, node1, [
        '--feature-gates=KubeletEnsureSecretPulledImages=true',
        `--config-dir=${dropIn}`,
      ]);
      assert.equal(always.imagePullCredentialsVerificationPolicy, 'AlwaysVerify');
      assert.match(await outcome('private-always-verify', node1.name, false), unauthorized);
      const withSecret = await outcome('private-always-verify-secret', node1.name, true);
      assert.match(withSecret, /^Running /);
      // kubelet now records that regcred pulled it: a pod without the secret is still refused
      assert.match(await outcome('private-always-verify-again', node1.name, false), unauthorized);
    } finally {
      await restartKubelet(cluster, node1, []);
      rmSync(dropIn, { recursive: true, force: true });
      cluster.kubectl(['delete', 'imagepulljob', 'private', '--ignore-not-found']);
      cluster.kubectl(['delete', 'secret', 'regcred', '--ignore-not-found']);
      cluster.kubectl(['delete', 'rolebinding', 'kruise-controller-pull-secret-reader', '--ignore-not-found']);
    }
  });

  it('helm upgrade --set daemon.log.level=debug rolls the DaemonSet: new pods, new generation observed', () => {
    const before = JSON.parse(cluster.must(['get', 'ds/kruise-daemon', '-n', NS, '-o', 'json'])) as {
      metadata: { generation: number };
    };
    const oldPods = new Set(pods('app.kubernetes.io/name=kruise-daemon').map((p) => p.metadata.uid));
    const controllerPods = pods('control-plane=controller')
      .map((p) => p.metadata.uid)
      .sort();
    const started = Date.now();
    helmRun(['upgrade', 'kruise-daemon', CHART_DIR, '--reuse-values', '--set', 'daemon.log.level=debug']);
    rollout('ds/kruise-daemon');
    figure('helm upgrade to DaemonSet rolled (2 nodes)', Date.now() - started);
    const after = JSON.parse(cluster.must(['get', 'ds/kruise-daemon', '-n', NS, '-o', 'json'])) as {
      metadata: { generation: number };
      status: { observedGeneration: number; updatedNumberScheduled: number; numberReady: number };
    };
    assert.ok(after.metadata.generation > before.metadata.generation, 'a new generation');
    assert.equal(after.status.observedGeneration, after.metadata.generation, 'observed');
    assert.equal(after.status.updatedNumberScheduled, 2);
    assert.equal(after.status.numberReady, 2);
    const agents = pods('app.kubernetes.io/name=kruise-daemon').filter((p) => p.status.phase === 'Running');
    assert.equal(agents.length, 2);
    for (const pod of agents) {
      assert.ok(!oldPods.has(pod.metadata.uid), `${pod.metadata.name} is a new pod`);
      const level = pod.spec.containers[0]!.env?.find((e) => e.name === 'LOG_LEVEL')?.value;
      assert.equal(level, 'debug', `${pod.metadata.name} runs with LOG_LEVEL=debug`);
    }
    // an agent value leaves the controller's pods alone
    assert.deepEqual(
      pods('control-plane=controller')
        .map((p) => p.metadata.uid)
        .sort(),
      controllerPods,
    );
    const revisions = helmRun(['history', 'kruise-daemon', '-o', 'json']);
    assert.deepEqual(
      (JSON.parse(revisions) as { revision: number; status: string }[]).map((r) => `${r.revision} ${r.status}`),
      ['1 superseded', '2 deployed'],
    );
  });

  it('helm uninstall leaves nothing but the 7 CRDs', async () => {
    const started = Date.now();
    helmRun(['uninstall', 'kruise-daemon', '--wait', '--timeout', '4m']);
    figure('helm uninstall --wait', Date.now() - started);
    const ours = (): string[] => {
      const left: string[] = [];
      const names = (kind: string, ns?: string): string[] =>
        cluster
          .must(['get', kind, ...(ns ? ['-n', ns] : []), '-o', 'jsonpath={.items[*].metadata.name}'])
          .split(/\s+/)
          .filter(Boolean);
      for (const n of names('namespaces').filter((n) => n.startsWith('kruise'))) left.push(`namespace ${n}`);
      for (const kind of [
        'clusterroles',
        'clusterrolebindings',
        'mutatingwebhookconfigurations',
        'validatingwebhookconfigurations',
        'validatingadmissionpolicies',
        'validatingadmissionpolicybindings',
      ]) {
        for (const n of names(kind).filter((n) => n.includes('kruise'))) left.push(`${kind} ${n}`);
      }
      for (const n of names('secrets', 'default').filter((n) => n.startsWith('sh.helm.release'))) {
        left.push(`secret default/${n}`);
      }
      for (const n of names('crd').filter((n) => n.endsWith('.kruise.io'))) left.push(`crd ${n}`);
      return left.sort();
    };
    // namespaces are deleted asynchronously (their pods terminate first)
    const left = await waitFor(
      () => {
        const now = ours();
        return now.every((o) => o.startsWith('crd ')) ? now : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 500, message: `nothing of ours but the CRDs: ${ours().join(', ')}` },
    );
    figure('helm uninstall to namespaces gone', Date.now() - started);
    assert.deepEqual(
      left,
      CRDS.map((c) => `crd ${c}`),
    );
    // every cluster-scoped object that was not there before the install: the CRDs, their API groups' APIServices and
    // the custom resources the CRDs keep (the NodeImages and NodePodProbes)
    const added = [...clusterScoped()].filter((o) => !beforeInstall.has(o)).sort();
    assert.deepEqual(
      added,
      [
        'apiservice.apiregistration.k8s.io/v1alpha1.apps.kruise.io',
        'apiservice.apiregistration.k8s.io/v1beta1.apps.kruise.io',
        ...CRDS.map((c) => `customresourcedefinition.apiextensions.k8s.io/${c}`),
        ...cluster.layout.nodes.map((n) => `nodeimage.apps.kruise.io/${n.name}`),
        ...cluster.layout.nodes.map((n) => `nodepodprobe.apps.kruise.io/${n.name}`),
      ],
      'nothing else cluster-scoped is left (no namespace, ClusterRole, binding, webhook configuration or policy)',
    );
    // the custom resources stay with their CRDs
    const nodeImages = cluster.must(['get', 'nodeimages', '-o', 'jsonpath={.items[*].metadata.name}']);
    assert.equal(nodeImages, 'kd-node-1 kd-node-2');
  });

  it('deploy/overlays/agent-only: kruise-daemon-ts on the labelled node only, pulling its NodeImage; deleted cleanly', async () => {
    const [node1, node2] = cluster.layout.nodes;
    assert.ok(node1 && node2);
    // OpenKruise's namespaces: the overlay leaves them out (they are OpenKruise's)
    cluster.must(['create', 'namespace', NS]);
    cluster.must(['label', 'namespace', NS, 'pod-security.kubernetes.io/enforce=privileged']);
    cluster.must(['create', 'namespace', 'kruise-daemon-config']);
    const rendered = cluster.must(['kustomize', join(packageRoot(), 'deploy', 'overlays', 'agent-only')]);
    const manifests = rendered
      .split(/^---$/m)
      .map((doc) => load(doc) as Record<string, any> | null)
      .filter((doc): doc is Record<string, any> => doc !== null);
    const ds = manifests.find((m) => m.kind === 'DaemonSet');
    assert.ok(ds);
    assert.equal(ds.metadata.name, 'kruise-daemon-ts');
    for (const c of ds.spec.template.spec.containers as { image: string }[]) c.image = cluster.vars.KRUISE_IMAGE!;
    const list = JSON.stringify({ apiVersion: 'v1', kind: 'List', items: manifests });
    cluster.must(['apply', '-f', '-'], list);
    cluster.must(['label', 'node', node2.name, 'kruise-daemon.io/agent=true']);
    const started = Date.now();
    await waitFor(
      () => {
        const status = JSON.parse(cluster.must(['get', 'ds/kruise-daemon-ts', '-n', NS, '-o', 'json'])) as {
          status: { desiredNumberScheduled?: number; numberReady?: number };
        };
        return status.status.desiredNumberScheduled === 1 && status.status.numberReady === 1;
      },
      { timeoutMs: 120_000, intervalMs: 500, message: 'kruise-daemon-ts Ready on the labelled node' },
    );
    figure('agent-only: label to agent Ready', Date.now() - started);
    const all = (
      JSON.parse(cluster.must(['get', 'pods', '-A', '-o', 'json'])) as {
        items: (Pod & { metadata: { namespace: string } })[];
      }
    ).items;
    const oursEverywhere = all.filter((p) => p.metadata.namespace.startsWith('kruise'));
    assert.deepEqual(
      oursEverywhere.map((p) => `${p.metadata.name.replace(/-\w+$/, '')} on ${p.spec.nodeName}`),
      [`kruise-daemon-ts on ${node2.name}`],
      'our agent on the labelled node, nothing of ours on the other',
    );
    // the agent does its job: a tag in the labelled node's NodeImage gets pulled and reported (no controller here:
    // the NodeImage exists from the chart's install, its spec is written by hand with the webhook's defaults)
    const image = cluster.vars.TEST_IMAGE_BUSYBOX_1!;
    const colon = image.lastIndexOf(':');
    const name = image.slice(0, colon);
    const tag = image.slice(colon + 1);
    await setNodeImageSpec(admin, node2.name, {
      images: {
        [name]: {
          tags: [
            {
              tag,
              version: 0,
              createdAt: new Date().toISOString(),
              pullPolicy: { timeoutSeconds: 600, backoffLimit: 3 },
            },
          ],
        },
      },
    });
    await waitForStatus(
      admin,
      node2.name,
      (status) => status.imageStatuses?.[name]?.tags.some((t) => t.tag === tag && t.phase === 'Succeeded') === true,
      { timeoutMs: 120_000, intervalMs: 500, message: `${image} pulled on ${node2.name} by kruise-daemon-ts` },
    );
    // delete it as installed (the rendered objects, CRDs included), then OpenKruise's namespaces
    cluster.must(['delete', '-f', '-', '--wait=true', '--timeout=180s'], list);
    cluster.must(['delete', 'namespace', NS, 'kruise-daemon-config', '--wait=true', '--timeout=180s']);
    const left = cluster
      .must(['get', 'pods', '-A', '-o', 'jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name} {end}'])
      .split(/\s+/)
      .filter((p) => p.startsWith('kruise'));
    assert.deepEqual(left, [], 'no pod of ours left');
    for (const kind of ['clusterroles', 'clusterrolebindings', 'validatingadmissionpolicies', 'crd']) {
      const names = cluster.must(['get', kind, '-o', 'jsonpath={.items[*].metadata.name}']);
      assert.ok(!/kruise/.test(names), `no ${kind} of ours left: ${names}`);
    }
  });
});
