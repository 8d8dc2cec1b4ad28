// Issue 26 hole 3 as a test, on the real cluster: two tenants, each with only namespace rights (a ServiceAccount token
// and a Role on PodProbeMarkers), their pods on one node. Tenant A's oversized marker is refused at admission (the
// CRD schema refuses a 1 MB argument, the webhook an exec command over 2 KiB in all); a marker of ~860 KB that got
// past admission (an admin exempted A's namespace from the webhook for a while, a real way around it) is left out of
// the node's NodePodProbe and told so (the ProbesLeftOut condition and a Warning event A can read), while tenant B's
// marker still reaches the node and B's probe results still reach B's pod. Then the agent's status writes fail (an
// admin's ValidatingAdmissionPolicy refuses them, as any persistent error would): its /readyz and /healthz fail
// naming the cause (/livez does not), the failures metric counts them, the NodePodProbe gets a StatusWriteFailed
// event; once the policy goes, the results flow again and /readyz is 200.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import {
  POD_PROBE_MARKERS,
  PROBES_LEFT_OUT_CONDITION,
  type PodContainerProbe,
  type PodProbeMarker,
} from '../../../src/api/podprobemarker.js';
import { VALIDATING_CONFIGURATION_NAME } from '../../../src/controller/admission/configurations.js';
import { PPM_VALIDATING_WEBHOOK_NAME } from '../../../src/controller/admission/podprobemarker/handler.js';
import { VALIDATING_WEBHOOK_CONFIGURATIONS } from '../../../src/controller/resources.js';
import { EVENT_PROBES_LEFT_OUT } from '../../../src/controller/podprobemarker/controller.js';
import { EVENT_STATUS_WRITE_FAILED } from '../../../src/daemon/podprobe/controller.js';
import { KubeClient } from '../../../src/kube/client.js';
import { loadKubeconfig } from '../../../src/kube/credentials/kubeconfig.js';
import { ApiError } from '../../../src/kube/errors.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { CoreResources, type ResourceType } from '../../../src/kube/resource.js';
import { serviceAccountKubeconfig } from '../../cluster/k8s/system.js';
import { SERVICE_ACCOUNTS } from '../../support/kube-resources.js';
import { createTestNamespace, deleteTestNamespace } from '../../support/test-namespace.js';
import { waitFor } from '../../support/wait.js';
import {
  conditionOf,
  deleteMarkers,
  eventsFor,
  execProbe,
  getNodePodProbe,
  markerManifest,
  podShows,
  runningPods,
  SLEEP_FOREVER,
  startProbeStack,
  type PodObject,
  type ProbeScope,
  type ProbeStack,
} from '../podprobe/stack.js';
import { NODE_POD_PROBES } from '../../../src/api/nodepodprobe.js';

const rbac = (resource: string, kind: string, namespaced = true): ResourceType => ({
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  resource,
  namespaced,
  kind,
});
const ROLES = rbac('roles', 'Role');
const ROLE_BINDINGS = rbac('rolebindings', 'RoleBinding');
const admissionRegistration = (resource: string, kind: string): ResourceType => ({
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  resource,
  namespaced: false,
  kind,
});
const POLICIES = admissionRegistration('validatingadmissionpolicies', 'ValidatingAdmissionPolicy');
const POLICY_BINDINGS = admissionRegistration('validatingadmissionpolicybindings', 'ValidatingAdmissionPolicyBinding');
const REFUSE_POLICY = 'e2e-refuse-nodepodprobe-status';
const REFUSE_MESSAGE = 'e2e: status writes of this NodePodProbe are refused';

const APP = 'tenant';
const OK = 'tenant.e2e/ok';
const WAIT = { timeoutMs: 90_000, intervalMs: 500 };

interface WebhookConfiguration extends KubeObject {
  webhooks?: { name: string; namespaceSelector?: unknown }[];
}

/** A marker over 2 KiB per exec command but within the CRD schema: 9 probes × 48 arguments × 2,000 bytes. */
function heavyProbes(): PodContainerProbe[] {
  return Array.from({ length: 9 }, (_, i) => ({
    name: `heavy-${i}`,
    containerName: 'main',
    probe: { exec: { command: ['true', ...Array.from({ length: 47 }, () => 'x'.repeat(2000))] }, periodSeconds: 30 },
    podConditionType: `tenant-a.e2e/heavy-${i}`,
  }));
}

