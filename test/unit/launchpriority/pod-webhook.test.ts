import assert from 'node:assert/strict';
import {
  generatePodName,
  mutatePodForLaunchPriority,
  parsePriority,
  type PodAdmissionRequest,
} from '../../../src/controller/admission/launchpriority/pod-mutation.js';

type Json = Record<string, unknown>;
const PODS = { group: '', version: 'v1', resource: 'pods' };

function container(name: string, priority?: string, extraEnv: Json[] = []): Json {
  return {
    name,
    image: 'busybox',
    env: [...(priority === undefined ? [] : [{ name: 'KRUISE_CONTAINER_PRIORITY', value: priority }]), ...extraEnv],
  };
}

function create(pod: Json, overrides: Partial<PodAdmissionRequest> = {}): PodAdmissionRequest {
  return { operation: 'CREATE', resource: PODS, namespace: 'ns', object: pod, ...overrides };
}

function pod(containers: Json[], metadata: Json = { name: 'web' }): Json {
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec: { containers } };
}

/** Each container's injected barrier (ConfigMap name and key), in order. */
function barriers(result: ReturnType<typeof mutatePodForLaunchPriority>): string[] {
  assert.equal(result.allowed, true);
  const object = (result as { object?: Json }).object;
  assert.ok(object, 'the pod was changed');
  const containers = (object.spec as { containers: { env: Json[] }[] }).containers;
  return containers.map((c) => {
    const envs = c.env.filter((e) => e.name === 'KRUISE_CONTAINER_BARRIER');
    assert.equal(envs.length, 1, 'exactly one barrier env');
    assert.equal(c.env[c.env.length - 1], envs[0], 'appended last');
    const ref = (envs[0]!.valueFrom as { configMapKeyRef: { name: string; key: string } }).configMapKeyRef;
    return `${ref.name}/${ref.key}`;
  });
}

