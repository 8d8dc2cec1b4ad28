// Issue 26, hole 6: the controller's admission webhook port answered a forged ContainerRecreateRequest
// AdmissionReview from anyone who reached it (its answer carries the pod's uid, node and container IDs, and the
// attacker chooses what the webhook is told). Now the controller (as deployed on the real cluster: --webhook-client-ca,
// the CA of the client certificate kube-apiserver presents to webhooks) refuses a caller without that certificate
// before reading its body: from the host and from inside a node's network namespace (where an agent, a hostNetwork
// pod or a stolen agent token's holder sits), and with a certificate the cluster CA signed (a node's kubelet client
// certificate). The API server itself still gets the real admission: a CRR created through it is mutated.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { CRR_NODE_NAME_LABEL } from '../../../src/api/constants.js';
import { CONTAINER_RECREATE_REQUESTS } from '../../../src/api/containerrecreaterequest.js';
import { CRR_WEBHOOK_PATH } from '../../../src/controller/admission/crr/handler.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { CoreResources } from '../../../src/kube/resource.js';
import type { NodeLayout } from '../../cluster/k8s/layout.js';
import {
  nodeLauncher,
  startSystem,
  useRealCluster,
  type RealCluster,
  type RealSystem,
} from '../../support/real-cluster.js';
import { freshNamespace, removeNamespace } from '../../support/real-images.js';
import { waitFor } from '../../support/wait.js';

const NS = 'e2e-webhook-client-auth';
const POD = 'victim';

interface WirePodStatus {
  status?: { containerStatuses?: { name: string; containerID?: string; ready?: boolean }[] };
  spec?: { nodeName?: string };
  metadata: { uid?: string };
}

describe('the controller webhook answers only the API server (issue 26, hole 6)', function () {
  this.timeout(240_000);
  let cluster: RealCluster;
  let system: RealSystem;
  let node: NodeLayout;
  let webhookUrl: string;
  let forged: string;

  before(async () => {
    cluster = await useRealCluster();
    node = cluster.nodes[0]!;
    await freshNamespace(cluster.admin, NS);
    system = await startSystem(cluster, { nodes: [] });
    webhookUrl = `https://${cluster.layout.hostIp}:${system.controller!.options.webhookPort}${CRR_WEBHOOK_PATH}`;
    await cluster.admin.create(CoreResources.pods, {
      metadata: { name: POD, namespace: NS },
      spec: {
        nodeName: node.name,
        terminationGracePeriodSeconds: 1,
        automountServiceAccountToken: false,
        containers: [{ name: 'c', image: cluster.vars.SANDBOX_IMAGE!, imagePullPolicy: 'IfNotPresent' }],
      },
    } as KubeObject);
    const pod = await waitFor(
      async () => {
        const p = await cluster.admin.get<WirePodStatus & KubeObject>(CoreResources.pods, POD, { namespace: NS });
        return p.status?.containerStatuses?.[0]?.containerID ? p : undefined;
      },
      { timeoutMs: 90_000, message: `pod ${POD} running` },
    );
    // what the attacker sends: a CREATE of a CRR for another tenant's pod, as the API server would send it
    forged = JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: 'forged-review',
        kind: { group: 'apps.kruise.io', version: 'v1alpha1', kind: 'ContainerRecreateRequest' },
        resource: { group: 'apps.kruise.io', version: 'v1alpha1', resource: 'containerrecreaterequests' },
        namespace: NS,
        operation: 'CREATE',
        userInfo: { username: 'system:serviceaccount:kruise-system:kruise-daemon' },
        object: {
          apiVersion: 'apps.kruise.io/v1alpha1',
          kind: 'ContainerRecreateRequest',
          metadata: { name: 'forged', namespace: NS },
          spec: { podName: POD, containers: [{ name: 'c' }] },
        },
      },
    });
    assert.ok(pod.metadata.uid);
  });

  after(async () => {
    await system?.stop();
    if (cluster) await removeNamespace(cluster.admin, NS);
  });

  /** POST the forged review from the host, with an optional client certificate (PEM files). */
  function postFromHost(client?: { cert: string; key: string }): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        webhookUrl,
        {
          method: 'POST',
          rejectUnauthorized: false,
          agent: false,
          headers: { 'content-type': 'application/json' },
          ...(client ? { cert: readFileSync(client.cert), key: readFileSync(client.key) } : {}),
        },
        (res) => {
          let body = '';
          res.setEncoding('utf8').on('data', (c: string) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.end(forged);
    });
  }

  const pki = (file: string): string => join(cluster.layout.pkiDir, file);

  it('refuses a forged AdmissionReview without a client certificate from the host: 401, no answer about the pod', async () => {
    const answer = await postFromHost();
    assert.equal(answer.status, 401, answer.body);
    assert.match(answer.body, /client certificate is required/);
    assert.doesNotMatch(answer.body, /forged-review|patch/);
  });

  it("refuses it from inside a node's network namespace (where an agent or a hostNetwork pod sits): 401", async () => {
    const [launcher, ...launcherArgs] = await nodeLauncher(node);
    const result = spawnSync(
      launcher!,
      [
        ...launcherArgs,
        'curl',
        '-sk',
        '-m',
        '10',
        '-w',
        '\n%{http_code}',
        '-H',
        'content-type: application/json',
        '--data-binary',
        forged,
        webhookUrl,
      ],
      { encoding: 'utf8' },
    );
    const [body, code] = result.stdout.split('\n');
    assert.equal(code, '401', `curl from ${node.name}: ${result.stdout} ${result.stderr}`);
    assert.match(body ?? '', /client certificate is required/);
  });

  it("refuses a certificate the cluster CA signed that is not the API server's webhook client (a kubelet's): 403", async () => {
    const answer = await postFromHost({ cert: pki(`${node.name}.crt`), key: pki(`${node.name}.key`) });
    assert.equal(answer.status, 403, answer.body);
    assert.match(answer.body, /not signed by the webhook client CA/);
  });

  it("answers the API server's webhook client certificate (the review itself is then judged as usual)", async () => {
    const answer = await postFromHost({
      cert: pki('apiserver-webhook-client.crt'),
      key: pki('apiserver-webhook-client.key'),
    });
    assert.equal(answer.status, 200, answer.body);
    assert.equal((JSON.parse(answer.body) as { response: { uid: string } }).response.uid, 'forged-review');
  });

  it('the real admission through the API server still works: a CRR gets its node-name label from the webhook', async () => {
    const created = await cluster.admin.create<KubeObject>(CONTAINER_RECREATE_REQUESTS, {
      metadata: { name: 'real', namespace: NS },
      spec: { podName: POD, containers: [{ name: 'c' }], strategy: { failurePolicy: 'Ignore' } },
    } as KubeObject);
    assert.equal(created.metadata?.labels?.[CRR_NODE_NAME_LABEL], node.name);
  });

  it('says so in its metrics: client authentication on, the refusals counted', async () => {
    const text = await (await fetch(`${system.controller!.statusUrl}/metrics`)).text();
    assert.match(text, /^kruise_controller_webhook_client_auth 1$/m);
    assert.match(text, /^kruise_controller_webhook_refused_clients_total\{code="401"\} [1-9]/m);
    assert.match(text, /^kruise_controller_webhook_refused_clients_total\{code="403"\} [1-9]/m);
  });
});
