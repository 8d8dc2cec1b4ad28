// deploy/ builds with the real kubectl kustomize, and the DaemonSet says what the agent needs.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import { parseDaemonCommandLine, readableFileProblem } from '../../../src/daemon/options.js';
import { packageRoot } from '../../../src/util/repo-root.js';
import { daemonSetNodeOptions } from '../../cluster/deployed-agent.js';

interface Manifest {
  kind: string;
  metadata: { name: string; namespace?: string };
  spec?: any;
}

describe('deploy/ (kubectl kustomize)', function () {
  this.timeout(30_000);
  let manifests: Manifest[] = [];

  before(() => {
    const out = execFileSync('kubectl', ['kustomize', join(packageRoot(), 'deploy')], { encoding: 'utf8' });
    manifests = loadAll(out) as Manifest[];
  });

  const find = (kind: string, name: string): Manifest => {
    const m = manifests.find((x) => x.kind === kind && x.metadata.name === name);
    assert.ok(m, `${kind}/${name} is in the build`);
    return m;
  };

  it('has the namespace, the ServiceAccount and the DaemonSet in kruise-system', () => {
    find('Namespace', 'kruise-system');
    assert.equal(find('ServiceAccount', 'kruise-daemon').metadata.namespace, 'kruise-system');
    assert.equal(find('DaemonSet', 'kruise-daemon').metadata.namespace, 'kruise-system');
  });

  it('runs the agent as the design says', () => {
    const ds = find('DaemonSet', 'kruise-daemon').spec;
    const pod = ds.template.spec;
    const [container] = pod.containers;
    assert.deepEqual(ds.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '10%' } });
    assert.equal(pod.serviceAccountName, 'kruise-daemon');
    assert.equal(pod.priorityClassName, 'system-node-critical');
    assert.equal(pod.hostNetwork, false);
    assert.deepEqual(pod.tolerations, [{ operator: 'Exists' }]);
    assert.equal(container.image, 'kruise-daemon:dev');

    const env = Object.fromEntries(container.env.map((e: any) => [e.name, e]));
    assert.deepEqual(env.NODE_NAME.valueFrom, { fieldRef: { fieldPath: 'spec.nodeName' } });
    // what npm run dev and the benchmarks run the agent with (read from the base) is what every overlay deploys
    assert.equal(env.NODE_OPTIONS.value, daemonSetNodeOptions());
    assert.match(env.NODE_OPTIONS.value, /--max-old-space-size=\d+/);

    const volume = pod.volumes.find((v: any) => v.hostPath?.path === '/var/run');
    const mount = container.volumeMounts.find((m: any) => m.name === volume.name);
    assert.deepEqual(mount, {
      name: volume.name,
      mountPath: '/hostvarrun',
      readOnly: true,
      recursiveReadOnly: 'IfPossible',
    });

    const sc = container.securityContext;
    assert.deepEqual(sc.capabilities, { drop: ['ALL'] });
    assert.equal(sc.readOnlyRootFilesystem, true);
    assert.equal(sc.allowPrivilegeEscalation, false);

    assert.deepEqual(container.livenessProbe.httpGet, { path: '/livez', port: 10221 });
    assert.deepEqual(container.readinessProbe.httpGet, { path: '/readyz', port: 10221 });
    assert.equal(container.resources.limits.memory, '128Mi');
    assert.ok(container.resources.requests.memory, 'a memory request');
  });

  it("passes args and env the agent's option parser accepts", () => {
    const [container] = find('DaemonSet', 'kruise-daemon').spec.template.spec.containers;
    const env: NodeJS.ProcessEnv = { NODE_NAME: 'node-1' };
    for (const e of container.env) if (typeof e.value === 'string') env[e.name] = e.value;
    const parsed = parseDaemonCommandLine(container.args, env, readableFileProblem);
    assert.equal(parsed.kind, 'run');
    assert.deepEqual(parsed.kind === 'run' && parsed.options.listen, { host: undefined, port: 10221 });
    assert.equal(parsed.kind === 'run' && parsed.options.hostRunDir, '/hostvarrun');
  });
});
