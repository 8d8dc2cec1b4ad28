// deploy/node-confinement names what the agent writes: the pod annotations it may change and the components it
// records Events as. Both must be the agent's own (src/), or the policy refuses the agent's real writes (or allows
// more than it makes). The e2e test test/e2e/operate/stolen-agent-token.test.ts checks the policy on the API server.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import {
  CONTAINER_LAUNCH_PRIORITY_COMPLETED_ANNOTATION,
  EVENT_SOURCE_CONTAINER_META,
  EVENT_SOURCE_IMAGE_PULLER,
  IN_PLACE_UPDATE_STATE_ANNOTATION,
  RUNTIME_CONTAINERS_META_ANNOTATION,
} from '../../../src/api/constants.js';
import { EVENT_SOURCE_CONTAINER_RECREATE } from '../../../src/daemon/containerrecreate/controller.js';
import { BARRIER_RELEASED_ANNOTATION } from '../../../src/daemon/launchpriority/controller.js';
import { EVENT_SOURCE_LAUNCH_PRIORITY } from '../../../src/daemon/launchpriority/module.js';
import { POD_PROBE_EVENT_SOURCE } from '../../../src/daemon/podprobe/controller.js';
import { packageRoot } from '../../../src/util/repo-root.js';

interface Policy {
  kind: string;
  spec?: { variables?: { name: string; expression: string }[] };
}

const file = join(packageRoot(), 'deploy', 'node-confinement', 'policy.yaml');
const policy = (loadAll(readFileSync(file, 'utf8')) as Policy[]).find((d) => d.kind === 'ValidatingAdmissionPolicy');

function variable(name: string): string {
  const found = policy?.spec?.variables?.find((v) => v.name === name);
  assert.ok(found, `variable ${name} in ${file}`);
  return found.expression;
}

/** The single-quoted CEL string literals of an expression. */
function literals(expression: string): string[] {
  return [...expression.matchAll(/'([^']*)'/g)].map((m) => m[1]!);
}

describe('deploy/node-confinement: what it lets the agent write is what the agent writes', () => {
  it("allows exactly the agent's four pod annotations", () => {
    assert.deepEqual(
      literals(variable('podAgentAnnotations')).sort(),
      [
        RUNTIME_CONTAINERS_META_ANNOTATION, // src/daemon/containermeta
        IN_PLACE_UPDATE_STATE_ANNOTATION, // src/daemon/containermeta
        BARRIER_RELEASED_ANNOTATION, // src/daemon/launchpriority
        CONTAINER_LAUNCH_PRIORITY_COMPLETED_ANNOTATION, // src/daemon/launchpriority
      ].sort(),
    );
  });

  it("lets every recorder of the agent record Events as itself, and nobody else's name", () => {
    const [pattern] = literals(variable('eventComponent'));
    assert.ok(pattern);
    const component = new RegExp(pattern);
    // the components src/daemon's EventRecorders are built with (ipreservation: 'kruise-daemon')
    for (const name of [
      'kruise-daemon',
      EVENT_SOURCE_IMAGE_PULLER,
      EVENT_SOURCE_CONTAINER_META,
      EVENT_SOURCE_CONTAINER_RECREATE,
      EVENT_SOURCE_LAUNCH_PRIORITY,
      POD_PROBE_EVENT_SOURCE,
    ]) {
      assert.match(name, component);
    }
    for (const name of ['kubelet', 'default-scheduler', 'kruise-manager', 'kruise-daemon-', 'x-kruise-daemon']) {
      assert.doesNotMatch(name, component);
    }
  });
});
