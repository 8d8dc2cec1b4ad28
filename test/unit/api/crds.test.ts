// emulator: its structural-schema code (pruning, defaults, validation) run in-process on deploy/crds (a unit test)
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { KRUISE_GROUP } from '../../../src/api/constants.js';
import { CONTAINER_RECREATE_REQUESTS } from '../../../src/api/containerrecreaterequest.js';
import { IMAGE_LIST_PULL_JOBS } from '../../../src/api/imagelistpulljob.js';
import { IMAGE_PULL_JOBS } from '../../../src/api/imagepulljob.js';
import { NODE_IMAGES } from '../../../src/api/nodeimage.js';
import { PERSISTENT_POD_STATES } from '../../../src/api/persistentpodstate.js';
import { POD_PROBE_MARKERS } from '../../../src/api/podprobemarker.js';
import { NODE_POD_PROBES } from '../../../src/api/nodepodprobe.js';
import { apiVersionOf, type ResourceType } from '../../../src/kube/resource.js';
import { validateImageListPullJob } from '../../../src/api/imagelistpulljob-validation.js';
import { validateNodeImage } from '../../../src/api/nodeimage-validation.js';
import { packageRoot } from '../../../src/util/repo-root.js';
import { applyStructuralSchema, checkStructural, type JSONSchemaProps } from '../../cluster/apiserver/schema/index.js';

const CRD_DIR = join(packageRoot(), 'deploy', 'crds');

interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  subresources?: { status?: object };
  additionalPrinterColumns?: { name: string; type: string; jsonPath: string }[];
  schema: { openAPIV3Schema: JSONSchemaProps };
}

interface Crd {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: {
    group: string;
    scope: string;
    names: { kind: string; listKind: string; plural: string; singular: string; shortNames?: string[] };
    versions: CrdVersion[];
  };
}

function loadCrd(file: string): Crd {
  return load(readFileSync(join(CRD_DIR, file), 'utf8')) as Crd;
}

const crdFiles = readdirSync(CRD_DIR).filter((f) => f.startsWith('apps.kruise.io_'));
const crds = new Map(crdFiles.map((f) => [f, loadCrd(f)]));

function crdFor(resource: ResourceType): Crd {
  const crd = crds.get(`apps.kruise.io_${resource.resource}.yaml`);
  assert.ok(crd, `CRD file for ${resource.resource}`);
  return crd;
}

function schemaOf(resource: ResourceType, version: string): JSONSchemaProps {
  const found = crdFor(resource).spec.versions.find((v) => v.name === version);
  assert.ok(found, `${resource.kind} ${version}`);
  return found.schema.openAPIV3Schema;
}

/** Put an object through the schema as kube-apiserver would on create. */
function admit(resource: ResourceType, version: string, obj: unknown) {
  return applyStructuralSchema(schemaOf(resource, version), obj);
}

const expectations: {
  resource: ResourceType;
  versions: [name: string, storage: boolean][];
  columns: string[];
  shortNames?: string[];
}[] = [
  {
    resource: NODE_IMAGES,
    versions: [
      ['v1alpha1', false],
      ['v1beta1', true],
    ],
    columns: ['DESIRED', 'PULLING', 'SUCCEED', 'FAILED', 'AGE'],
  },
  {
    resource: IMAGE_PULL_JOBS,
    versions: [
      ['v1alpha1', false],
      ['v1beta1', true],
    ],
    columns: ['TOTAL', 'ACTIVE', 'SUCCEED', 'FAILED', 'AGE'],
  },
  {
    resource: IMAGE_LIST_PULL_JOBS,
    versions: [
      ['v1alpha1', false],
      ['v1beta1', true],
    ],
    columns: ['TOTAL', 'SUCCEEDED', 'COMPLETED', 'AGE'],
  },
  {
    resource: CONTAINER_RECREATE_REQUESTS,
    versions: [['v1alpha1', true]],
    columns: ['PHASE', 'POD', 'NODE', 'AGE'],
    shortNames: ['crr'],
  },
  { resource: PERSISTENT_POD_STATES, versions: [['v1alpha1', true]], columns: [] },
  { resource: POD_PROBE_MARKERS, versions: [['v1alpha1', true]], columns: ['MATCHED', 'AGE'] },
  { resource: NODE_POD_PROBES, versions: [['v1alpha1', true]], columns: ['AGE'] },
];

