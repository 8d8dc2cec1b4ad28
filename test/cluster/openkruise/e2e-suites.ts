// OpenKruise's own e2e suites (its kruise-e2e.test, built by build.sh openkruise) against a cluster: which specs a
// suite selects (by OpenKruise's ginkgo labels), the look-alike images its specs name (copies of our busybox test
// images in the local registry, named through the Kubernetes e2e framework's KUBE_TEST_REPO_LIST), the binary's
// command line, and its ginkgo JSON report read back as one row per case. docs/openkruise-side-by-side.md.
import { isRecord } from '../../../src/util/is-record.js';

/**
 * What a suite runs against: `ours`, our controller on the host and our agent in every node (deploy/overlays/default);
 * `agent-only`, OpenKruise's own kruise-manager on the host (its controllers, webhooks and CRDs: the suite's
 * CloneSets and Advanced StatefulSets are served by it) and our agent in every node as deploy/overlays/agent-only
 * installs it, OpenKruise's kruise-daemon not running.
 */
export type E2eSetup = 'ours' | 'agent-only';

export interface E2eSuite {
  /** What it runs against (said in the report). */
  describe: string;
  /** A ginkgo label filter over OpenKruise's own labels (`ginkgo.Label("PullImage", ...)`). */
  labelFilter: string;
  setup: E2eSetup;
}

export const E2E_SUITES = {
  images: {
    describe:
      'ImagePullJob (PullImage) and ImageListPullJob (PullImages), v1alpha1 and v1beta1, against our controller and agent',
    labelFilter: 'PullImage || PullImages',
    setup: 'ours',
  },
  crr: {
    describe: "ContainerRecreateRequest, against our agent beside OpenKruise's kruise-manager (agent-only)",
    labelFilter: 'ContainerRecreateRequest',
    setup: 'agent-only',
  },
  podprobe: {
    describe: "PodProbeMarker, against our agent beside OpenKruise's kruise-manager (agent-only)",
    labelFilter: 'PodProbeMarker',
    setup: 'agent-only',
  },
  'launch-priority': {
    describe: "ContainerPriority (container launch priority), against our agent beside OpenKruise's kruise-manager",
    labelFilter: 'ContainerPriority',
    setup: 'agent-only',
  },
} as const satisfies Record<string, E2eSuite>;

export type E2eSuiteName = keyof typeof E2E_SUITES;

export function isE2eSuiteName(name: string): name is E2eSuiteName {
  return Object.hasOwn(E2E_SUITES, name);
}

/** The registry path that stands for the Kubernetes e2e framework's `promoterE2eRegistry` (registry.k8s.io/e2e-test-images). */
export const LOOKALIKE_REPOSITORY_PREFIX = 'e2e-test-images';

export interface LookalikeImage {
  name: string;
  tag: string;
  /** The test image (busybox userland, every applet) it is made from. */
  source: 'busybox1' | 'busybox2';
  /**
   * The default command it gets in place of the source's `/bin/sh` (which exits at once without a terminal), for
   * images the suites run without a command: what keeps the real image running.
   */
  cmd?: readonly string[];
  /** Files added on top (absolute paths in the image). */
  files?: readonly { path: string; content: string; mode: number }[];
}

/**
 * A web server on port 80 as the real httpd and nginx images run (busybox's httpd serving an index page), ending on
 * TERM or INT as they do: as PID 1 without a handler, busybox's httpd would ignore SIGTERM and every stop would
 * take the whole grace period.
 */
const SERVE_CMD = [
  '/bin/sh',
  '-c',
  'trap "exit 0" TERM INT; mkdir -p /www && echo ok > /www/index.html; httpd -f -p 80 -h /www & wait $!',
];
/** `bash` as the real images have it (busybox has no bash applet): the launch-priority specs run `/bin/bash -c`. */
const BASH = { path: '/bin/bash', content: '#!/bin/sh\nexec /bin/sh "$@"\n', mode: 0o755 };
/** agnhost's default command is `pause`: wait forever, exit on TERM or INT. */
const PAUSE_CMD = ['/bin/sh', '-c', 'trap "exit 0" TERM INT; while :; do sleep 3600 & wait $!; done'];