describe('launch priority pod webhook (pure)', () => {
  it('injects p_<priority> from env into every container, keeping other env', () => {
    const result = mutatePodForLaunchPriority(
      create(
        pod([container('app', '-5', [{ name: 'A', value: '1' }]), container('proxy', '10'), container('conf', '0')]),
      ),
    );
    assert.deepEqual(barriers(result), ['web-barrier/p_-5', 'web-barrier/p_10', 'web-barrier/p_0']);
    const app = ((result as { object: Json }).object.spec as { containers: { env: Json[] }[] }).containers[0]!;
    assert.deepEqual(app.env.slice(0, 2), [
      { name: 'KRUISE_CONTAINER_PRIORITY', value: '-5' },
      { name: 'A', value: '1' },
    ]);
  });

  it('a container without the env has priority 0', () => {
    assert.deepEqual(barriers(mutatePodForLaunchPriority(create(pod([container('a', '1'), container('b')])))), [
      'web-barrier/p_1',
      'web-barrier/p_0',
    ]);
  });

  it('Ordered: priorities by container order, user env ignored', () => {
    const result = mutatePodForLaunchPriority(
      create(
        pod([container('a', '-9'), container('b', 'junk'), container('c')], {
          name: 'ord',
          annotations: { 'apps.kruise.io/container-launch-priority': 'Ordered' },
        }),
      ),
    );
    assert.deepEqual(barriers(result), ['ord-barrier/p_0', 'ord-barrier/p_-1', 'ord-barrier/p_-2']);
  });

  it('injects nothing for one container, equal priorities, or no priorities', () => {
    for (const containers of [
      [container('only', '5')],
      [container('a', '3'), container('b', '3')],
      [container('a'), container('b')],
      [container('a', '0'), container('b')],
    ]) {
      const result = mutatePodForLaunchPriority(create(pod(containers)));
      assert.deepEqual(result, { allowed: true });
    }
    assert.deepEqual(
      mutatePodForLaunchPriority(
        create(
          pod([container('only')], {
            name: 'x',
            annotations: { 'apps.kruise.io/container-launch-priority': 'Ordered' },
          }),
        ),
      ),
      { allowed: true },
    );
  });

  it('denies a priority that is not an integer in range, naming the container', () => {
    for (const [value, why] of [
      ['abc', 'is not an integer'],
      ['1.5', 'is not an integer'],
      ['', 'is not an integer'],
      [' 1', 'is not an integer'],
      ['2147483648', 'is outside'],
      ['-2147483648', 'is outside'],
      ['99999999999999999999', 'is outside'],
    ] as const) {
      const result = mutatePodForLaunchPriority(create(pod([container('ok', '1'), container('bad-one', value)])));
      assert.equal(result.allowed, false, value);
      const message = (result as { message: string }).message;
      assert.match(message, /container "bad-one"/);
      assert.match(message, /spec\.containers\[1\]/);
      assert.ok(message.includes(why), `${value}: ${message}`);
      assert.equal((result as { code: number }).code, 400);
    }
    const fromRef = mutatePodForLaunchPriority(
      create(
        pod([
          container('a', '1'),
          {
            name: 'b',
            env: [{ name: 'KRUISE_CONTAINER_PRIORITY', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
          },
        ]),
      ),
    );
    assert.equal(fromRef.allowed, false);
    assert.match((fromRef as { message: string }).message, /container "b".*must be given as a value/);
  });

  it('accepts the range limits and a sign', () => {
    assert.equal(parsePriority('2147483647'), 2147483647);
    assert.equal(parsePriority('-2147483647'), -2147483647);
    assert.equal(parsePriority('+3'), 3);
    assert.deepEqual(
      barriers(mutatePodForLaunchPriority(create(pod([container('a', '+3'), container('b', '-2147483647')])))),
      ['web-barrier/p_3', 'web-barrier/p_-2147483647'],
    );
  });

  it('names a pod created with generateName first, as the apiserver would', () => {
    let i = 0;
    const result = mutatePodForLaunchPriority(
      create(pod([container('a', '1'), container('b')], { generateName: 'job-' })),
      { randomInt: () => i++ % 27 },
    );
    const object = (result as unknown as { object: { metadata: Json } }).object;
    assert.equal(object.metadata.name, 'job-bcdfg');
    assert.equal(object.metadata.generateName, 'job-');
    assert.deepEqual(barriers(result), ['job-bcdfg-barrier/p_1', 'job-bcdfg-barrier/p_0']);
    assert.equal(
      generatePodName('x'.repeat(70), () => 0),
      `${'x'.repeat(58)}bbbbb`,
    );
    assert.match(generatePodName('w-'), /^w-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });

  it('replaces a user-given barrier env (kubelet would resolve both) and says so', () => {
    const stale = {
      name: 'KRUISE_CONTAINER_BARRIER',
      valueFrom: { configMapKeyRef: { name: 'old-barrier', key: 'p' } },
    };
    const result = mutatePodForLaunchPriority(create(pod([container('a', '1', [stale]), container('b')])));
    assert.deepEqual(barriers(result), ['web-barrier/p_1', 'web-barrier/p_0']);
    assert.equal((result as { warnings?: string[] }).warnings?.length, 1);
  });

  it('warns about an annotation value other than Ordered and falls back to env', () => {
    const result = mutatePodForLaunchPriority(
      create(
        pod([container('a', '1'), container('b')], {
          name: 'w',
          annotations: { 'apps.kruise.io/container-launch-priority': 'ordered' },
        }),
      ),
    );
    assert.deepEqual(barriers(result), ['w-barrier/p_1', 'w-barrier/p_0']);
    assert.match((result as { warnings: string[] }).warnings[0]!, /"ordered" is not Ordered/);
  });

  it('denies a pod name too long for its barrier ConfigMap', () => {
    const result = mutatePodForLaunchPriority(
      create(pod([container('a', '1'), container('b')], { name: 'n'.repeat(250) })),
    );
    assert.equal(result.allowed, false);
    assert.match((result as { message: string }).message, /at most 245/);
  });

  it('denies more distinct priorities than a barrier may hold keys (64), and admits 64', () => {
    const containers = (n: number) => Array.from({ length: n }, (_, i) => container(`c${i}`, String(i)));
    const denied = mutatePodForLaunchPriority(create(pod(containers(65), { name: 'many' })));
    assert.equal(denied.allowed, false);
    assert.match((denied as { message: string }).message, /65 distinct launch priorities; at most 64/);
    assert.equal(mutatePodForLaunchPriority(create(pod(containers(64), { name: 'many' }))).allowed, true);
  });

  it('leaves alone what is not a pod creation, and malformed pods', () => {
    const p = pod([container('a', '1'), container('b')]);
    assert.deepEqual(mutatePodForLaunchPriority(create(p, { operation: 'UPDATE' })), { allowed: true });
    assert.deepEqual(mutatePodForLaunchPriority(create(p, { subResource: 'status' })), { allowed: true });
    assert.deepEqual(
      mutatePodForLaunchPriority(create(p, { resource: { group: 'apps', version: 'v1', resource: 'pods' } })),
      {
        allowed: true,
      },
    );
    for (const bad of [
      null,
      'x',
      {},
      { spec: null },
      { spec: { containers: 'x' } },
      { spec: { containers: [1, 2] } },
    ]) {
      assert.deepEqual(mutatePodForLaunchPriority(create(bad as Json)), { allowed: true });
    }
    assert.deepEqual(mutatePodForLaunchPriority(create(pod([container('a', '1'), container('b')], {}))), {
      allowed: true,
    });
  });
});
