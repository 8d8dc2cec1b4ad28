// OpenKruise's reported bugs as cases for one node agent at a time (`npm run bench -- openkruise-bugs`,
// test/bench/openkruise-bugs.ts): each case runs the same steps on kd-node-1 whichever agent serves the node (ours,
// or OpenKruise v1.9.1's kruise-daemon) and says whether the agent did what the issue's reporter expected, with the
// evidence (a status, a log line, a count). Two stages: the agent alone (no controller: the NodeImage spec is written
// by hand, as OpenKruise's ImagePullJob controller would write it), and the agent with a controller (ours, or
// OpenKruise's kruise-manager: its webhook fills a CRR's labels and statusContext, its CRR controller copies the pod's
// container statuses into the CRR, which is what wakes OpenKruise's daemon once a container runs again).
// docs/openkruise-side-by-side.md has the cases, the issues and the results.
import { CONTAINER_RECREATE_REQUESTS } from '../../../src/api/containerrecreaterequest.js';
import { IMAGE_PULL_JOBS } from '../../../src/api/imagepulljob.js';
import type { ImageTagSpec } from '../../../src/api/nodeimage.js';
import type { CriClient } from '../../../src/cri/client.js';
import type { KubeClient } from '../../../src/kube/client.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { CoreResources, type ResourceType } from '../../../src/kube/resource.js';
import {
  createCrr as createCrrIn,
  getCrr,
  runPod,
  SLEEP_FOREVER,
  type CrrScope,
  type PodObject,
} from '../../e2e/containerrecreate/stack.js';
import { removeImages, setNodeImageSpec, tagStatusOf, waitForStatus } from '../../support/nodeimages.js';
import { waitFor } from '../../support/wait.js';
import { throttleWaits } from '../../bench/bug-verdicts.js';
import type { NodeLayout } from '../k8s/layout.js';

export type SideName = 'ours' | 'openkruise';

/** The agent serving the node during a case. */
export interface AgentSide {
  name: SideName;
  /** Its log lines so far (ours: one JSON object a line; OpenKruise's: klog text). */
  logLines(): string[];
}

export interface CaseEnv extends CrrScope {
  client: KubeClient;
  node: NodeLayout;
  cri: CriClient;
  agent: AgentSide;
  /** `<registry>/openkruise-bugs/busybox`: a repository only these cases use. */
  repository: string;
  /** The digest of `<repository>:1`'s manifest (`sha256:...`). */
  digest: string;
  /** Another image of the registry, already on the node: the pods' image, and spec writes that are not the case's. */
  otherImage: { image: string; tag: string };
  log: (message: string) => void;
}

export interface CaseResult {
  passed: boolean;
  /** What shows it: a status, a message, a log line, a count. */
  evidence: string;
  /** A duration the case measured, for both sides (e.g. created -> Completed), if any. */
  figure?: { name: string; unit: string; value: number };
}

export interface BugCase {
  /** OpenKruise's issue or pull request number. */
  issue: number;
  title: string;
  /**
   * `agent`: the agent alone; `system`: with its controller (ours, or OpenKruise's manager) and webhooks;
   * `openkruise-manager`: with OpenKruise's manager for both agents (a CloneSet, which only it serves).
   */
  stage: 'agent' | 'system' | 'openkruise-manager';
  run(env: CaseEnv): Promise<CaseResult>;
}

/** A CRR as a user writes it (the controller's webhook fills the rest). */
function createCrr(env: CaseEnv, name: string, podName: string, containers: string[]): Promise<unknown> {
  return createCrrIn(env, name, {
    podName,
    containers: containers.map((c) => ({ name: c })),
    strategy: { terminationGracePeriodSeconds: 2 },
  });
}

/** Pods of SLEEP_FOREVER containers on the case's node, all running and ready (created together). */
async function runPods(env: CaseEnv, names: string[], containers: string[]): Promise<void> {
  await Promise.all(
    names.map((name) =>
      runPod(
        env,
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name, namespace: env.namespace },
          spec: {
            nodeName: env.node.name,
            terminationGracePeriodSeconds: 2,
            containers: containers.map((c) => ({
              name: c,
              image: `${env.otherImage.image}:${env.otherImage.tag}`,
              command: SLEEP_FOREVER,
            })),
          },
        } satisfies PodObject,
        180_000,
      ),
    ),
  );
}