/**
 * The images of k8s.io/kubernetes/test/utils/image (v1.32, OpenKruise v1.9.1's) that the suites name (through
 * test/e2e/framework/common: NginxImage, NewNginxImage, WebserverImage, NewWebserverImage, BusyboxImage,
 * AgnhostImage), and which of our test images stands for each. Old and new versions of one image get different
 * images (different digests), as the real ones have.
 */
export const LOOKALIKE_IMAGES: readonly LookalikeImage[] = [
  { name: 'nginx', tag: '1.14-4', source: 'busybox1', cmd: SERVE_CMD },
  { name: 'nginx', tag: '1.15-4', source: 'busybox2', cmd: SERVE_CMD },
  { name: 'httpd', tag: '2.4.38-4', source: 'busybox1', cmd: SERVE_CMD, files: [BASH] },
  { name: 'httpd', tag: '2.4.39-4', source: 'busybox2', cmd: SERVE_CMD, files: [BASH] },
  { name: 'busybox', tag: '1.36.1-1', source: 'busybox1' },
  { name: 'agnhost', tag: '2.53', source: 'busybox1', cmd: PAUSE_CMD },
];

/**
 * A probe script that answers as the spec "pod probe marker test2" says OpenKruise's minecraft-demo image's
 * `probe.sh` does over time (test/e2e/apps/v1alpha1/podprobemarker.go:355-407; the image itself is not in the
 * module): fails first, then succeeds saying `data`, then succeeds saying `gate`. Here by the count of its runs.
 */
const MINECRAFT_PROBE = [
  'n=$(cat /tmp/probe-runs 2>/dev/null || echo 0); n=$((n + 1)); echo $n > /tmp/probe-runs',
  'case $n in 1) echo "not started"; exit 1 ;; 2) echo data ;; *) echo gate ;; esac',
  '',
].join('\n');

/**
 * The Docker Hub images the PodProbeMarker specs name without a registry (test/e2e/framework/v1alpha1/
 * pod_probe_marker_util.go: `nginx:1.15.1`, `centos:7` run with `sleep 999d`, `openkruise/minecraft-demo:probe-v0`
 * probed with `bash ./probe.sh`), `name` their path as the nodes' runtime asks a docker.io mirror for them.
 */
export const DOCKER_HUB_LOOKALIKES: readonly LookalikeImage[] = [
  { name: 'library/nginx', tag: '1.15.1', source: 'busybox2', cmd: SERVE_CMD },
  { name: 'library/centos', tag: '7', source: 'busybox1', cmd: PAUSE_CMD },
  {
    name: 'openkruise/minecraft-demo',
    tag: 'probe-v0',
    source: 'busybox1',
    cmd: PAUSE_CMD,
    files: [BASH, { path: '/probe.sh', content: MINECRAFT_PROBE, mode: 0o644 }],
  },
];

/** A Docker Hub look-alike's reference in `registry`. */
export function dockerHubLookalikeReference(registry: string, image: { name: string; tag: string }): string {
  return `${registry}/${image.name}:${image.tag}`;
}

/** umoci's flags that give a look-alike its default command (each argument a --config.cmd), none without one. */
export function lookalikeConfigArgs(image: LookalikeImage): string[] {
  return (image.cmd ?? []).flatMap((arg) => ['--config.cmd', arg]);
}

/** A look-alike made anew each run (its own config or files), not a plain copy of a test image. */
export function isBuiltLookalike(image: LookalikeImage): boolean {
  return image.cmd !== undefined || image.files !== undefined;
}

/** The full reference of a look-alike in `registry` (what the suites will name with the repo list below). */
export function lookalikeReference(registry: string, image: { name: string; tag: string }): string {
  return `${registry}/${LOOKALIKE_REPOSITORY_PREFIX}/${image.name}:${image.tag}`;
}

/**
 * The KUBE_TEST_REPO_LIST file: the framework reads it (YAML) over its defaults, so only the registry the suites'
 * images come from is named.
 */
