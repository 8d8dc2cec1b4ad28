#!/bin/bash
cd /work/wt-crio
export REAL_CLUSTER_DIR=$PWD/.cluster-real CLUSTER_KUBERNETES=1.36 CLUSTER_RUNTIME=cri-o
for f in test/component/cluster/real-cluster test/e2e/persistentpodstate/pinning test/e2e/containerrecreate/crr test/e2e/operate/in-cluster test/e2e/podprobe/podprobe test/e2e/launchpriority/launch-order test/e2e/imagepuller/nodeimage test/e2e/operate/runtime-outage test/e2e/operate/pull-credentials test/e2e/podprobe/markers test/e2e/podprobe/kinds-and-bad-input; do
  n=$(echo $f | tr / _)
  echo "=== $f $(date +%T)" >> .logs/e2e-summary.log
  npx mocha "dist/$f.test.js" > .logs/e2e-$n.log 2>&1
  echo "exit $? $(date +%T): $(grep -E '^tests:' .logs/e2e-$n.log)" >> .logs/e2e-summary.log
done
