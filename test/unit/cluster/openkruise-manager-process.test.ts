// OpenKruise's kruise-manager on the host of the real cluster: which of its rendered objects it needs, the feature
// gates of its own Deployment, and its command line and environment.
import assert from 'node:assert/strict';
import {
  deploymentFeatureGates,
  managerApiObjects,
  managerArgs,
  managerEnv,
  OPENKRUISE_CRD_COUNT,
} from '../../cluster/openkruise/manager-process.js';
import type { Manifest } from '../../cluster/openkruise/openkruise.js';

function crd(index: number): Manifest {
  return { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `k${index}` } };
}

const deployment: Manifest = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'kruise-controller-manager', namespace: 'kruise-system' },
  spec: {
    template: {
      spec: {
        containers: [
          {
            name: 'manager',
            args: ['--enable-leader-election', '--feature-gates=AllAlpha=true,AllBeta=true,EnableExternalCerts=false'],
          },
        ],
      },
    },
  },
};

const rendered: Manifest[] = [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kruise-system' } },
  ...Array.from({ length: OPENKRUISE_CRD_COUNT }, (_, i) => crd(i)),
  { kind: 'MutatingWebhookConfiguration', metadata: { name: 'kruise-mutating-webhook-configuration' } },
  { kind: 'ValidatingWebhookConfiguration', metadata: { name: 'kruise-validating-webhook-configuration' } },
  { kind: 'DaemonSet', metadata: { name: 'kruise-daemon', namespace: 'kruise-system' } },
  deployment,
];

describe("OpenKruise's kruise-manager as a host process", () => {
  it('takes the 18 CRDs and the two webhook configurations of its install, nothing else', () => {
    const objects = managerApiObjects(rendered);
    assert.equal(objects.crds.length, OPENKRUISE_CRD_COUNT);
    assert.deepEqual(
      objects.webhookConfigurations.map((m) => m.kind),
      ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'],
    );
  });

  it('refuses an install with another number of CRDs or without its webhook configurations', () => {
    assert.throws(() => managerApiObjects(rendered.slice(2)), /renders 17 CRDs, not 18/);
    assert.throws(
      () => managerApiObjects(rendered.filter((m) => m.kind !== 'ValidatingWebhookConfiguration')),
      /1 webhook configurations/,
    );
  });

  it("runs with its Deployment's feature gates", () => {
    assert.equal(deploymentFeatureGates(rendered), 'AllAlpha=true,AllBeta=true,EnableExternalCerts=false');
    assert.throws(() => deploymentFeatureGates(rendered.filter((m) => m.kind !== 'Deployment')), /no --feature-gates/);
  });

  it('binds metrics, health and pprof to loopback ports, without leader election, extra flags last', () => {
    const args = managerArgs({
      ports: { metrics: 41001, health: 41002, pprof: 41003, webhook: 41004 },
      featureGates: 'AllAlpha=true',
      protectionLogPath: '/c/k8s/openkruise-manager/protection-log',
      extraArgs: ['--nodeimage-creation-delay=1s'],
    });
    assert.deepEqual(args, [
      '--metrics-addr=127.0.0.1:41001',
      '--health-probe-addr=127.0.0.1:41002',
      '--pprof-addr=127.0.0.1:41003',
      '--enable-leader-election=false',
      '--feature-gates=AllAlpha=true',
      '--protection-log-path=/c/k8s/openkruise-manager/protection-log',
      '--nodeimage-creation-delay=1s',
    ]);
  });

  it('registers its webhooks by URL on the host (WEBHOOK_HOST, WEBHOOK_PORT) with its certificates in a directory', () => {
    const env = managerEnv({
      kubeconfig: '/c/admin.kubeconfig',
      webhookHost: '10.1.255.1',
      webhookPort: 41004,
      certDir: '/c/certs',
    });
    assert.equal(env.KUBECONFIG, '/c/admin.kubeconfig');
    assert.equal(env.WEBHOOK_HOST, '10.1.255.1');
    assert.equal(env.WEBHOOK_PORT, '41004');
    assert.equal(env.WEBHOOK_CERT_DIR, '/c/certs');
    assert.equal(env.POD_NAMESPACE, 'kruise-system');
  });
});
