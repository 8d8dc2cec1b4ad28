// What a user sees when kubectl apply sends a bad ContainerRecreateRequest, NodeImage, ImagePullJob or
// ImageListPullJob: the real kubectl against the real kube-apiserver (mutating webhooks, then the CRD schema, then
// validating webhooks) and the controller as a real process (its ServiceAccount's token) serving the webhooks.
// Each denial names the field, what was given and what is allowed, and only the rules that failed.
import assert from 'node:assert/strict';
import { CONTAINER_RECREATE_REQUESTS } from '../../../src/api/containerrecreaterequest.js';
import { IMAGE_PULL_JOBS } from '../../../src/api/imagepulljob.js';
import { NODE_IMAGES } from '../../../src/api/nodeimage.js';
import { ApiError } from '../../../src/kube/errors.js';
import { Kubectl } from '../../component/apiserver/kubectl.js';
import { startSystem, useRealCluster, type RealCluster, type RealSystem } from '../../support/real-cluster.js';
import { freshNamespace, removeNamespace } from '../../support/real-images.js';
import { waitFor } from '../../support/wait.js';

const NS = 'e2e-admission';

const CRR_WEBHOOK = 'admission webhook "mcontainerrecreaterequest.kb.io" denied the request: ';
const NODE_IMAGE_WEBHOOK = 'admission webhook "vnodeimage.kb.io" denied the request: ';
const JOB_WEBHOOK = 'admission webhook "vimagepulljob.kb.io" denied the request: ';
const LIST_JOB_WEBHOOK = 'admission webhook "vimagelistpulljob.kb.io" denied the request: ';

function crr(name: string, spec: string): string {
  return `apiVersion: apps.kruise.io/v1alpha1
kind: ContainerRecreateRequest
metadata: {name: ${name}, namespace: ${NS}}
spec: ${spec}
`;
}

function nodeImage(name: string, tags: string): string {
  return `apiVersion: apps.kruise.io/v1alpha1
kind: NodeImage
metadata: {name: ${name}}
spec: {images: {busybox: {tags: ${tags}}}}
`;
}

function job(kind: 'ImagePullJob' | 'ImageListPullJob', name: string, spec: string): string {
  const image = kind === 'ImagePullJob' ? 'image: "busybox:1.0"' : 'images: ["busybox:1.0"]';
  return `apiVersion: apps.kruise.io/v1alpha1
kind: ${kind}
metadata: {name: ${name}, namespace: ${NS}}
spec: {${image}, ${spec}}
`;
}