describe('custom probes e2e: a hostile tenant cannot freeze a node’s probes (issue 26, hole 3)', function () {
  this.timeout(420_000);
  let stack: ProbeStack;
  let nodeName: string;
  const tenants: { a?: ProbeScope; b?: ProbeScope } = {};
  let namespaceB = '';
  let podA: PodObject;
  let podB: PodObject;

  /** A ServiceAccount with a Role on PodProbeMarkers (and reading pods and events) in its namespace: a tenant. */
  async function tenantClient(namespace: string): Promise<KubeClient> {
    const admin = stack.client;
    await admin.create(SERVICE_ACCOUNTS, { metadata: { name: 'tenant', namespace } }, { namespace });
    await admin.create(
      ROLES,
      {
        metadata: { name: 'tenant', namespace },
        rules: [
          { apiGroups: ['apps.kruise.io'], resources: ['podprobemarkers'], verbs: ['*'] },
          { apiGroups: [''], resources: ['pods', 'events'], verbs: ['get', 'list', 'watch'] },
        ],
      } as KubeObject,
      { namespace },
    );
    await admin.create(
      ROLE_BINDINGS,
      {
        metadata: { name: 'tenant', namespace },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'tenant' },
        subjects: [{ kind: 'ServiceAccount', name: 'tenant', namespace }],
      } as KubeObject,
      { namespace },
    );
    const file = join(stack.cluster.layout.dir, 'e2e-tenants', `${namespace}.kubeconfig`);
    serviceAccountKubeconfig(stack.cluster.layout, namespace, 'tenant', file, 1);
    return new KubeClient(await loadKubeconfig(file), { timeoutMs: 30_000 });
  }

  async function sleeper(namespace: string, name: string): Promise<PodObject> {
    await stack.client.create(
      CoreResources.pods,
      {
        metadata: { name, namespace, labels: { app: APP } },
        spec: {
          nodeName,
          terminationGracePeriodSeconds: 1,
          containers: [{ name: 'main', image: stack.cluster.images.busybox1, command: SLEEP_FOREVER }],
        },
      } as KubeObject,
      { namespace },
    );
    const [pod] = await runningPods({ client: stack.client, namespace }, `app=${APP}`, 1);
    return pod!;
  }

  /** The validating webhook of PodProbeMarkers, with `edit` applied (get, change, update). */
  async function editMarkerWebhook(edit: (hook: { namespaceSelector?: unknown }) => void): Promise<void> {
    const config = await stack.client.get<WebhookConfiguration>(
      VALIDATING_WEBHOOK_CONFIGURATIONS,
      VALIDATING_CONFIGURATION_NAME,
    );
    const hook = config.webhooks?.find((h) => h.name === PPM_VALIDATING_WEBHOOK_NAME);
    assert.ok(hook, `${PPM_VALIDATING_WEBHOOK_NAME} is in ${VALIDATING_CONFIGURATION_NAME}`);
    edit(hook);
    await stack.client.update(VALIDATING_WEBHOOK_CONFIGURATIONS, config);
  }

  /** Whether tenant A may create the heavy marker now (a server-side dry run through the whole admission chain). */
  async function heavyAdmitted(): Promise<boolean> {
    const a = tenants.a!;
    try {
      await a.client.create(POD_PROBE_MARKERS, markerManifest(a.namespace, 'dry', { app: APP }, heavyProbes()), {
        namespace: a.namespace,
        dryRun: true,
      });
      return true;
    } catch (err) {
      if (err instanceof ApiError && err.message.includes('2048 bytes')) return false;
      throw err;
    }
  }

  before(async () => {
    stack = await startProbeStack({ namespacePrefix: 'kd-probe-tenant-a' });
    nodeName = stack.nodes[0]!.name;
    namespaceB = await createTestNamespace(stack.client, 'kd-probe-tenant-b', { forPods: true });
    tenants.a = { client: await tenantClient(stack.namespace), namespace: stack.namespace };
    tenants.b = { client: await tenantClient(namespaceB), namespace: namespaceB };
    podA = await sleeper(stack.namespace, 'a-pod');
    podB = await sleeper(namespaceB, 'b-pod');
  });

  after(async () => {
    if (!stack) return;
    await stack.client.delete(POLICY_BINDINGS, REFUSE_POLICY).catch(() => undefined);
    await stack.client.delete(POLICIES, REFUSE_POLICY).catch(() => undefined);
    await editMarkerWebhook((hook) => delete hook.namespaceSelector).catch(() => undefined);
    if (namespaceB) {
      await deleteMarkers({ client: stack.client, namespace: namespaceB });
      await deleteTestNamespace(stack.client, namespaceB, { waitMs: 120_000 });
    }
    await stack.close();
  });

  it('refuses tenant A’s oversized marker at admission: the schema a 1 MB argument, the webhook 3 KB of command', async () => {
    const a = tenants.a!;
    const create = (name: string, command: string[]) =>
      a.client.create(
        POD_PROBE_MARKERS,
        markerManifest(a.namespace, name, { app: APP }, [
          execProbe({ name: 'big', containerName: 'main', command, podConditionType: 'tenant-a.e2e/big' }),
        ]),
        { namespace: a.namespace },
      );
    await assert.rejects(create('megabyte', ['sh', '-c', 'x'.repeat(1_000_000)]), (err: unknown) => {
      assert.ok(err instanceof ApiError && err.code === 422, String(err));
      assert.match(err.message, /spec\.probes\[0\]\.probe\.exec\.command\[2\]: Too long: may not be more than 2048/);
      return true;
    });
    await assert.rejects(create('three-kb', ['sh', '-c', 'x'.repeat(1500), 'y'.repeat(1500)]), (err: unknown) => {
      assert.ok(err instanceof ApiError, String(err));
      assert.match(err.message, /spec\.probes\[0\]\.probe\.exec\.command: must have at most 2048 bytes \(has 3004\)/);
      return true;
    });
  });

  it('a marker that got past admission is left out and told, while tenant B’s marker and results reach B’s pod', async () => {
    const a = tenants.a!;
    const b = tenants.b!;
    // an admin exempts A's namespace from the webhook for a while (the API server sees the change within seconds)
    await editMarkerWebhook((hook) => {
      hook.namespaceSelector = {
        matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: [a.namespace] }],
      };
    });
    await waitFor(heavyAdmitted, { ...WAIT, message: 'the webhook skips tenant A' });
    await a.client.create(POD_PROBE_MARKERS, markerManifest(a.namespace, 'heavy', { app: APP }, heavyProbes()), {
      namespace: a.namespace,
    });
    await editMarkerWebhook((hook) => delete hook.namespaceSelector);
    await waitFor(async () => !(await heavyAdmitted()), { ...WAIT, message: 'the webhook checks tenant A again' });

    // tenant B's marker, created after A's
    await b.client.create(
      POD_PROBE_MARKERS,
      markerManifest(b.namespace, 'light', { app: APP }, [
        execProbe({ name: 'ok', containerName: 'main', command: ['test', '-e', '/tmp/ok'], podConditionType: OK }),
      ]),
      { namespace: b.namespace },
    );

    // A is told, on its marker and in an event it can read with its own rights
    const told = await waitFor(
      async () => {
        const m = await a.client.get<PodProbeMarker>(POD_PROBE_MARKERS, 'heavy', { namespace: a.namespace });
        const c = m.status?.conditions?.find((x) => x.type === PROBES_LEFT_OUT_CONDITION);
        return c?.status === 'True' ? c : undefined;
      },
      { ...WAIT, message: 'ProbesLeftOut True on tenant A’s marker' },
    );
    assert.match(
      told.message ?? '',
      new RegExp(`NodePodProbe of 1 node: ${nodeName} \\(its probes there: 8\\d\\d\\.\\d KiB; 768\\.0 KiB free\\)`),
    );
    const events = await waitFor(async () => {
      const list = await eventsFor(a, 'heavy', [EVENT_PROBES_LEFT_OUT]);
      return list.length > 0 ? list : undefined;
    }, WAIT);
    assert.equal(events[0]?.type, 'Warning');
    assert.match(events[0]?.message ?? '', new RegExp(nodeName));

    // B's probe is on the node and its results reach B's pod: False now, True once the file exists
    await podShows(b, podB.metadata!.name!, `${OK} False`, (p) => conditionOf(p, OK)?.status === 'False', 90_000);
    await stack.kubectl.ok(['exec', '-n', b.namespace, podB.metadata!.name!, '-c', 'main', '--', 'touch', '/tmp/ok']);
    await podShows(b, podB.metadata!.name!, `${OK} True`, (p) => conditionOf(p, OK)?.status === 'True', 90_000);
    const npp = (await getNodePodProbe(stack.client, nodeName))!;
    const size = Buffer.byteLength(JSON.stringify(npp));
    assert.ok(size < 64 * 1024, `the NodePodProbe stays small: ${size} bytes`);
    const namespaces = new Set((npp.spec?.podProbes ?? []).map((e) => e.namespace));
    assert.ok(namespaces.has(b.namespace), 'B’s probes are there');
    assert.ok(!namespaces.has(a.namespace), 'none of A’s');
    const left = await stack.client.get<PodObject>(CoreResources.pods, podA.metadata!.name!, {
      namespace: a.namespace,
    });
    assert.equal(conditionOf(left, 'tenant-a.e2e/heavy-0'), undefined, 'A’s pod got no result: its probes never ran');
  });

  it('status writes that keep failing: /readyz fails with the cause, a metric, an event; then they recover', async () => {
    const b = tenants.b!;
    const agent = stack.system.agents.get(nodeName)!;
    // an admin's policy refuses every status write of this node's NodePodProbe (a 422, as a persistent error)
    await stack.client.create(POLICIES, {
      metadata: { name: REFUSE_POLICY },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [
            {
              apiGroups: ['apps.kruise.io'],
              apiVersions: ['*'],
              operations: ['UPDATE'],
              resources: ['nodepodprobes/status'],
            },
          ],
        },
        validations: [{ expression: `object.metadata.name != '${nodeName}'`, message: REFUSE_MESSAGE }],
      },
    } as KubeObject);
    await stack.client.create(POLICY_BINDINGS, {
      metadata: { name: REFUSE_POLICY },
      spec: { policyName: REFUSE_POLICY, validationActions: ['Deny'] },
    } as KubeObject);
    // the API server enforces a new policy a moment after it is created: wait until it refuses a status write (an
    // admin's dry run), or the agent's write below could still get through and there would be nothing left to fail
    await waitFor(
      () =>
        stack.client.patch(NODE_POD_PROBES, nodeName, {}, { type: 'merge', subresource: 'status', dryRun: true }).then(
          () => undefined,
          (err: unknown) => (String(err).includes(REFUSE_MESSAGE) ? true : undefined),
        ),
      { ...WAIT, message: `the policy refuses status writes of NodePodProbe ${nodeName}` },
    );
    // B's probe turns Failed: the agent has a result to write, and cannot
    await stack.kubectl.ok(['exec', '-n', b.namespace, podB.metadata!.name!, '-c', 'main', '--', 'rm', '/tmp/ok']);
    const body = await waitFor(
      async () => {
        const res = await fetch(`${agent.url}/readyz`);
        return res.status === 500 ? res.text() : undefined;
      },
      { ...WAIT, message: `the agent on ${nodeName}: /readyz fails` },
    );
    assert.match(
      body,
      new RegExp(
        `\\[-\\]nodePodProbeStatusWrites failed: NodePodProbe ${nodeName}: the last \\d+ status writes failed ` +
          `\\(since [^;]+; invalid\\): .*${REFUSE_MESSAGE}`,
      ),
    );
    // /healthz tells the same truth (every check); /livez does not: a restart would not fix a refused write
    const healthz = await fetch(`${agent.url}/healthz`);
    assert.equal(healthz.status, 500);
    assert.match(await healthz.text(), /\[-\]nodePodProbeStatusWrites failed: /);
    assert.equal((await fetch(`${agent.url}/livez`)).status, 200);
    const pod = await stack.client.get<PodObject>(CoreResources.pods, podB.metadata!.name!, { namespace: b.namespace });
    assert.equal(conditionOf(pod, OK)?.status, 'True', 'the Failed result never reached the pod');
    const metrics = await (await fetch(`${agent.url}/metrics`)).text();
    assert.match(metrics, /kruise_daemon_pod_probe_status_write_failures\{kind="invalid"\} [1-9]\d*/);
    const nppEvents = await waitFor(
      async () => {
        const list = await eventsFor({ client: stack.client, namespace: 'default' }, nodeName, [
          EVENT_STATUS_WRITE_FAILED,
        ]);
        return list.length > 0 ? list : undefined;
      },
      { ...WAIT, message: 'a StatusWriteFailed event on the NodePodProbe' },
    );
    assert.equal(nppEvents[0]?.type, 'Warning');
    assert.match(nppEvents[0]?.message ?? '', new RegExp(REFUSE_MESSAGE));

    // the policy goes: the next retry writes, B's pod gets its result, /readyz is 200 again
    await stack.client.delete(POLICY_BINDINGS, REFUSE_POLICY);
    await stack.client.delete(POLICIES, REFUSE_POLICY);
    await podShows(b, podB.metadata!.name!, `${OK} False`, (p) => conditionOf(p, OK)?.status === 'False', 90_000);
    await waitFor(async () => (await fetch(`${agent.url}/readyz`)).status === 200, {
      ...WAIT,
      message: `the agent on ${nodeName}: /readyz 200 again`,
    });
    assert.equal((await fetch(`${agent.url}/healthz`)).status, 200);
  });
});