export function repoListYaml(registry: string): string {
  return `promoterE2eRegistry: ${registry}/${LOOKALIKE_REPOSITORY_PREFIX}\n`;
}

/**
 * kruise-e2e.test's command line for a suite (flags of the Go test binary: single dash, `name=value`). No
 * `-kubeconfig`: the binary accepts that flag (controller-runtime registers it) but its framework never reads it; it
 * takes the KUBECONFIG environment variable (e2eEnv), and without it falls back to the in-cluster config.
 */
export function e2eArgs(options: {
  suite: E2eSuite;
  jsonReport: string;
  outputDir: string;
  extra?: readonly string[];
}): string[] {
  return [
    `-ginkgo.label-filter=${options.suite.labelFilter}`,
    '-ginkgo.v',
    '-ginkgo.no-color',
    '-ginkgo.timeout=60m',
    `-ginkgo.json-report=${options.jsonReport}`,
    `-e2e-output-dir=${options.outputDir}`,
    ...(options.extra ?? []),
  ];
}

/** kruise-e2e.test's environment: the kubeconfig, and the registry its images are taken from. */
export function e2eEnv(base: NodeJS.ProcessEnv, kubeconfig: string, repoList: string): NodeJS.ProcessEnv {
  return { ...base, KUBECONFIG: kubeconfig, KUBE_TEST_REPO_LIST: repoList };
}

/** One case of a run, from the JSON report. */
export interface E2eCase {
  /** The spec's API version folder (test/e2e/apps/v1alpha1 or v1beta1), when its file says. */
  version: string;
  /** ginkgo's full text: the Describe, the Context, the It. */
  text: string;
  state: string;
  seconds: number;
  /** The failure's message (failed, panicked, timed out, interrupted). */
  failure?: string;
  /** Where it was raised: file (from test/e2e/ on) and line. */
  at?: string;
  /** Why, when the failure is one of KNOWN_FAILURES. */
  known?: string;
}

/**
 * Failures of OpenKruise's specs that are not ours, each matched by the It's text and the exact check that fails
 * (file:line of the failure), with the reason (docs/openkruise-side-by-side.md has the evidence). Any other failure,
 * or one of these failing elsewhere, fails the run.
 */
export const KNOWN_FAILURES: readonly { it: string; at: string; reason: string }[] = [
  ...[
    { it: 'pull image with secret and ttl cleaned', at: 'test/e2e/apps/v1beta1/pullimages.go:174' },
    { it: 'pull image with secret and completed', at: 'test/e2e/apps/v1beta1/pullimages.go:262' },
    { it: 'pull image with secret', at: 'test/e2e/apps/v1alpha1/pullimages.go:174' },
  ].map((known) => ({
    ...known,
    reason:
      "theirs: a race in the spec. It looks for the job's copy of the pull secret about 1 s after creating the job, " +
      'but the copy is deleted once the job completes (OpenKruise deletes it then too), and ours completes in under ' +
      "1 s here (a small image from a local registry, or one already on the nodes); OpenKruise's daemon reports a " +
      'tag no sooner than 3 to 5 s after it starts, so against OpenKruise the check always comes first',
  })),
];

export interface E2eRun {
  cases: E2eCase[];
  passed: number;
  /** Failures, the known ones included. */
  failed: number;
  /** Failures that are KNOWN_FAILURES. */
  known: number;
  /** Specs the filter left out (not counted as run). */
  notRun: number;
  suiteSucceeded: boolean;
  seconds: number;
}

const NS_PER_S = 1e9;

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function seconds(value: unknown): number {
  return typeof value === 'number' ? value / NS_PER_S : 0;
}

