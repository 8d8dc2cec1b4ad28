// Every benchmark suite, by name. `npm run bench` runs those marked inDefaultRun; `npm run bench -- NAME...`
// runs the named ones. Later issues add theirs here (e.g. `scale`).
import { agentMemorySuite } from './agent-memory.js';
import { crrSuite } from './crr.js';
import { criLatencySuite } from './cri-latency.js';
import { kubeMemorySuite } from './kube-memory.js';
import type { BenchSuite } from './framework.js';
import { imageSuite } from './image.js';
import { imagePullerSuite } from './imagepuller.js';
import { ipamSuite } from './ipam.js';
import { launchPrioritySuite } from './launch-priority.js';
import { openKruiseLaunchPrioritySuite } from './openkruise-launch-priority.js';
import { openKruiseSuite } from './openkruise.js';
import { openKruiseBugsSuite } from './openkruise-bugs.js';
import { openKruiseHandoverSuite } from './openkruise-handover.js';
import { openKruiseImagesStaySuite } from './openkruise-images-stay.js';
import { openKruiseScaleSuite } from './openkruise-scale.js';
import { persistentPodStateSuite } from './persistent-pod-state.js';
import { podProbeSuite } from './pod-probe.js';
import { pullSecretsSuite } from './pull-secrets.js';
import { scaleSuite } from './scale.js';

export const SUITES: readonly BenchSuite[] = [
  criLatencySuite,
  agentMemorySuite,
  kubeMemorySuite,
  imagePullerSuite,
  ipamSuite,
  launchPrioritySuite,
  persistentPodStateSuite,
  podProbeSuite,
  scaleSuite,
  crrSuite,
  pullSecretsSuite,
  imageSuite,
  openKruiseSuite,
  openKruiseBugsSuite,
  openKruiseHandoverSuite,
  openKruiseScaleSuite,
  openKruiseLaunchPrioritySuite,
  openKruiseImagesStaySuite,
];
