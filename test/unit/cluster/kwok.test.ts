// KWOK for the controller-at-scale bench: where its binary and Stage files are, and its command line.
import assert from 'node:assert/strict';
import { FAKE_NODE_LABEL, kwokArgs, kwokPaths, NODE_LEASE_SECONDS } from '../../cluster/kwok/kwok.js';

describe('kwok', () => {
  it('finds its binary by version in the cache and its node Stages in the module cache', () => {
    const build = kwokPaths('/cache');
    assert.match(build.version, /^v\d+\.\d+\.\d+$/);
    assert.equal(build.binary, `/cache/bin/kwok-${build.version}/kwok`);
    const stages = `/cache/go/mod/sigs.k8s.io/kwok@${build.version}/kustomize/stage/node`;
    assert.deepEqual(build.stages, [
      `${stages}/fast/node-initialize.yaml`,
      `${stages}/heartbeat-with-lease/node-heartbeat-with-lease.yaml`,
    ]);
  });

  it('manages only the labelled Nodes, with leases renewed inside the node monitor grace period', () => {
    const args = kwokArgs(kwokPaths('/cache'), '/k/admin.kubeconfig');
    assert.ok(args.includes('--kubeconfig=/k/admin.kubeconfig'));
    assert.ok(args.includes(`--manage-nodes-with-label-selector=${FAKE_NODE_LABEL.key}=${FAKE_NODE_LABEL.value}`));
    assert.ok(args.includes(`--node-lease-duration-seconds=${NODE_LEASE_SECONDS}`));
    // kwok renews every quarter of the duration; kube-controller-manager's node-monitor-grace-period is 50 s
    assert.ok(NODE_LEASE_SECONDS / 4 < 50);
    assert.equal(args.filter((a) => a.startsWith('--config=')).length, 2);
    assert.ok(args.includes('--server-address='));
  });
});