describe('CRDs (deploy/crds)', () => {
  it('has one file per kind, all listed in kustomization.yaml', () => {
    assert.equal(crdFiles.length, expectations.length);
    const kustomization = load(readFileSync(join(CRD_DIR, 'kustomization.yaml'), 'utf8')) as { resources: string[] };
    assert.deepEqual([...kustomization.resources].sort(), [...crdFiles].sort());
  });

  for (const { resource, versions, columns, shortNames } of expectations) {
    describe(resource.kind, () => {
      it('names, scope and versions are as OpenKruise serves them', () => {
        const crd = crdFor(resource);
        assert.equal(crd.apiVersion, 'apiextensions.k8s.io/v1');
        assert.equal(crd.kind, 'CustomResourceDefinition');
        assert.equal(crd.metadata.name, `${resource.resource}.${KRUISE_GROUP}`);
        assert.equal(crd.spec.group, KRUISE_GROUP);
        assert.equal(crd.spec.scope, resource.namespaced ? 'Namespaced' : 'Cluster');
        assert.deepEqual(crd.spec.names, {
          kind: resource.kind,
          listKind: `${resource.kind}List`,
          plural: resource.resource,
          singular: resource.kind.toLowerCase(),
          ...(shortNames && { shortNames }),
        });
        assert.deepEqual(
          crd.spec.versions.map((v) => [v.name, v.storage]),
          versions,
        );
        assert.ok(crd.spec.versions.every((v) => v.served));
        const storage = crd.spec.versions.find((v) => v.storage);
        assert.equal(`${crd.spec.group}/${storage?.name}`, apiVersionOf(resource), 'src/api names the storage version');
      });

      it('every version has the status subresource and the printer columns', () => {
        for (const version of crdFor(resource).spec.versions) {
          assert.deepEqual(version.subresources, { status: {} });
          const names = (version.additionalPrinterColumns ?? []).map((c) => c.name);
          const expected =
            resource === IMAGE_PULL_JOBS && version.name === 'v1alpha1' ? [...columns, 'MESSAGE'] : columns;
          assert.deepEqual(names, expected);
        }
      });

      it('every version schema is structural', () => {
        crdFor(resource).spec.versions.forEach((version, i) => {
          assert.deepEqual(
            checkStructural(version.schema.openAPIV3Schema, `spec.versions[${i}].schema.openAPIV3Schema`),
            [],
          );
        });
      });
    });
  }

  describe("accepts OpenKruise's documented examples unchanged (no field pruned, no error)", () => {
    const examples: [ResourceType, string, unknown][] = [
      [
        NODE_IMAGES,
        'v1alpha1',
        {
          apiVersion: 'apps.kruise.io/v1alpha1',
          kind: 'NodeImage',
          metadata: { name: 'node-xxx', labels: { 'beta.kubernetes.io/arch': 'amd64' } },
          spec: {
            images: {
              ubuntu: {
                tags: [
                  {
                    tag: 'latest',
                    pullPolicy: {
                      ttlSecondsAfterFinished: 300,
                      timeoutSeconds: 600,
                      backoffLimit: 3,
                      activeDeadlineSeconds: 1200,
                    },
                  },
                ],
              },
            },
          },
          status: {
            desired: 1,
            failed: 0,
            pulling: 0,
            succeeded: 1,
            imageStatuses: {
              ubuntu: {
                tags: [
                  {
                    tag: 'latest',
                    phase: 'Succeeded',
                    progress: 100,
                    startTime: '2020-12-01T07:21:29Z',
                    completionTime: '2020-12-01T07:21:34Z',
                    imageID: 'ubuntu@sha256:2c1e5b7d1fb8ea3dfa7e8ee1cd5e1e2c0bd4d8fcb5f2a5a4c5a0e1d7d9a7a6b1',
                  },
                ],
              },
            },
          },
        },
      ],
      [
        NODE_IMAGES,
        'v1beta1',
        {
          apiVersion: 'apps.kruise.io/v1beta1',
          kind: 'NodeImage',
          metadata: { name: 'node-1' },
          spec: {
            images: {
              nginx: {
                pullSecrets: [{ namespace: 'kruise-daemon-config', name: 'default-secret-abcde', mode: 'batch' }],
                sandboxConfig: { labels: { io: 'kruise' }, annotations: { a: 'b' } },
                tags: [
                  {
                    tag: '1.25',
                    createdAt: '2024-05-01T10:00:00Z',
                    version: 1,
                    imagePullPolicy: 'Always',
                    pullPolicy: { ttlSecondsAfterFinished: 600, timeoutSeconds: 300, backoffLimit: 1 },
                    ownerReferences: [
                      {
                        apiVersion: 'apps.kruise.io/v1beta1',
                        kind: 'ImagePullJob',
                        name: 'job',
                        namespace: 'default',
                        uid: 'u1',
                      },
                    ],
                  },
                ],
              },
            },
          },
          status: {
            desired: 1,
            waiting: 1,
            imageStatuses: { nginx: { tags: [{ tag: '1.25', phase: 'Waiting', version: 1 }] } },
          },
        },
      ],
      [
        IMAGE_PULL_JOBS,
        'v1alpha1',
        {
          apiVersion: 'apps.kruise.io/v1alpha1',
          kind: 'ImagePullJob',
          metadata: { name: 'job-with-always' },
          spec: {
            image: 'nginx:1.9.1',
            parallelism: 10,
            selector: { names: ['node-1', 'node-2'], matchLabels: { 'node-type': 'xxx' } },
            completionPolicy: { type: 'Always', activeDeadlineSeconds: 1200, ttlSecondsAfterFinished: 300 },
            pullPolicy: { backoffLimit: 3, timeoutSeconds: 300 },
            pullSecrets: ['secret-name1', 'secret-name2'],
            imagePullPolicy: 'IfNotPresent',
          },
        },
      ],
      [
        IMAGE_PULL_JOBS,
        'v1beta1',
        {
          apiVersion: 'apps.kruise.io/v1beta1',
          kind: 'ImagePullJob',
          metadata: { name: 'job-with-never', namespace: 'default' },
          spec: {
            image: 'nginx:1.9.1',
            parallelism: '2',
            podSelector: {
              matchLabels: { 'pod-label': 'xxx' },
              matchExpressions: [{ key: 'a', operator: 'In', values: ['b'] }],
            },
            completionPolicy: { type: 'Never' },
            sandboxConfig: { labels: { io: 'kruise' }, annotations: { a: 'b' } },
            imagePullPolicy: 'Always',
          },
          status: {
            desired: 2,
            active: 0,
            succeeded: 1,
            failed: 1,
            startTime: '2024-05-01T10:00:00Z',
            message: 'job is running, progress 100.0%',
            failedNodes: ['node-2'],
          },
        },
      ],
      [
        IMAGE_LIST_PULL_JOBS,
        'v1alpha1',
        {
          apiVersion: 'apps.kruise.io/v1alpha1',
          kind: 'ImageListPullJob',
          metadata: { name: 'job-with-always' },
          spec: {
            images: ['nginx:1.9.1', 'busybox:1.29.2'],
            parallelism: 10,
            selector: { matchLabels: { 'node-type': 'xxx' } },
            completionPolicy: { type: 'Always', activeDeadlineSeconds: 1200, ttlSecondsAfterFinished: 300 },
            pullPolicy: { backoffLimit: 3, timeoutSeconds: 300 },
            pullSecrets: ['secret-name1', 'secret-name2'],
          },
          status: {
            desired: 2,
            active: 1,
            completed: 1,
            succeeded: 1,
            failedImageStatuses: [
              { imagePullJob: 'job-with-always-x7k2p', name: 'busybox:1.29.2', message: 'Please check' },
            ],
          },
        },
      ],
      [
        CONTAINER_RECREATE_REQUESTS,
        'v1alpha1',
        {
          apiVersion: 'apps.kruise.io/v1alpha1',
          kind: 'ContainerRecreateRequest',
          metadata: {
            namespace: 'pod-namespace',
            name: 'xxx',
            labels: { 'crr.apps.kruise.io/node-name': 'node-1', 'crr.apps.kruise.io/pod-uid': 'uid-1' },
          },
          spec: {
            podName: 'pod-name',
            containers: [
              {
                name: 'app',
                preStop: { httpGet: { path: '/stop', port: 'http', scheme: 'HTTP' } },
                ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
                statusContext: { containerID: 'containerd://abc', restartCount: 0 },
              },
              { name: 'sidecar', preStop: { exec: { command: ['/bin/sh', '-c', 'sleep 1'] } } },
            ],
            strategy: {
              failurePolicy: 'Fail',
              orderedRecreate: false,
              terminationGracePeriodSeconds: 30,
              unreadyGracePeriodSeconds: 3,
              minStartedSeconds: 10,
            },
            activeDeadlineSeconds: 300,
            ttlSecondsAfterFinished: 1800,
          },
          status: {
            phase: 'Recreating',
            containerRecreateStates: [
              { name: 'app', phase: 'Recreating', isKilled: true },
              { name: 'sidecar', phase: 'Pending' },
            ],
          },
        },
      ],
      [
        PERSISTENT_POD_STATES,
        'v1alpha1',
        {
          apiVersion: 'apps.kruise.io/v1alpha1',
          kind: 'PersistentPodState',
          metadata: { name: 'echoserver', namespace: 'echoserver' },
          spec: {
            targetRef: { apiVersion: 'apps.kruise.io/v1beta1', kind: 'StatefulSet', name: 'echoserver' },
            requiredPersistentTopology: { nodeTopologyKeys: ['failure-domain.beta.kubernetes.io/zone'] },
            preferredPersistentTopology: [
              { preference: { nodeTopologyKeys: ['kubernetes.io/hostname'] }, weight: 100 },
            ],
            persistentPodAnnotations: [{ key: 'cni.projectcalico.org/podIP' }],
            persistentPodStateRetentionPolicy: 'WhenDeleted',
          },
          status: {
            observedGeneration: 1,
            podStates: {
              'echoserver-0': {
                nodeName: 'node-1',
                nodeTopologyLabels: { 'kubernetes.io/hostname': 'node-1' },
                annotations: { 'cni.projectcalico.org/podIP': '10.0.0.5' },
              },
            },
          },
        },
      ],
      [
        // OpenKruise's user guide (podprobemarker), game-server example
        POD_PROBE_MARKERS,
        'v1alpha1',
        {
          apiVersion: 'apps.kruise.io/v1alpha1',
          kind: 'PodProbeMarker',
          metadata: { name: 'game-server-probe', namespace: 'ns' },
          spec: {
            selector: { matchLabels: { app: 'game-server' } },
            probes: [
              {
                name: 'Idle',
                containerName: 'game-server',
                probe: {
                  exec: { command: ['/home/game/idle.sh'] },
                  initialDelaySeconds: 10,
                  timeoutSeconds: 3,
                  periodSeconds: 10,
                  successThreshold: 1,
                  failureThreshold: 3,
                },
                markerPolicy: [
                  {
                    state: 'Succeeded',
                    labels: { 'gameserver-idle': 'true' },
                    annotations: { 'controller.kubernetes.io/pod-deletion-cost': '-10' },
                  },
                  {
                    state: 'Failed',
                    labels: { 'gameserver-idle': 'false' },
                    annotations: { 'controller.kubernetes.io/pod-deletion-cost': '10' },
                  },
                ],
                podConditionType: 'game.io/idle',
              },
            ],
          },
          status: { observedGeneration: 1, matchedPods: 2 },
        },
      ],
      [
        NODE_POD_PROBES,
        'v1alpha1',
        {
          apiVersion: 'apps.kruise.io/v1alpha1',
          kind: 'NodePodProbe',
          metadata: { name: 'node-1' },
          spec: {
            podProbes: [
              {
                name: 'game-server-0',
                namespace: 'ns',
                uid: '0f1e2d3c-0000-4000-8000-000000000001',
                IP: '10.0.0.5',
                probes: [
                  {
                    name: 'game-server-probe#Idle',
                    containerName: 'game-server',
                    probe: { tcpSocket: { port: 'http' }, periodSeconds: 5 },
                    podProbeMarkerName: 'game-server-probe',
                  },
                ],
              },
            ],
          },
          status: {
            podProbeStatuses: [
              {
                name: 'game-server-0',
                namespace: 'ns',
                uid: '0f1e2d3c-0000-4000-8000-000000000001',
                probeStates: [
                  {
                    name: 'game-server-probe#Idle',
                    state: 'Succeeded',
                    lastProbeTime: '2022-09-09T07:13:04Z',
                    lastTransitionTime: '2022-09-09T07:13:04Z',
                    message: 'idle',
                  },
                ],
              },
            ],
          },
        },
      ],
    ];
    for (const [resource, version, example] of examples) {
      it(`${resource.kind} ${version}`, () => {
        const result = admit(resource, version, example);
        assert.deepEqual(result.errors, []);
        assert.deepEqual(result.unknownFields, []);
      });
    }

    it('the defaulted NodeImage and ImageListPullJob examples also pass our API validation', () => {
      const ni = admit(NODE_IMAGES, 'v1alpha1', examples[0]![2]);
      const withCreatedAt = structuredClone(ni.object) as {
        spec: { images: { ubuntu: { tags: { createdAt?: string }[] } } };
      };
      withCreatedAt.spec.images.ubuntu.tags[0]!.createdAt = '2020-12-01T07:21:00Z';
      assert.deepEqual(validateNodeImage(withCreatedAt), []);
      assert.deepEqual(validateImageListPullJob(admit(IMAGE_LIST_PULL_JOBS, 'v1alpha1', examples[4]![2]).object), []);
    });
  });

  describe('defaults mirror the mutating webhooks', () => {
    it('ImagePullJob: completionPolicy, pullPolicy and imagePullPolicy', () => {
      const { object, errors } = admit(IMAGE_PULL_JOBS, 'v1beta1', {
        metadata: { name: 'j' },
        spec: { image: 'nginx' },
      });
      assert.deepEqual(errors, []);
      assert.deepEqual((object as { spec: unknown }).spec, {
        image: 'nginx',
        completionPolicy: { type: 'Always' },
        pullPolicy: { timeoutSeconds: 600, backoffLimit: 3 },
        imagePullPolicy: 'IfNotPresent',
      });
    });

    it('ImageListPullJob: no imagePullPolicy default', () => {
      const { object } = admit(IMAGE_LIST_PULL_JOBS, 'v1beta1', {
        metadata: { name: 'l' },
        spec: { images: ['nginx'] },
      });
      assert.deepEqual((object as { spec: unknown }).spec, {
        images: ['nginx'],
        completionPolicy: { type: 'Always' },
        pullPolicy: { timeoutSeconds: 600, backoffLimit: 3 },
      });
    });

    it('NodeImage: tag pull policy timeout and backoff, only where a pullPolicy is given', () => {
      const { object } = admit(NODE_IMAGES, 'v1beta1', {
        metadata: { name: 'n' },
        spec: { images: { nginx: { tags: [{ tag: 'a', pullPolicy: { ttlSecondsAfterFinished: 5 } }, { tag: 'b' }] } } },
      });
      assert.deepEqual((object as { spec: unknown }).spec, {
        images: {
          nginx: {
            tags: [
              { tag: 'a', pullPolicy: { ttlSecondsAfterFinished: 5, timeoutSeconds: 600, backoffLimit: 3 } },
              { tag: 'b' },
            ],
          },
        },
      });
    });

    it('ContainerRecreateRequest: strategy.failurePolicy Fail', () => {
      const { object } = admit(CONTAINER_RECREATE_REQUESTS, 'v1alpha1', {
        metadata: { name: 'c' },
        spec: { podName: 'p', containers: [{ name: 'app' }] },
      });
      assert.deepEqual((object as { spec: { strategy: unknown } }).spec.strategy, { failurePolicy: 'Fail' });
    });
  });

  describe('rejects broken objects with kube-style errors', () => {
    const broken: [ResourceType, string, unknown, [field: string, type: string][]][] = [
      [
        NODE_IMAGES,
        'v1beta1',
        { metadata: { name: 'n' }, spec: { images: { nginx: { tags: [{ version: 'one' }] }, busybox: {} } } },
        [
          ['spec.images[busybox].tags', 'FieldValueRequired'],
          ['spec.images[nginx].tags[0].tag', 'FieldValueRequired'],
          ['spec.images[nginx].tags[0].version', 'FieldValueTypeInvalid'],
        ],
      ],
      [
        NODE_IMAGES,
        'v1beta1',
        { metadata: { name: 'n' }, status: { imageStatuses: { nginx: { tags: [{ tag: 'a', phase: 'Done' }] } } } },
        [
          ['status.desired', 'FieldValueRequired'],
          ['status.imageStatuses[nginx].tags[0].phase', 'FieldValueNotSupported'],
        ],
      ],
      [
        IMAGE_PULL_JOBS,
        'v1beta1',
        {
          metadata: { name: 'j' },
          spec: { parallelism: true, completionPolicy: { type: 'Sometimes' }, pullPolicy: { timeoutSeconds: '60' } },
        },
        [
          ['spec.image', 'FieldValueRequired'],
          ['spec.parallelism', 'FieldValueTypeInvalid'],
          ['spec.completionPolicy.type', 'FieldValueNotSupported'],
          ['spec.pullPolicy.timeoutSeconds', 'FieldValueTypeInvalid'],
        ],
      ],
      [
        IMAGE_LIST_PULL_JOBS,
        'v1alpha1',
        { metadata: { name: 'l' }, spec: { images: 'nginx', selector: { matchExpressions: [{ key: 'a' }] } } },
        [
          ['spec.images', 'FieldValueTypeInvalid'],
          ['spec.selector.matchExpressions[0].operator', 'FieldValueRequired'],
        ],
      ],
      [
        CONTAINER_RECREATE_REQUESTS,
        'v1alpha1',
        {
          metadata: { name: 'c' },
          spec: {
            containers: [{ name: 'app', statusContext: { containerID: 'x' } }],
            strategy: { failurePolicy: 'Retry' },
          },
          status: { phase: 'Done' },
        },
        [
          ['spec.podName', 'FieldValueRequired'],
          ['spec.containers[0].statusContext.restartCount', 'FieldValueRequired'],
          ['spec.strategy.failurePolicy', 'FieldValueNotSupported'],
          ['status.phase', 'FieldValueNotSupported'],
        ],
      ],
      [
        PERSISTENT_POD_STATES,
        'v1alpha1',
        {
          metadata: { name: 'p' },
          spec: {
            targetRef: { apiVersion: 'apps/v1', kind: 'StatefulSet' },
            preferredPersistentTopology: [
              { weight: '100', preference: { nodeTopologyKeys: 'kubernetes.io/hostname' } },
            ],
          },
        },
        [
          ['spec.targetRef.name', 'FieldValueRequired'],
          ['spec.preferredPersistentTopology[0].weight', 'FieldValueTypeInvalid'],
          ['spec.preferredPersistentTopology[0].preference.nodeTopologyKeys', 'FieldValueTypeInvalid'],
        ],
      ],
    ];
    for (const [resource, version, obj, expected] of broken) {
      it(`${resource.kind} ${version}: ${expected.map(([f]) => f).join(', ')}`, () => {
        const { errors } = admit(resource, version, obj);
        assert.deepEqual(errors.map((e) => [e.field, e.type]).sort(), [...expected].sort());
      });
    }

    it('prunes fields OpenKruise does not define (v1alpha1 has no pullSecrets[].mode)', () => {
      const { object, unknownFields } = admit(NODE_IMAGES, 'v1alpha1', {
        metadata: { name: 'n' },
        spec: { images: { nginx: { pullSecrets: [{ name: 's', mode: 'batch' }], tags: [{ tag: '1' }] } }, extra: true },
      });
      assert.deepEqual(unknownFields.sort(), ['spec.extra', 'spec.images[nginx].pullSecrets[0].mode']);
      assert.deepEqual((object as { spec: unknown }).spec, {
        images: { nginx: { pullSecrets: [{ name: 's' }], tags: [{ tag: '1' }] } },
      });
    });
  });
});