/** Where a failure was raised: its file from test/e2e/ on, and line; undefined when the report does not say. */
function failureLocation(failure: Record<string, unknown>): string | undefined {
  if (!isRecord(failure.Location)) return undefined;
  const file = text(failure.Location.FileName).replace(/^.*\/test\/e2e\//, 'test/e2e/');
  const line = typeof failure.Location.LineNumber === 'number' ? `:${failure.Location.LineNumber}` : '';
  return file ? `${file}${line}` : undefined;
}

/**
 * ginkgo v2's JSON report (`-ginkgo.json-report`: an array of suite reports, each with SpecReports) as one row per
 * It that ran. Specs left out by the filter count in `notRun`; suite-level nodes (BeforeSuite, ...) count only when
 * they failed.
 */
export function readE2eReport(json: string): E2eRun {
  const parsed: unknown = JSON.parse(json);
  if (!Array.isArray(parsed)) throw new Error('a ginkgo JSON report is an array of suite reports');
  const run: E2eRun = { cases: [], passed: 0, failed: 0, known: 0, notRun: 0, suiteSucceeded: true, seconds: 0 };
  for (const suite of parsed) {
    if (!isRecord(suite)) throw new Error('a suite report is not an object');
    if (suite.SuiteSucceeded !== true) run.suiteSucceeded = false;
    run.seconds += seconds(suite.RunTime);
    const specs = Array.isArray(suite.SpecReports) ? suite.SpecReports : [];
    for (const spec of specs) {
      if (!isRecord(spec)) continue;
      const state = text(spec.State);
      const leafType = text(spec.LeafNodeType);
      if (leafType === 'It' && state === 'skipped' && !isRecord(spec.Failure)) {
        run.notRun++;
        continue;
      }
      if (leafType !== 'It' && (state === 'passed' || state === 'skipped')) continue;
      const hierarchy = Array.isArray(spec.ContainerHierarchyTexts) ? spec.ContainerHierarchyTexts.map(text) : [];
      const location = isRecord(spec.LeafNodeLocation) ? text(spec.LeafNodeLocation.FileName) : '';
      const version = /\/apps\/(v1(?:alpha|beta)\d+)\//.exec(location)?.[1] ?? '';
      const row: E2eCase = {
        version,
        text: [...hierarchy, text(spec.LeafNodeText) || leafType].filter(Boolean).join(' '),
        state,
        seconds: seconds(spec.RunTime),
      };
      if (isRecord(spec.Failure)) {
        row.failure = text(spec.Failure.Message).trim();
        const at = failureLocation(spec.Failure);
        if (at) row.at = at;
      }
      if (state === 'passed') run.passed++;
      else {
        run.failed++;
        const leaf = text(spec.LeafNodeText);
        const known = KNOWN_FAILURES.find((k) => k.it === leaf && k.at === row.at);
        if (known && state === 'failed') {
          row.known = known.reason;
          run.known++;
        }
      }
      run.cases.push(row);
    }
  }
  return run;
}

/** Some case ran, and every case passed or failed only as KNOWN_FAILURES says. */
export function e2eRunAccepted(run: E2eRun): boolean {
  return run.cases.length > 0 && run.failed === run.known;
}

/** The report as lines for a terminal: one per case (a failure's message, or its known reason, under it), then the totals. */
export function formatE2eRun(run: E2eRun): string[] {
  const indent = (body: string): string => `      ${body.split('\n').join('\n      ')}`;
  const lines = run.cases.map((c) => {
    const state = c.state === 'passed' ? 'PASS' : c.known ? 'KNOWN' : c.state.toUpperCase();
    const head = `${state.padEnd(6)} ${c.seconds.toFixed(1).padStart(6)} s  ${c.version ? `${c.version} ` : ''}${c.text}`;
    const at = c.at ? ` (${c.at})` : '';
    if (c.known) return `${head}\n${indent(`${c.failure?.split('\n')[0] ?? ''}${at}`)}\n${indent(c.known)}`;
    return c.failure !== undefined ? `${head}\n${indent(`${c.failure}${at}`)}` : head;
  });
  const verdict = e2eRunAccepted(run) ? (run.known > 0 ? 'ACCEPTED' : 'SUCCESS') : 'FAIL';
  lines.push(
    `${verdict}: ${run.passed} passed, ${run.failed} failed (${run.known} known, not ours), ${run.notRun} not selected; ${run.seconds.toFixed(0)} s`,
  );
  return lines;
}
