// emulator: the subject under test (unit tests of the emulator's PATCH semantics, test/cluster/apiserver/patch)
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  PatchError,
  jsonMergePatch,
  strategicMergePatch,
  supportsStrategicMerge,
  type JsonObject,
} from '../../cluster/apiserver/patch/index.js';
import { deepFreeze, objectArb } from './support.js';

const POD = { group: '', version: 'v1', kind: 'Pod' };
const NODE = { group: '', version: 'v1', kind: 'Node' };
const CONFIGMAP = { group: '', version: 'v1', kind: 'ConfigMap' };
const SERVICE = { group: '', version: 'v1', kind: 'Service' };
const DEPLOYMENT = { group: 'apps', version: 'v1', kind: 'Deployment' };
const STATEFULSET = { group: 'apps', version: 'v1', kind: 'StatefulSet' };
const NODEIMAGE = { group: 'apps.kruise.io', version: 'v1beta1', kind: 'NodeImage' };

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

function smp(original: object, patch: object, gvk = POD): JsonObject {
  return strategicMergePatch(deepFreeze(original) as JsonObject, deepFreeze(patch) as JsonObject, gvk);
}

function rejects(fn: () => unknown, code: number, message: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof PatchError, `expected a PatchError, got ${String(err)}`);
    assert.equal(err.code, code);
    assert.match(err.message, message);
    return true;
  });
}

const names = (list: unknown): string[] => (list as { name: string }[]).map((item) => item.name);

function pod(containers: object[], extra: object = {}): JsonObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'default', uid: 'u1', resourceVersion: '3' },
    spec: { containers, ...extra },
  } as JsonObject;
}