async function deletePods(env: CaseEnv, names: string[]): Promise<void> {
  await Promise.all(
    names.map((name) =>
      env.client
        .delete(CoreResources.pods, name, { namespace: env.namespace, gracePeriodSeconds: 0 })
        .catch(() => undefined),
    ),
  );
}

/** The CRR's phase once Completed, or the last phase seen when the deadline passed. */
async function crrOutcome(env: CaseEnv, name: string, timeoutMs: number): Promise<{ phase: string; ms: number }> {
  const started = performance.now();
  let last = '(none)';
  try {
    await waitFor(
      async () => {
        const crr = await getCrr(env, name);
        last = crr?.status?.phase ?? '(no status)';
        return crr?.status?.phase === 'Completed';
      },
      { timeoutMs, intervalMs: 200, message: `CRR ${name} Completed` },
    );
  } catch {
    return { phase: last, ms: performance.now() - started };
  }
  return { phase: 'Completed', ms: performance.now() - started };
}

/** How long a tag may take before the case calls it stuck. */
const TAG_TIMEOUT_MS = 60_000;
/** OpenKruise's issue says "Pending indefinitely": a CRR not Completed by then is stuck. */
const CRR_TIMEOUT_MS = 60_000;

const tagOnce = (tag: string, version: number): ImageTagSpec => ({
  tag,
  version,
  pullPolicy: { timeoutSeconds: 30, backoffLimit: 0 },
});

/** Wait for the tag's phase to end (Succeeded or Failed); the phase and message, or what was last seen. */
async function tagOutcome(env: CaseEnv, image: string, tag: string, version: number): Promise<string> {
  let last = '(no status)';
  try {
    await waitForStatus(
      env.client,
      env.node.name,
      (status) => {
        const t = tagStatusOf(status, image, tag);
        if (!t || t.version !== version) return false;
        last = `${t.phase}${t.message ? `: ${t.message}` : ''}`;
        return t.phase === 'Succeeded' || t.phase === 'Failed';
      },
      { timeoutMs: TAG_TIMEOUT_MS, intervalMs: 200, message: `${image}:${tag} done` },
    );
  } catch {
    return `${last} after ${TAG_TIMEOUT_MS / 1000} s`;
  }
  return last;
}

/** #2534: an ImagePullJob of `repo@sha256:...` is written as tag `sha256:...` of `repo` (its manager's split). */
const digestPinned: BugCase = {
  issue: 2534,
  title: 'digest-pinned image (tag `sha256:...` in the NodeImage)',
  stage: 'agent',
  async run(env) {
    const pinned = `${env.repository}@${env.digest}`;
    await removeImages(env.cri, [pinned]);
    await setNodeImageSpec(env.client, env.node.name, {
      images: { [env.repository]: { tags: [tagOnce(env.digest, 1)] } },
    });
    const outcome = await tagOutcome(env, env.repository, env.digest, 1);
    const onNode = (await env.cri.imageStatus({ image: { image: pinned } })).image?.id;
    await setNodeImageSpec(env.client, env.node.name, { images: {} });
    const passed = outcome.startsWith('Succeeded') && onNode !== undefined;
    return { passed, evidence: `tag status ${outcome}; ${pinned} on the node: ${onNode ? 'yes' : 'no'}` };
  },
};

/** Secret names the NodeImage refers to and that do not exist (the copies of finished jobs, deleted). */
const GONE_SECRETS = ['openkruise-bugs-gone-a', 'openkruise-bugs-gone-b'];
/** Spec writes after the pull (other jobs' tags coming and going, as in the issue's AdvancedCronJob). */
const SPEC_WRITES = 10;