describe('kruise-controller e2e: admission messages through kubectl apply', function () {
  this.timeout(120_000);
  let cluster: RealCluster;
  let system: RealSystem;
  let kubectl: Kubectl;

  before(async () => {
    cluster = await useRealCluster();
    await freshNamespace(cluster.admin, NS);
    system = await startSystem(cluster, { nodes: [] });
    kubectl = await Kubectl.forKubeconfig(cluster.adminKubeconfig);
    // /readyz says the configurations are written; wait until kube-apiserver calls both kinds of webhook.
    await waitFor(
      async () => {
        const denied = async (create: Promise<unknown>): Promise<boolean> =>
          await create.then(
            () => false,
            (err: unknown) => err instanceof ApiError && /admission webhook/.test(err.message),
          );
        const crrDenied = await denied(
          cluster.admin.create(CONTAINER_RECREATE_REQUESTS, {
            metadata: { name: 'probe', namespace: NS },
            spec: { podName: '', containers: [] },
          }),
        );
        const jobDenied = await denied(
          cluster.admin.create(IMAGE_PULL_JOBS, {
            metadata: { name: 'probe', namespace: NS },
            spec: { image: '', completionPolicy: {} },
          }),
        );
        return crrDenied && jobDenied;
      },
      { timeoutMs: 30_000, message: 'kube-apiserver to call the controller webhooks' },
    );
  });

  after(async () => {
    await kubectl?.cleanup();
    if (cluster) await removeNamespace(cluster.admin, NS);
    await system?.stop();
    await cluster?.admin.delete(NODE_IMAGES, 'no-ttl').catch(() => undefined);
  });

  /** kubectl apply of a manifest that must be denied: its one-line error, after kubectl's own prefix. */
  async function denial(manifest: string): Promise<string> {
    const result = await kubectl.run(['apply', '-f', '-'], manifest);
    assert.notEqual(result.code, 0, `admitted:\n${manifest}${result.stdout}`);
    const line = result.stderr.trim();
    const at = line.indexOf('admission webhook');
    return at >= 0 ? line.slice(at) : line;
  }

  it('ContainerRecreateRequest: a containers field that is not a list says what was given and what is allowed', async () => {
    const expected = (given: string): string =>
      `${CRR_WEBHOOK}spec.containers: Invalid value: ${given}: must be a list of the containers to recreate, e.g. [{name: app}]`;
    assert.equal(await denial(crr('as-string', '{podName: web, containers: app}')), expected('"app"'));
    assert.equal(await denial(crr('as-number', '{podName: web, containers: 5}')), expected('5'));
    assert.equal(
      await denial(crr('as-names', '{podName: web, containers: [app]}')),
      `${CRR_WEBHOOK}spec.containers[0]: Invalid value: "app": must be an object naming the container, e.g. {name: app}`,
    );
    assert.equal(
      await denial(crr('empty', '{podName: web, containers: []}')),
      `${CRR_WEBHOOK}spec.containers: containers list can not be empty: name at least one container, e.g. [{name: app}]`,
    );
  });

  it('ContainerRecreateRequest: numbers and enums show the value given beside the rule', async () => {
    assert.equal(
      await denial(
        crr(
          'fields',
          '{podName: web, containers: [{name: app}], activeDeadlineSeconds: 1, strategy: {failurePolicy: Retry}}',
        ),
      ),
      `${CRR_WEBHOOK}[spec.activeDeadlineSeconds: Invalid value: 1: activeDeadlineSeconds can not be less than 3s, ` +
        'spec.strategy.failurePolicy: Unsupported value: "Retry": supported values: "Fail", "Ignore"]',
    );
    assert.equal(
      await denial(crr('shapes', '{podName: 5, containers: [{name: app}], strategy: fast}')),
      `${CRR_WEBHOOK}[spec.podName: Invalid value: 5: must be of type string, got integer, ` +
        'spec.strategy: Invalid value: "fast": must be of type object, got string]',
    );
  });

  it('NodeImage: a denial carries only the rule that failed; a tag without a TTL is admitted', async () => {
    assert.equal(
      await denial(nodeImage('bad-version', '[{tag: "1.0", version: -1}]')),
      `${NODE_IMAGE_WEBHOOK}spec.images[busybox].tags[0].version: Invalid value: -1: version for busybox/1.0 can not be less than 0`,
    );
    const created = await kubectl.run(['apply', '-f', '-'], nodeImage('no-ttl', '[{tag: "1.0"}]'));
    assert.equal(created.code, 0, created.stderr);
  });

  it('ImagePullJob and ImageListPullJob: negative timeoutSeconds, backoffLimit, ttlSecondsAfterFinished are denied', async () => {
    const negatives =
      'pullPolicy: {timeoutSeconds: -5, backoffLimit: -1}, completionPolicy: {ttlSecondsAfterFinished: -1}';
    const expected =
      '[spec.pullPolicy.timeoutSeconds: Invalid value: -5: must be greater than 0, ' +
      'spec.pullPolicy.backoffLimit: Invalid value: -1: must be greater than or equal to 0, ' +
      'spec.completionPolicy.ttlSecondsAfterFinished: Invalid value: -1: must be greater than or equal to 0]';
    assert.equal(await denial(job('ImagePullJob', 'negatives', negatives)), `${JOB_WEBHOOK}${expected}`);
    assert.equal(await denial(job('ImageListPullJob', 'negatives', negatives)), `${LIST_JOB_WEBHOOK}${expected}`);
    assert.equal(
      await denial(job('ImagePullJob', 'negative-deadline', 'completionPolicy: {activeDeadlineSeconds: -1}')),
      `${JOB_WEBHOOK}spec.completionPolicy.activeDeadlineSeconds: Invalid value: -1: must be greater than 0`,
    );
    const zero = await kubectl.run(
      ['apply', '-f', '-'],
      job('ImagePullJob', 'zero', 'pullPolicy: {backoffLimit: 0}, completionPolicy: {ttlSecondsAfterFinished: 0}'),
    );
    assert.equal(zero.code, 0, zero.stderr);
  });

  it('ImagePullJob: a pullPolicy that is not an object gets the schema message, not a defaulted mangle', async () => {
    const line = await denial(job('ImagePullJob', 'string-policy', 'completionPolicy: {}, pullPolicy: fast'));
    assert.match(line, /spec\.pullPolicy: Invalid value: "string": spec\.pullPolicy in body must be of type object/);
    assert.doesNotMatch(line, /unknown field/);
  });
});
