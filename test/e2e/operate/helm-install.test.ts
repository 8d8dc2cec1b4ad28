// deploy/chart installed for real, on a cluster of this test's own (test/support/own-cluster.ts: nothing of deploy/
// applied beforehand; the shared cluster's deploy/ objects hold other tests' tokens), with helm 3 and then helm 4
// (versions.env's HELM_VERSION and HELM4_VERSION), each in turn: `helm install` with the image the cluster built
// (KRUISE_IMAGE) and IPRetention on (the cluster's pods are on kruise-ipam), the DaemonSet and Deployment rolled out,
// README's "Try it" block run against the pods (as readme-examples.test.ts runs it against `npm run dev`), `helm
// upgrade --set daemon.log.level=debug` rolling the DaemonSet, `helm uninstall` leaving nothing but the CRDs (and what
// they keep). Once, in the first round: a private image pre-pulled by the agent and what kubelet does with it under
// KEP-2535 (its default for the cell's Kubernetes, the gate flipped, AlwaysVerify, and after kubelet's own pull;
// docs/image-pull.md). Then, on the same cluster, deploy/overlays/agent-only: our agent (kruise-daemon-ts) only on the
// node labelled kruise-daemon.io/agent=true, pulling that node's NodeImage, nothing of ours on the other node; deleted
// again. Figures (install to Ready, upgrade roll) are printed for docs/install.md.
import { agentImageGcArgs, KUBELET_IMAGE_GC_PERCENT } from '../../cluster/k8s/nodes.js';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { load } from 'js-yaml';
import { join } from 'node:path';
import { packageRoot } from '../../../src/util/repo-root.js';
import { KubeClient } from '../../../src/kube/client.js';
import { loadKubeconfig } from '../../../src/kube/credentials/kubeconfig.js';
import { runChecked } from '../../cluster/runtime/exec.js';
import { CHART_DIR, HELM_MAJORS, useHelm, type Helm, type HelmMajor } from '../../support/helm.js';
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
  const helms = new Map<HelmMajor, Helm>();
  let admin: KubeClient;

  before(async () => {
    const started = Date.now();
    cluster = await startOwnCluster('helm');
    figure('own cluster up', Date.now() - started);
    admin = new KubeClient(await loadKubeconfig(cluster.layout.adminKubeconfig), { timeoutMs: 30_000 });
  });

  after(async () => {
    for (const helm of helms.values()) helm.close();
    await cluster?.stop();
  });

  const helmRun = (major: HelmMajor, args: string[]): string => {
    const helm = helms.get(major);
    assert.ok(helm, `helm ${major}`);
    const result = helm.run(
      [...args, '--kubeconfig', cluster.layout.adminKubeconfig, '--namespace', 'default'],
      300_000,
    );
    assert.equal(result.code, 0, `helm ${helm.version} ${args.join(' ')}: ${result.err}`);
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

  // the chart's whole life with each helm in turn (helm 3, then helm 4), on the same cluster
  for (const major of HELM_MAJORS) {
    it(`helm ${major} install: the DaemonSet on every node and the controller Ready, NodeImages created`, async () => {
      // each helm when its round starts (built on first use)
      helms.set(major, await useHelm(major));
      beforeInstall = clusterScoped();
      const started = Date.now();
      helmRun(major, [
        'install',
        'kruise-daemon',
        CHART_DIR,
        '--set',
        `manager.image.repository=${cluster.image.repository}`,
        '--set',
        `manager.image.tag=${cluster.image.tag}`,
        '--set',
        'featureGates=IPRetention=true',
        // the test nodes' kubelet thresholds (test/cluster/k8s/nodes.ts: the disk is the host's, shared)
        '--set',
        `daemon.imageGC.highThresholdPercent=${KUBELET_IMAGE_GC_PERCENT.high}`,
        '--set',
        `daemon.imageGC.lowThresholdPercent=${KUBELET_IMAGE_GC_PERCENT.low}`,
      ]);
      const installed = Date.now();
      rollout('ds/kruise-daemon');
      rollout('deploy/kruise-controller');
      figure(`helm ${major} install returned`, installed - started);
      figure(`helm ${major} install to DaemonSet and Deployment rolled out`, Date.now() - started);
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
      figure(`helm ${major} install to every NodeImage created`, Date.now() - started);
    });

    it(`README's Try it block passes against the chart installed by helm ${major}`, async () => {
      const envFile = writeTryItEnv(cluster);
      const block = readmeBlock('test/e2e/operate/readme-examples.test.ts');
      const script = block.replace('source .cluster/dev.env', `source ${envFile}`);
      assert.notEqual(script, block, 'the block sources .cluster/dev.env');
      const started = Date.now();
      const { code, out } = await runScript(script);
      figure(`Try it block (helm ${major})`, Date.now() - started);
      try {
        assert.equal(code, 0, out);
        assertTryItOutput(out);
      } finally {
        // what the block made, so the next helm's round runs it on a clean namespace (a pod it applies again would
        // be "unchanged", its restart count already moved), deleted while our controller and agents still serve it
        cluster.must([
          'delete',
          'statefulset/web',
          'pod/crr-demo',
          'pod/launch-demo',
          '--ignore-not-found',
          '--wait=true',
          '--timeout=120s',
        ]);
        cluster.must([
          'delete',
          'imagepulljobs,containerrecreaterequests,persistentpodstates',
          '--all',
          '--wait=true',
          '--timeout=120s',
        ]);
      }
    });

    // once, with the first helm's install: kubelet's behaviour does not depend on the helm that installed us
    if (major === HELM_MAJORS[0]) {
      it('a private image pre-pulled by the agent, and kubelet (KEP-2535) with its default, the gate flipped, AlwaysVerify, and a pull record', async () => {
        const [node1, node2] = cluster.layout.nodes;
        assert.ok(node1 && node2);
        const v = cluster.vars;
        // Images of this run only: kubelet keeps its pull records by image ID, and the cluster's test images are the
        // same in both registries (the private busybox:1.0 is the public one's ID), so a pod of another test may
        // have made kubelet record that ID. Two of busybox:1.0 with a config of their own (an env variable): `solo`
        // only in the private registry, `shared` in both, the same ID under both names.
        const run = Date.now().toString(36);
        const work = mkdtempSync(join(tmpdir(), 'kd-kep2535-'));
        const authFile = join(work, 'auth.json');
        writeFileSync(
          authFile,
          JSON.stringify({
            auths: {
              [v.AUTH_REGISTRY!]: { auth: Buffer.from(`${v.AUTH_USER!}:${v.AUTH_PASSWORD!}`).toString('base64') },
            },
          }),
          { mode: 0o600 },
        );
        const skopeo = ['--insecure-policy', 'copy', '--quiet', '--src-tls-verify=false', '--dest-tls-verify=false'];
        const layout = join(work, 'oci');
        await runChecked('skopeo', [...skopeo, `docker://${v.TEST_IMAGE_BUSYBOX_1!}`, `oci:${layout}:source`]);
        const variant = async (tag: string, targets: string[]): Promise<void> => {
          await runChecked('umoci', [
            'config',
            '--image',
            `${layout}:source`,
            '--tag',
            tag,
            `--config.env=KEP2535=${tag}-${run}`,
          ]);
          for (const target of targets) {
            await runChecked('skopeo', [
              ...skopeo,
              '--preserve-digests',
              ...(target.startsWith(v.AUTH_REGISTRY!) ? ['--dest-authfile', authFile] : []),
              `oci:${layout}:${tag}`,
              `docker://${target}`,
            ]);
          }
        };
        const ref = `${v.AUTH_REGISTRY!}/test/kep2535:solo-${run}`;
        const sharedPrivate = `${v.AUTH_REGISTRY!}/test/kep2535:shared-${run}`;
        const sharedPublic = `${v.REGISTRY!}/test/kep2535-public:shared-${run}`;
        await variant('solo', [ref]);
        await variant('shared', [sharedPrivate, sharedPublic]);
        rmSync(work, { recursive: true, force: true });
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
        /** Our pre-pull: an ImagePullJob with `pullSecrets: [regcred]` on node1 only, waited for in its NodeImage. */
        const prePull = async (job: string, image: string): Promise<void> => {
          const colon = image.lastIndexOf(':');
          const [name, tag] = [image.slice(0, colon), image.slice(colon + 1)];
          const manifest = {
            apiVersion: 'apps.kruise.io/v1beta1',
            kind: 'ImagePullJob',
            metadata: { name: job, namespace: 'default' },
            spec: {
              image,
              pullSecrets: ['regcred'],
              selector: { names: [node1.name] },
              completionPolicy: { type: 'Always' },
            },
          };
          cluster.must(['apply', '-f', '-'], JSON.stringify(manifest));
          await waitForStatus(
            admin,
            node1.name,
            (status) =>
              status.imageStatuses?.[name]?.tags.some((t) => t.tag === tag && t.phase === 'Succeeded') === true,
            { timeoutMs: 120_000, intervalMs: 500, message: `${image} pre-pulled on ${node1.name} with regcred` },
          );
        };
        await prePull('private', ref);

        /** A pod of `ref` on `node` (IfNotPresent), with or without the secret: Running, or kubelet's pull error. */
        const outcome = async (pod: string, node: string, secret: boolean, image = ref): Promise<string> => {
          const manifest = {
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name: pod, namespace: 'default' },
            spec: {
              nodeName: node,
              terminationGracePeriodSeconds: 0,
              ...(secret ? { imagePullSecrets: [{ name: 'regcred' }] } : {}),
              containers: [{ name: 'c', image, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] }],
            },
          };
          cluster.must(['apply', '-f', '-'], JSON.stringify(manifest));
          const result = await waitFor(
            () => {
              const got = JSON.parse(cluster.must(['get', 'pod', pod, '-o', 'json'])) as {
                status: {
                  containerStatuses?: {
                    state: { running?: object; waiting?: { reason?: string; message?: string } };
                  }[];
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

        // the registry's refusal as the runtime words it: containerd 1.6 `401 Unauthorized`, containerd 2.x
        // `authorization failed: no basic auth credentials`, CRI-O 1.36 `reading manifest …: authentication required`
        const unauthorized =
          /^(ErrImagePull|ImagePullBackOff): .*(401 Unauthorized|no basic auth credentials|authentication required)/;
        const present = 'Running (Container image IMAGE already present on machine)';
        const accessible = `${present.slice(0, -1)} and can be accessed by the pod)`;
        /** The node's kubelet configuration as it runs, from /configz. */
        const configz = (node: string): Record<string, unknown> =>
          (
            JSON.parse(cluster.must(['get', '--raw', `/api/v1/nodes/${node}/proxy/configz`])) as {
              kubeletconfig: Record<string, unknown>;
            }
          ).kubeletconfig;
        const kubeletMinor = Number(
          /^v1\.(\d+)\./.exec(
            cluster.must(['get', 'node', node1.name, '-o', 'jsonpath={.status.nodeInfo.kubeletVersion}']),
          )?.[1],
        );
        // KubeletEnsureSecretPulledImages: alpha and off in 1.33 and 1.34, beta and on from 1.35 (kube_features.go); its
        // policy defaults to NeverVerifyPreloadedImages only when the gate is on (v1beta1 defaults.go)
        const gateOnByDefault = kubeletMinor >= 35;
        process.stderr.write(
          `      [kubelet] v1.${kubeletMinor}: KubeletEnsureSecretPulledImages ${gateOnByDefault ? 'on' : 'off'} by default\n`,
        );

        // the image is private: a node without it cannot pull it without the secret
        assert.match(await outcome('private-elsewhere', node2.name, false), unauthorized);
        // kubelet as the cluster runs it (no gate, no policy set)
        assert.equal(
          configz(node1.name).imagePullCredentialsVerificationPolicy,
          gateOnByDefault ? 'NeverVerifyPreloadedImages' : undefined,
        );
        // the pre-pulled image is used by any pod on the node, with or without the secret: with the gate off because
        // kubelet never checks a present image; with it on because an image kubelet has no pull record of (our agent
        // pulled it through the CRI) counts as preloaded, and NeverVerifyPreloadedImages never verifies those
        assert.equal(await outcome('private-default', node1.name, false), gateOnByDefault ? accessible : present);

        // the same image under a public name, pulled by kubelet for a pod first (so kubelet records its ID, open to every
        // pod under that name), then pre-pulled by us under the private name: with the gate on, kubelet now has a record
        // of the ID, so it is not "preloaded", and the record names only the public repository: a pod of the private
        // name without the secret is verified and refused; with the gate off, it runs
        assert.match(
          await outcome('public-by-kubelet', node1.name, false, sharedPublic),
          /^Running \(Successfully pulled/,
        );
        await prePull('private-shared', sharedPrivate);
        const shared = await outcome('private-shared-id', node1.name, false, sharedPrivate);
        if (gateOnByDefault) assert.match(shared, unauthorized);
        else assert.equal(shared, present);

        const dropIn = join(cluster.dir, 'kubelet-config.d');
        mkdirSync(dropIn, { recursive: true });
        try {
          // the gate the other way round from the default (off is still allowed: beta, not locked)
          const flip = await restartKubelet(cluster, node1, [
            `--feature-gates=KubeletEnsureSecretPulledImages=${String(!gateOnByDefault)}`,
          ]);
          assert.equal(
            flip.imagePullCredentialsVerificationPolicy,
            gateOnByDefault ? undefined : 'NeverVerifyPreloadedImages',
          );
          assert.equal(
            await outcome('private-gate-flipped', node1.name, false),
            gateOnByDefault ? present : accessible,
          );

          // AlwaysVerify (a --config-dir drop-in): kubelet checks the pod's own credentials against the registry
          writeFileSync(
            join(dropIn, '50-verify.conf'),
            'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nimagePullCredentialsVerificationPolicy: AlwaysVerify\n',
          );
          const always = await restartKubelet(cluster, node1, [
            ...(gateOnByDefault ? [] : ['--feature-gates=KubeletEnsureSecretPulledImages=true']),
            `--config-dir=${dropIn}`,
          ]);
          assert.equal(always.imagePullCredentialsVerificationPolicy, 'AlwaysVerify');
          assert.match(await outcome('private-always-verify', node1.name, false), unauthorized);
          const withSecret = await outcome('private-always-verify-secret', node1.name, true);
          assert.match(withSecret, /^Running /);
          // kubelet now records that regcred pulled it: a pod without the secret is still refused
          assert.match(await outcome('private-always-verify-again', node1.name, false), unauthorized);

          // back to the default policy: kubelet now has a pull record of the image (the pull above), so it is no longer
          // "preloaded" and NeverVerifyPreloadedImages verifies it too; a pod with the secret still runs
          const back = await restartKubelet(
            cluster,
            node1,
            gateOnByDefault ? [] : ['--feature-gates=KubeletEnsureSecretPulledImages=true'],
          );
          assert.equal(back.imagePullCredentialsVerificationPolicy, 'NeverVerifyPreloadedImages');
          assert.match(await outcome('private-recorded', node1.name, false), unauthorized);
          assert.equal(await outcome('private-recorded-secret', node1.name, true), accessible);
        } finally {
          await restartKubelet(cluster, node1, []);
          rmSync(dropIn, { recursive: true, force: true });
          cluster.kubectl(['delete', 'imagepulljob', 'private', 'private-shared', '--ignore-not-found']);
          cluster.kubectl(['delete', 'secret', 'regcred', '--ignore-not-found']);
          cluster.kubectl(['delete', 'rolebinding', 'kruise-controller-pull-secret-reader', '--ignore-not-found']);
        }
      });
    }

    it(`helm ${major} upgrade --set daemon.log.level=debug rolls the DaemonSet: new pods, new generation observed`, () => {
      const before = JSON.parse(cluster.must(['get', 'ds/kruise-daemon', '-n', NS, '-o', 'json'])) as {
        metadata: { generation: number };
      };
      const oldPods = new Set(pods('app.kubernetes.io/name=kruise-daemon').map((p) => p.metadata.uid));
      const controllerPods = pods('control-plane=controller')
        .map((p) => p.metadata.uid)
        .sort();
      const started = Date.now();
      helmRun(major, ['upgrade', 'kruise-daemon', CHART_DIR, '--reuse-values', '--set', 'daemon.log.level=debug']);
      rollout('ds/kruise-daemon');
      figure(`helm ${major} upgrade to DaemonSet rolled (2 nodes)`, Date.now() - started);
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
      const revisions = helmRun(major, ['history', 'kruise-daemon', '-o', 'json']);
      assert.deepEqual(
        (JSON.parse(revisions) as { revision: number; status: string }[]).map((r) => `${r.revision} ${r.status}`),
        ['1 superseded', '2 deployed'],
      );
    });

    it(`helm ${major} uninstall leaves nothing but the 7 CRDs`, async () => {
      const started = Date.now();
      helmRun(major, ['uninstall', 'kruise-daemon', '--wait', '--timeout', '4m']);
      figure(`helm ${major} uninstall --wait`, Date.now() - started);
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
      figure(`helm ${major} uninstall to namespaces gone`, Date.now() - started);
      assert.deepEqual(
        left,
        CRDS.map((c) => `crd ${c}`),
      );
      // every cluster-scoped object that was not there before the install: the CRDs, their API groups' APIServices and
      // the custom resources the CRDs keep (the NodeImages and NodePodProbes); after the second helm's round, none (the
      // first round left them, and the second install took the CRDs as they were)
      const added = [...clusterScoped()].filter((o) => !beforeInstall.has(o)).sort();
      assert.deepEqual(
        added,
        [
          'apiservice.apiregistration.k8s.io/v1alpha1.apps.kruise.io',
          'apiservice.apiregistration.k8s.io/v1beta1.apps.kruise.io',
          ...CRDS.map((c) => `customresourcedefinition.apiextensions.k8s.io/${c}`),
          ...cluster.layout.nodes.map((n) => `nodeimage.apps.kruise.io/${n.name}`),
          ...cluster.layout.nodes.map((n) => `nodepodprobe.apps.kruise.io/${n.name}`),
        ].filter((o) => !beforeInstall.has(o)),
        'nothing else cluster-scoped is left (no namespace, ClusterRole, binding, webhook configuration or policy)',
      );
      // the custom resources stay with their CRDs
      const nodeImages = cluster.must(['get', 'nodeimages', '-o', 'jsonpath={.items[*].metadata.name}']);
      assert.equal(nodeImages, 'kd-node-1 kd-node-2');
    });
  }

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
    for (const c of ds.spec.template.spec.containers as { image: string; args?: string[] }[]) {
      c.image = cluster.vars.KRUISE_IMAGE!;
      // the test nodes' kubelet thresholds (the last flag wins)
      c.args = [...(c.args ?? []), ...agentImageGcArgs()];
    }
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