/** #2235: a pulled image whose pull secrets are gone; every later NodeImage sync logs each one as an error. */
const secretLogFlood: BugCase = {
  issue: 2235,
  title: '"failed to get secret" logged on every NodeImage sync after the pull',
  stage: 'agent',
  async run(env) {
    const pullSecrets = GONE_SECRETS.map((name) => ({ namespace: 'kruise-daemon-config', name }));
    const own = { pullSecrets, tags: [tagOnce('1', 1)] };
    await setNodeImageSpec(env.client, env.node.name, { images: { [env.repository]: own } });
    const first = await tagOutcome(env, env.repository, '1', 1);
    const mark = env.agent.logLines().length;
    const { image, tag } = env.otherImage;
    for (let version = 1; version <= SPEC_WRITES; version++) {
      await setNodeImageSpec(env.client, env.node.name, {
        images: { [env.repository]: own, [image]: { tags: [tagOnce(tag, version)] } },
      });
      await tagOutcome(env, image, tag, version);
    }
    await setNodeImageSpec(env.client, env.node.name, { images: {} });
    const lines = env.agent.logLines().slice(mark);
    const about = lines.filter((l) => GONE_SECRETS.some((name) => l.includes(name)));
    const passed = about.length <= GONE_SECRETS.length;
    const sample = about[0] ? `; first: ${about[0].slice(0, 220)}` : '';
    return {
      passed,
      evidence:
        `the pull: ${first}; then ${SPEC_WRITES} spec writes of another image: ${about.length} log lines about the ` +
        `${GONE_SECRETS.length} missing secrets${sample}`,
      figure: { name: 'secretLogLines', unit: 'count', value: about.length },
    };
  },
};

/** Pods (of two containers) the case runs #2474's sequence on, one after another. */
const SECOND_CRR_PODS = 3;

/**
 * #2474: CRR-1 restarts container a and completes; it is deleted and CRR-2 for container b of the same pod is
 * created at once: the reporter's CRR-2 stayed Pending.
 */
const secondCrrAfterDelete: BugCase = {
  issue: 2474,
  title: 'a second CRR created right after the first is deleted',
  stage: 'system',
  async run(env) {
    const pods = Array.from({ length: SECOND_CRR_PODS }, (_, i) => `bugs-2474-${env.agent.name}-${i}`);
    await runPods(env, pods, ['a', 'b']);
    const results: string[] = [];
    let passed = true;
    const toCompleted: number[] = [];
    try {
      for (const pod of pods) {
        await createCrr(env, `${pod}-1`, pod, ['a']);
        const first = await crrOutcome(env, `${pod}-1`, CRR_TIMEOUT_MS);
        if (first.phase !== 'Completed') {
          passed = false;
          results.push(`${pod}: CRR-1 ${first.phase} after ${(first.ms / 1000).toFixed(0)} s`);
          continue;
        }
        await env.client.delete(CONTAINER_RECREATE_REQUESTS, `${pod}-1`, { namespace: env.namespace });
        await createCrr(env, `${pod}-2`, pod, ['b']);
        const second = await crrOutcome(env, `${pod}-2`, CRR_TIMEOUT_MS);
        if (second.phase === 'Completed') toCompleted.push(second.ms);
        else passed = false;
        results.push(`${pod}: CRR-2 ${second.phase} after ${(second.ms / 1000).toFixed(1)} s`);
      }
    } finally {
      await deletePods(env, pods);
    }
    const figure =
      toCompleted.length > 0
        ? { figure: { name: 'secondCrr.createdToCompleted.max', unit: 'ms', value: Math.max(...toCompleted) } }
        : {};
    return { passed, evidence: results.join('; '), ...figure };
  },
};

/** CRRs created at once, each on its own pod (one container): the agent's API writes come in a burst. */
const BURST_CRRS = 20;

/**
 * #2298 (OpenKruise's pull request adding --rest-config-qps/--rest-config-burst to kruise-daemon, default still
 * client-go's 5 and 10): a burst of CRRs on one node; each takes several status writes, which its client holds back.
 */
const throttling: BugCase = {
  issue: 2298,
  title: `client-side throttling at the default 5 QPS / burst 10 (${BURST_CRRS} CRRs at once)`,
  stage: 'system',
  async run(env) {
    const pods = Array.from({ length: BURST_CRRS }, (_, i) => `bugs-2298-${env.agent.name}-${i}`);
    await runPods(env, pods, ['c']);
    const mark = env.agent.logLines().length;
    const started = performance.now();
    let outcomes: { phase: string; ms: number }[];
    try {
      await Promise.all(pods.map((pod) => createCrr(env, `${pod}-crr`, pod, ['c'])));
      outcomes = await Promise.all(pods.map((pod) => crrOutcome(env, `${pod}-crr`, 3 * CRR_TIMEOUT_MS)));
    } finally {
      await deletePods(env, pods);
    }
    const allMs = performance.now() - started;
    const completed = outcomes.filter((o) => o.phase === 'Completed').length;
    const waits = throttleWaits(env.agent.logLines().slice(mark));
    const longest = waits.length > 0 ? Math.max(...waits) : 0;
    const passed = completed === BURST_CRRS && longest < 1;
    return {
      passed,
      evidence:
        `${completed}/${BURST_CRRS} Completed, the last ${(Math.max(...outcomes.map((o) => o.ms)) / 1000).toFixed(1)} s ` +
        `after the creates; ${waits.length} client-side throttling waits logged, longest ${longest.toFixed(2)} s`,
      figure: { name: 'burstCrr.allCompleted', unit: 'ms', value: allMs },
    };
  },
};