describe('strategicMergePatch', () => {
  describe('the bodies kubectl 1.32 sends (client-side apply)', () => {
    const cm = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'cm1',
        namespace: 'default',
        resourceVersion: '5',
        labels: { app: 'demo' },
        annotations: { [LAST_APPLIED]: '{"old":true}\n' },
      },
      data: { key1: 'value1' },
    };

    it('changed ConfigMap: data and labels merged, annotation replaced', () => {
      const body = {
        data: { key1: 'value2' },
        metadata: { annotations: { [LAST_APPLIED]: '{"new":true}\n' }, labels: { app: 'demo2' } },
      };
      assert.deepEqual(smp(cm, body, CONFIGMAP), {
        ...cm,
        metadata: { ...cm.metadata, labels: { app: 'demo2' }, annotations: { [LAST_APPLIED]: '{"new":true}\n' } },
        data: { key1: 'value2' },
      });
    });

    it('removed fields are sent as null and deleted', () => {
      const body = {
        data: { key1: null, key2: 'v' },
        metadata: { annotations: { [LAST_APPLIED]: '{"new":true}\n' }, labels: null },
      };
      const result = smp(cm, body, CONFIGMAP);
      assert.deepEqual(result.data, { key2: 'v' });
      assert.equal('labels' in (result.metadata as object), false);
    });

    it('Pod: $setElementOrder with a changed container and a $patch: delete', () => {
      const live = pod([
        { name: 'a', image: 'nginx:1', ports: [{ containerPort: 80 }] },
        { name: 'b', image: 'busybox' },
      ]);
      const body = {
        spec: {
          '$setElementOrder/containers': [{ name: 'a' }],
          containers: [
            { image: 'nginx:2', name: 'a' },
            { $patch: 'delete', name: 'b' },
          ],
        },
      };
      const result = smp(live, body);
      assert.deepEqual((result.spec as JsonObject).containers, [
        { name: 'a', image: 'nginx:2', ports: [{ containerPort: 80 }] },
      ]);
      assert.deepEqual(result.metadata, live.metadata);
    });

    it('Deployment: template containers, env and volumeMounts merged by key, tolerations replaced', () => {
      const live = {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'd' },
        spec: {
          replicas: 1,
          template: {
            metadata: { labels: { app: 'd' }, finalizers: ['x'] },
            spec: {
              containers: [
                {
                  name: 'app',
                  image: 'app:1',
                  env: [
                    { name: 'A', value: '1' },
                    { name: 'B', value: '2' },
                  ],
                  volumeMounts: [{ name: 'data', mountPath: '/data' }],
                },
                { name: 'sidecar', image: 'side:1' },
              ],
              tolerations: [{ key: 'k1', operator: 'Exists' }],
            },
          },
        },
        status: {
          conditions: [
            { type: 'Available', status: 'True' },
            { type: 'Progressing', status: 'True' },
          ],
        },
      };
      const body = {
        spec: {
          template: {
            metadata: { finalizers: ['y'] },
            spec: {
              '$setElementOrder/containers': [{ name: 'app' }, { name: 'sidecar' }],
              containers: [
                {
                  name: 'app',
                  '$setElementOrder/env': [{ name: 'A' }, { name: 'C' }],
                  env: [
                    { name: 'A', value: '10' },
                    { name: 'B', $patch: 'delete' },
                    { name: 'C', value: '3' },
                  ],
                  volumeMounts: [{ name: 'cache', mountPath: '/cache' }],
                },
              ],
              tolerations: [{ key: 'k2', operator: 'Exists' }],
            },
          },
        },
        status: { conditions: [{ type: 'Available', status: 'False' }] },
      };
      const result = smp(live, body, DEPLOYMENT) as any;
      const spec = result.spec.template.spec;
      assert.deepEqual(names(spec.containers), ['app', 'sidecar']);
      assert.deepEqual(spec.containers[0].env, [
        { name: 'A', value: '10' },
        { name: 'C', value: '3' },
      ]);
      assert.deepEqual(spec.containers[0].volumeMounts, [
        { name: 'cache', mountPath: '/cache' },
        { name: 'data', mountPath: '/data' },
      ]);
      assert.deepEqual(spec.tolerations, [{ key: 'k2', operator: 'Exists' }]);
      assert.deepEqual(result.spec.template.metadata.finalizers, ['y', 'x']);
      assert.deepEqual(result.status.conditions, [
        { type: 'Available', status: 'False' },
        { type: 'Progressing', status: 'True' },
      ]);
    });
  });

  describe('merge keys from the Kubernetes API types', () => {
    it('Pod spec lists: containers by name, ports by containerPort, volumes by name, imagePullSecrets by name', () => {
      const live = pod([{ name: 'a', image: 'x', ports: [{ containerPort: 80, name: 'http' }] }], {
        volumes: [{ name: 'v1', emptyDir: {} }],
        imagePullSecrets: [{ name: 's1' }],
        initContainers: [{ name: 'init', image: 'i:1' }],
        hostAliases: [{ ip: '10.0.0.1', hostnames: ['a'] }],
        readinessGates: [{ conditionType: 'g1' }],
      });
      const body = {
        spec: {
          containers: [{ name: 'a', ports: [{ containerPort: 80, protocol: 'TCP' }, { containerPort: 443 }] }],
          volumes: [{ name: 'v2', configMap: { name: 'cm' } }],
          imagePullSecrets: [{ name: 's2' }],
          initContainers: [{ name: 'init', image: 'i:2' }],
          hostAliases: [{ ip: '10.0.0.1', hostnames: ['b'] }],
          readinessGates: [{ conditionType: 'g2' }],
        },
      };
      const spec = smp(live, body).spec as any;
      assert.deepEqual(spec.containers, [
        {
          name: 'a',
          image: 'x',
          ports: [{ containerPort: 80, name: 'http', protocol: 'TCP' }, { containerPort: 443 }],
        },
      ]);
      assert.deepEqual(names(spec.volumes), ['v2', 'v1']);
      assert.deepEqual(names(spec.imagePullSecrets), ['s2', 's1']);
      assert.deepEqual(spec.initContainers, [{ name: 'init', image: 'i:2' }]);
      assert.deepEqual(spec.hostAliases, [{ ip: '10.0.0.1', hostnames: ['b'] }]); // hostnames has no strategy
      assert.deepEqual(spec.readinessGates, [{ conditionType: 'g2' }]); // no strategy: replaced
    });

    it('Pod status: conditions by type, podIPs by ip, containerStatuses replaced', () => {
      const live = {
        ...pod([{ name: 'a' }]),
        status: {
          phase: 'Pending',
          conditions: [
            { type: 'PodScheduled', status: 'True' },
            { type: 'Ready', status: 'False' },
          ],
          podIPs: [{ ip: '10.1.0.5' }],
          containerStatuses: [
            { name: 'a', ready: false },
            { name: 'b', ready: false },
          ],
        },
      };
      const body = {
        status: {
          phase: 'Running',
          conditions: [{ type: 'Ready', status: 'True' }],
          podIPs: [{ ip: 'fd00::5' }],
          containerStatuses: [{ name: 'a', ready: true }],
        },
      };
      const status = smp(live, body).status as any;
      assert.equal(status.phase, 'Running');
      assert.deepEqual(status.conditions, [
        { type: 'PodScheduled', status: 'True' },
        { type: 'Ready', status: 'True' },
      ]);
      assert.deepEqual(status.podIPs, [{ ip: 'fd00::5' }, { ip: '10.1.0.5' }]);
      assert.deepEqual(status.containerStatuses, [{ name: 'a', ready: true }]);
    });

    it('Node status: conditions and addresses by type, images replaced', () => {
      const live = {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: 'n1' },
        status: {
          conditions: [
            { type: 'Ready', status: 'False' },
            { type: 'DiskPressure', status: 'False' },
          ],
          addresses: [
            { type: 'InternalIP', address: '10.0.0.1' },
            { type: 'Hostname', address: 'n1' },
          ],
          images: [{ names: ['a'] }],
        },
      };
      const body = {
        status: {
          conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }],
          addresses: [{ type: 'InternalIP', address: '10.0.0.2' }],
          images: [{ names: ['b'] }],
        },
      };
      const status = smp(live, body, NODE).status as any;
      assert.deepEqual(status.conditions, [
        { type: 'Ready', status: 'True', reason: 'KubeletReady' },
        { type: 'DiskPressure', status: 'False' },
      ]);
      assert.deepEqual(status.addresses, [
        { type: 'InternalIP', address: '10.0.0.2' },
        { type: 'Hostname', address: 'n1' },
      ]);
      assert.deepEqual(status.images, [{ names: ['b'] }]);
    });

    it('metadata: ownerReferences by uid, finalizers as a set', () => {
      const live = {
        ...pod([]),
        metadata: {
          name: 'p',
          finalizers: ['a', 'b'],
          ownerReferences: [{ uid: 'u1', kind: 'ReplicaSet', name: 'rs' }],
        },
      };
      const body = {
        metadata: {
          finalizers: ['b', 'c'],
          ownerReferences: [
            { uid: 'u1', controller: true },
            { uid: 'u2', kind: 'Node', name: 'n' },
          ],
        },
      };
      const meta = smp(live, body).metadata as any;
      assert.deepEqual(meta.finalizers, ['a', 'b', 'c']);
      assert.deepEqual(meta.ownerReferences, [
        { uid: 'u1', kind: 'ReplicaSet', name: 'rs', controller: true },
        { uid: 'u2', kind: 'Node', name: 'n' },
      ]);
    });

    it('Service ports by port; StatefulSet template as a Pod template', () => {
      const svc = { kind: 'Service', spec: { ports: [{ port: 80, targetPort: 8080 }, { port: 443 }] } };
      assert.deepEqual((smp(svc, { spec: { ports: [{ port: 80, targetPort: 9090 }] } }, SERVICE).spec as any).ports, [
        { port: 80, targetPort: 9090 },
        { port: 443 },
      ]);
      const sts = { kind: 'StatefulSet', spec: { template: { spec: { containers: [{ name: 'a', image: '1' }] } } } };
      const body = { spec: { template: { spec: { containers: [{ name: 'a', image: '2' }] } } } };
      assert.deepEqual(smp(sts, body, STATEFULSET), {
        kind: 'StatefulSet',
        spec: { template: { spec: { containers: [{ name: 'a', image: '2' }] } } },
      });
    });

    it('custom resources and unknown kinds replace every list, metadata included', () => {
      const live = {
        metadata: { name: 'n1', finalizers: ['a'] },
        spec: { images: { nginx: { tags: [{ tag: '1' }] } } },
      };
      const body = { metadata: { finalizers: ['b'] }, spec: { images: { nginx: { tags: [{ tag: '2' }] } } } };
      assert.deepEqual(smp(live, body, NODEIMAGE), {
        metadata: { name: 'n1', finalizers: ['b'] },
        spec: { images: { nginx: { tags: [{ tag: '2' }] } } },
      });
      assert.equal(supportsStrategicMerge(NODEIMAGE), false);
      assert.equal(supportsStrategicMerge(POD), true);
      assert.equal(supportsStrategicMerge(DEPLOYMENT), true);
      assert.equal(supportsStrategicMerge({ group: 'coordination.k8s.io', version: 'v1', kind: 'Lease' }), true);
    });
  });

  describe('directives', () => {
    it('$patch: replace on a map replaces it whole', () => {
      const live = { metadata: { labels: { a: '1', b: '2' } } };
      assert.deepEqual(smp(live, { metadata: { labels: { $patch: 'replace', c: '3' } } }), {
        metadata: { labels: { c: '3' } },
      });
    });

    it('$patch: delete on a map removes it', () => {
      const live = { spec: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } } } };
      assert.deepEqual(smp(live, { spec: { strategy: { rollingUpdate: { $patch: 'delete' } } } }, DEPLOYMENT), {
        spec: { strategy: { type: 'RollingUpdate' } },
      });
    });

    it('$patch: merge on a map merges as usual', () => {
      const live = { metadata: { labels: { a: '1' } } };
      assert.deepEqual(smp(live, { metadata: { labels: { $patch: 'merge', b: '2' } } }), {
        metadata: { labels: { a: '1', b: '2' } },
      });
    });

    it('a $patch: replace element replaces a merged list with the other elements', () => {
      const live = pod([
        { name: 'a', image: '1' },
        { name: 'b', image: '1' },
      ]);
      const result = smp(live, {
        spec: { containers: [{ name: 'c', image: '2', env: [{ name: 'X', value: null }] }, { $patch: 'replace' }] },
      });
      assert.deepEqual((result.spec as any).containers, [{ name: 'c', image: '2', env: [{ name: 'X' }] }]);
    });

    it('$patch: delete removes every element with that key; the emptied list goes away', () => {
      const live = pod([
        {
          name: 'a',
          env: [
            { name: 'X', value: '1' },
            { name: 'X', value: '2' },
          ],
        },
      ]);
      const result = smp(live, { spec: { containers: [{ name: 'a', env: [{ name: 'X', $patch: 'delete' }] }] } });
      assert.deepEqual((result.spec as any).containers, [{ name: 'a' }]);
    });

    it('$retainKeys clears the members it does not name (volume source switch)', () => {
      const live = pod([], { volumes: [{ name: 'v', emptyDir: { medium: 'Memory' } }] });
      const body = {
        spec: { volumes: [{ name: 'v', $retainKeys: ['configMap', 'name'], configMap: { name: 'cm' } }] },
      };
      assert.deepEqual((smp(live, body).spec as any).volumes, [{ name: 'v', configMap: { name: 'cm' } }]);
    });

    it('$deleteFromPrimitiveList removes values from a primitive list', () => {
      const live = { metadata: { name: 'p', finalizers: ['a', 'b', 'c', 'b'] } };
      assert.deepEqual(smp(live, { metadata: { '$deleteFromPrimitiveList/finalizers': ['b', 'zz'] } }).metadata, {
        name: 'p',
        finalizers: ['a', 'c'],
      });
      assert.deepEqual(smp(live, { metadata: { '$deleteFromPrimitiveList/finalizers': ['a', 'b', 'c'] } }).metadata, {
        name: 'p',
      });
    });

    it('$setElementOrder orders a list of primitives (design doc example)', () => {
      const live = { metadata: { finalizers: ['a', 'b', 'c'] } };
      assert.deepEqual(
        (smp(live, { metadata: { '$setElementOrder/finalizers': ['b', 'c', 'a'] } }).metadata as any).finalizers,
        ['b', 'c', 'a'],
      );
    });

    it('$setElementOrder orders a list of maps without other changes', () => {
      const live = pod([{ name: 'b' }, { name: 'a' }]);
      assert.deepEqual(
        names(
          (smp(live, { spec: { '$setElementOrder/containers': [{ name: 'a' }, { name: 'b' }] } }).spec as any)
            .containers,
        ),
        ['a', 'b'],
      );
    });

    it('places a new element by $setElementOrder, and first without it (as kube-apiserver does)', () => {
      const live = pod([{ name: 'a' }, { name: 'b' }]);
      const withOrder = {
        spec: {
          '$setElementOrder/containers': [{ name: 'a' }, { name: 'b' }, { name: 'c' }],
          containers: [{ name: 'c' }],
        },
      };
      assert.deepEqual(names((smp(live, withOrder).spec as any).containers), ['a', 'b', 'c']);
      assert.deepEqual(names((smp(live, { spec: { containers: [{ name: 'c' }] } }).spec as any).containers), [
        'c',
        'a',
        'b',
      ]);
    });

    it('keeps the patch order and interleaves server-only elements by the live order', () => {
      // Live [B, C, A], patch [A', B', D]: C (server only) stays before A, which the live list has after it.
      const live = pod([{ name: 'x', env: [{ name: 'B' }, { name: 'C' }, { name: 'A' }] }]);
      const body = {
        spec: {
          containers: [{ name: 'x', env: [{ name: 'A', value: '1' }, { name: 'B', value: '1' }, { name: 'D' }] }],
        },
      };
      assert.deepEqual(names((smp(live, body).spec as any).containers[0].env), ['C', 'A', 'B', 'D']);
    });

    it('orders server-only elements around $setElementOrder by their live positions', () => {
      // The env example of the preserve-order design: the server added ENV4 and ENV5 and reordered.
      const live = pod([{ name: 'x', env: ['ENV2', 'ENV5', 'ENV1', 'ENV3', 'ENV4'].map((name) => ({ name })) }]);
      const body = {
        spec: {
          containers: [
            {
              name: 'x',
              '$setElementOrder/env': [{ name: 'ENV1' }, { name: 'ENV2' }, { name: 'ENV6' }],
              env: [
                { name: 'ENV3', $patch: 'delete' },
                { name: 'ENV6', value: 'new-env' },
              ],
            },
          ],
        },
      };
      assert.deepEqual(names((smp(live, body).spec as any).containers[0].env), [
        'ENV5',
        'ENV1',
        'ENV2',
        'ENV6',
        'ENV4',
      ]);
    });

    it('primitive merge lists with $setElementOrder and $deleteFromPrimitiveList together', () => {
      const live = { metadata: { finalizers: ['b', 'e', 'a', 'c', 'd'] } };
      const body = {
        metadata: {
          '$setElementOrder/finalizers': ['a', 'b', 'f'],
          '$deleteFromPrimitiveList/finalizers': ['c'],
          finalizers: ['f'],
        },
      };
      assert.deepEqual((smp(live, body).metadata as any).finalizers, ['e', 'a', 'b', 'f', 'd']);
    });

    it('processes directives in values the live object does not have yet', () => {
      const live = pod([{ name: 'a' }]);
      const body = {
        spec: {
          initContainers: [
            {
              name: 'i',
              env: [
                { name: 'gone', $patch: 'delete' },
                { name: 'E', value: 'v', valueFrom: null },
              ],
            },
          ],
          affinity: { nodeAffinity: { $patch: 'delete' } },
          securityContext: { $patch: 'replace', runAsUser: 1 },
        },
      };
      const spec = smp(live, body).spec as any;
      assert.deepEqual(spec.initContainers, [{ name: 'i', env: [{ name: 'E', value: 'v' }] }]);
      assert.deepEqual(spec.affinity, {});
      assert.deepEqual(spec.securityContext, { runAsUser: 1 });
    });
  });

  describe('errors', () => {
    const live = pod([{ name: 'a', image: '1' }]);
    const cases: [string, object, number, RegExp][] = [
      [
        'an element without its merge key',
        { spec: { containers: [{ image: '2' }] } },
        422,
        /^map: \{image\} does not contain declared merge key: name$/,
      ],
      [
        'a $patch: delete without the merge key',
        { spec: { containers: [{ $patch: 'delete' }] } },
        422,
        /does not contain declared merge key: name/,
      ],
      ['an unknown $patch', { spec: { $patch: 'squash' } }, 422, /unknown patch type: "squash" in map/],
      [
        'an unknown $patch in a list',
        { spec: { containers: [{ name: 'a', $patch: 'squash' }] } },
        422,
        /unknown patch type: "squash"/,
      ],
      [
        'a $setElementOrder that is no list',
        { spec: { '$setElementOrder/containers': { name: 'a' } } },
        400,
        /invalid patch format of setElementOrder list/,
      ],
      [
        'a $setElementOrder entry without the key',
        { spec: { '$setElementOrder/containers': [{ image: 'x' }] } },
        400,
        /has no "name"/,
      ],
      [
        'a $deleteFromPrimitiveList that is no list',
        { metadata: { '$deleteFromPrimitiveList/finalizers': 'a' } },
        400,
        /invalid patch format of primitive list/,
      ],
      [
        'a $retainKeys that is no list of names',
        { spec: { $retainKeys: 'containers' } },
        400,
        /invalid patch format of retainKeys/,
      ],
      [
        'a member $retainKeys does not name',
        { spec: { $retainKeys: ['containers'], hostname: 'h' } },
        422,
        /patch content doesn't match retainKeys list/,
      ],
      [
        'a list of lists in a merged list',
        { metadata: { finalizers: [['a']] } },
        422,
        /lists of lists are not supported/,
      ],
      [
        'a merged list of mixed element types',
        { spec: { containers: [{ name: 'b' }, 'c'] } },
        422,
        /mixed element types/,
      ],
    ];
    for (const [name, body, code, message] of cases) {
      it(`rejects ${name} with ${code}`, () => rejects(() => smp(live, body), code, message));
    }
  });

  describe('properties', () => {
    const noDirectives = { nullMembers: true, arrays: false } as const;

    for (const gvk of [CONFIGMAP, POD, NODEIMAGE]) {
      it(`equals a JSON merge patch on map-only objects (${gvk.kind})`, () => {
        fc.assert(
          fc.property(objectArb({ nullMembers: false, arrays: false }), objectArb(noDirectives), (original, patch) => {
            assert.deepEqual(smp(original, patch, gvk), jsonMergePatch(original, patch));
          }),
          { numRuns: 300 },
        );
      });
    }

    const nameSet = fc.uniqueArray(fc.constantFrom<string>('a', 'b', 'c', 'd', 'e', 'f'), { maxLength: 6 });

    it('merges finalizers as a set: (live ∪ added) \\ deleted, each once', () => {
      fc.assert(
        fc.property(nameSet, nameSet, nameSet, (live, added, deleted) => {
          const body = { metadata: { finalizers: added, '$deleteFromPrimitiveList/finalizers': deleted } };
          const result = (smp({ metadata: { finalizers: live } }, body).metadata as any).finalizers ?? [];
          const expected = [...new Set([...live, ...added])].filter((f) => !deleted.includes(f));
          assert.deepEqual([...result].sort(), expected.sort());
        }),
        { numRuns: 300 },
      );
    });

    it('merges containers by name: every name once, patched images win, $setElementOrder is the result order', () => {
      fc.assert(
        fc.property(nameSet, nameSet, (live, patched) => {
          const original = pod(live.map((name) => ({ name, image: `${name}:live` })));
          const order = [...new Set([...live, ...patched])];
          const body = {
            spec: {
              '$setElementOrder/containers': order.map((name) => ({ name })),
              containers: patched.map((name) => ({ name, image: `${name}:new` })),
            },
          };
          const containers = ((smp(original, body).spec as any).containers ?? []) as { name: string; image: string }[];
          assert.deepEqual(names(containers), order);
          for (const c of containers)
            assert.equal(c.image, patched.includes(c.name) ? `${c.name}:new` : `${c.name}:live`);
        }),
        { numRuns: 300 },
      );
    });

    it('is idempotent for patches without deletions', () => {
      fc.assert(
        fc.property(nameSet, nameSet, (live, patched) => {
          const original = pod(live.map((name) => ({ name, env: [{ name: 'E', value: 'live' }] })));
          const body = { spec: { containers: patched.map((name) => ({ name, env: [{ name: 'F', value: 'new' }] })) } };
          const once = smp(original, body);
          assert.deepEqual(smp(once, body), once);
        }),
        { numRuns: 200 },
      );
    });
  });
});