const NEVER_TIMEOUT_SECONDS = 3600;
const NEVER_BACKOFF_LIMIT = 3;

/**
 * #2071: a `completionPolicy: Never` ImagePullJob's tags get activeDeadlineSeconds max(1800, timeoutSeconds) from
 * OpenKruise's manager, so with 1 h attempts the deadline ends the pull after the first and its backoffLimit retries
 * never run (the daemon checks the deadline before each attempt, imagepuller_worker.go:399-405).
 */
const neverDeadline: BugCase = {
  issue: 2071,
  title: '`completionPolicy: Never` job: the tag deadline leaves room for backoffLimit retries',
  stage: 'system',
  async run(env) {
    const name = 'bugs-2071-never';
    await env.client.create(
      IMAGE_PULL_JOBS,
      {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'ImagePullJob',
        metadata: { name, namespace: env.namespace },
        spec: {
          image: `${env.repository}:1`,
          selector: { names: [env.node.name] },
          completionPolicy: { type: 'Never' },
          pullPolicy: { timeoutSeconds: NEVER_TIMEOUT_SECONDS, backoffLimit: NEVER_BACKOFF_LIMIT },
        },
      },
      { namespace: env.namespace },
    );
    try {
      const ni = await waitForStatus(
        env.client,
        env.node.name,
        (_, object) =>
          (object.spec?.images?.[env.repository]?.tags ?? []).some((t) =>
            (t.ownerReferences ?? []).some((o) => o.name === name),
          ),
        { timeoutMs: 60_000, message: `the tag of ImagePullJob ${name} in NodeImage ${env.node.name}` },
      );
      const tag = ni.spec?.images?.[env.repository]?.tags.find((t) => t.tag === '1');
      const deadline = tag?.pullPolicy?.activeDeadlineSeconds ?? 0;
      const needed = NEVER_TIMEOUT_SECONDS * (NEVER_BACKOFF_LIMIT + 1);
      return {
        passed: deadline >= needed,
        evidence:
          `timeoutSeconds ${NEVER_TIMEOUT_SECONDS}, backoffLimit ${NEVER_BACKOFF_LIMIT}: the tag's ` +
          `activeDeadlineSeconds ${deadline} (${NEVER_BACKOFF_LIMIT + 1} attempts need ${needed})`,
        figure: { name: 'neverTag.activeDeadlineSeconds', unit: 's', value: deadline },
      };
    } finally {
      await env.client.delete(IMAGE_PULL_JOBS, name, { namespace: env.namespace }).catch(() => undefined);
    }
  },
};

const CLONE_SETS: ResourceType = {
  group: 'apps.kruise.io',
  version: 'v1alpha1',
  resource: 'clonesets',
  namespaced: true,
  kind: 'CloneSet',
};
/** How long the pod must keep its restart count once updated: a second restart would come within a few seconds. */
const SETTLED_MS = 15_000;

interface CoreEventLike {
  reason?: string;
  message?: string;
  source?: { component?: string };
  involvedObject?: { name?: string };
}

/**
 * #1263: a CloneSet in-place update that changes the image and an env-from-metadata label together. kubelet restarts
 * the container for the image; OpenKruise's daemon (InPlaceUpdateEnvFromMetadata) restarts it too for the env, so the
 * preStop hook runs twice (a FailedPreStopHook when one kill cuts the other's hook short).
 */
const imageAndEnvTogether: BugCase = {
  issue: 1263,
  title: 'in-place update of image and env-from-metadata together: one restart, preStop once',
  stage: 'openkruise-manager',
  async run(env) {
    const name = `bugs-1263-${env.agent.name}`;
    const template = (image: string, version: string): object => ({
      metadata: { labels: { app: name, version } },
      spec: {
        nodeSelector: { 'kubernetes.io/hostname': env.node.name },
        terminationGracePeriodSeconds: 30,
        containers: [
          {
            name: 'app',
            image,
            command: SLEEP_FOREVER,
            env: [{ name: 'VERSION', valueFrom: { fieldRef: { fieldPath: "metadata.labels['version']" } } }],
            lifecycle: { preStop: { exec: { command: ['sh', '-c', 'echo PRESTOP > /proc/1/fd/1; sleep 3'] } } },
          },
        ],
      },
    });
    const oldImage = `${env.repository}:1`;
    const newImage = `${env.otherImage.image}:${env.otherImage.tag}`;
    await env.client.create(
      CLONE_SETS,
      {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'CloneSet',
        metadata: { name, namespace: env.namespace },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: name } },
          updateStrategy: { type: 'InPlaceIfPossible' },
          template: template(oldImage, 'v1'),
        },
      },
      { namespace: env.namespace },
    );
    try {
      const running = (image: string) => async (): Promise<PodObject | undefined> => {
        const list = await env.client.list<PodObject>(CoreResources.pods, {
          namespace: env.namespace,
          labelSelector: `app=${name}`,
        });
        const pod = list.items.find((p) => !p.metadata?.deletionTimestamp);
        const status = pod?.status?.containerStatuses?.find((c) => c.name === 'app');
        return status?.ready && status.state?.running && pod?.spec?.containers[0]?.image === image ? pod : undefined;
      };
      const before = await waitFor(running(oldImage), { timeoutMs: 120_000, message: `${name}'s pod running` });
      const podName = before.metadata!.name!;
      const restarts0 = before.status!.containerStatuses![0]!.restartCount ?? 0;
      const since = Date.now();
      await env.client.patch(
        CLONE_SETS,
        name,
        { spec: { template: template(newImage, 'v2') } },
        { namespace: env.namespace, type: 'merge' },
      );
      const updated = await waitFor(
        async () => {
          const pod = await running(newImage)();
          const status = pod?.status?.containerStatuses?.[0];
          return status && status.restartCount > restarts0 ? pod : undefined;
        },
        { timeoutMs: 120_000, message: `${podName} updated in place and running` },
      );
      // a second restart (the agent's, for the env) comes within seconds of kubelet's: the count must hold
      let restarts = updated.status!.containerStatuses![0]!.restartCount - restarts0;
      const settled = performance.now();
      await waitFor(
        async () => {
          const pod = await running(newImage)();
          const count = pod?.status?.containerStatuses?.[0]?.restartCount;
          if (count !== undefined) restarts = count - restarts0;
          return performance.now() - settled >= SETTLED_MS;
        },
        { timeoutMs: SETTLED_MS + 60_000, intervalMs: 500, message: `${podName} settled` },
      );
      const events = await env.client.list<CoreEventLike & KubeObject>(CoreResources.events, {
        namespace: env.namespace,
      });
      const ofPod = events.items.filter(
        (e) => e.involvedObject?.name === podName && Date.parse(e.metadata?.creationTimestamp ?? '') >= since - 1000,
      );
      const kills = ofPod.filter((e) => e.reason === 'Killing').map((e) => e.source?.component ?? '?');
      const failedHooks = ofPod.filter((e) => e.reason === 'FailedPreStopHook');
      const logs = await env.client.transport.request({
        method: 'GET',
        path: `/api/v1/namespaces/${env.namespace}/pods/${podName}/log?container=app&previous=true`,
      });
      const preStops = logs.body.split('\n').filter((l) => l.trim() === 'PRESTOP').length;
      return {
        passed: restarts === 1 && failedHooks.length === 0,
        evidence:
          `restartCount +${restarts}; Killing events from ${kills.join(', ') || 'none'}; ` +
          `FailedPreStopHook ${failedHooks.length}${failedHooks[0] ? ` (${failedHooks[0].message ?? ''})` : ''}; ` +
          `PRESTOP in the last stopped container's log ${preStops}`,
        figure: { name: 'inPlace.restarts', unit: 'count', value: restarts },
      };
    } finally {
      await env.client.delete(CLONE_SETS, name, { namespace: env.namespace }).catch(() => undefined);
    }
  },
};

/** Every case, in the order they run within a stage. */
export const BUG_CASES: readonly BugCase[] = [
  digestPinned,
  secretLogFlood,
  neverDeadline,
  secondCrrAfterDelete,
  throttling,
  imageAndEnvTogether,
];
