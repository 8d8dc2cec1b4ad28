// OpenKruise's e2e suites run by `npm run openkruise-e2e`: the binary's command line and environment, the look-alike
// images' references and repo list, and ginkgo's JSON report read back as one row per case.
import assert from 'node:assert/strict';
import {
  E2E_SUITES,
  e2eArgs,
  e2eEnv,
  e2eRunAccepted,
  formatE2eRun,
  isE2eSuiteName,
  DOCKER_HUB_LOOKALIKES,
  dockerHubLookalikeReference,
  isBuiltLookalike,
  LOOKALIKE_IMAGES,
  lookalikeConfigArgs,
  lookalikeReference,
  readE2eReport,
  repoListYaml,
} from '../../cluster/openkruise/e2e-suites.js';

const FILE = 'github.com/openkruise/kruise@v1.9.1/test/e2e/apps';

/** A ginkgo v2 JSON report as kruise-e2e.test writes it (only the fields read). */
function report(specs: unknown[], succeeded = false): string {
  return JSON.stringify([
    { SuiteDescription: 'Kruise e2e suite', SuiteSucceeded: succeeded, RunTime: 65_381_000_000, SpecReports: specs },
  ]);
}

const passed = {
  ContainerHierarchyTexts: ['PullImage', 'ImagePullJob pulling images functionality [ImagePullJob]'],
  LeafNodeText: 'create two jobs to pull a same image',
  LeafNodeType: 'It',
  LeafNodeLocation: { FileName: `${FILE}/v1beta1/pullimages.go`, LineNumber: 542 },
  State: 'passed',
  RunTime: 16_200_000_000,
};
const failed = {
  ContainerHierarchyTexts: ['PullImage', 'ImagePullJob pulling images functionality [ImagePullJob]'],
  LeafNodeText: 'pull image with secret',
  LeafNodeType: 'It',
  LeafNodeLocation: { FileName: `${FILE}/v1alpha1/pullimages.go`, LineNumber: 117 },
  State: 'failed',
  RunTime: 17_100_000_000,
  Failure: {
    Message: 'Timed out after 10.000s.\nExpected\n    <bool>: false\nto equal\n    <bool>: true',
    Location: { FileName: `${FILE}/v1alpha1/pullimages.go`, LineNumber: 174 },
  },
};
const notSelected = { ...passed, LeafNodeText: 'another', State: 'skipped', RunTime: 0 };

describe("OpenKruise's e2e suites (npm run openkruise-e2e)", () => {
  it('knows its suites, each with its setup, and nothing else', () => {
    assert.ok(isE2eSuiteName('images'));
    assert.ok(isE2eSuiteName('crr'));
    assert.ok(!isE2eSuiteName('toString'));
    assert.ok(!isE2eSuiteName('PodProbeMarker'));
    assert.equal(E2E_SUITES.images.labelFilter, 'PullImage || PullImages');
    assert.equal(E2E_SUITES.images.setup, 'ours');
    assert.equal(E2E_SUITES.crr.labelFilter, 'ContainerRecreateRequest');
    assert.equal(E2E_SUITES.crr.setup, 'agent-only');
    assert.equal(E2E_SUITES.podprobe.labelFilter, 'PodProbeMarker');
    assert.equal(E2E_SUITES.podprobe.setup, 'agent-only');
    assert.equal(E2E_SUITES['launch-priority'].labelFilter, 'ContainerPriority');
  });

  it('gives the look-alikes the suites run without a command one that keeps running, and copies the rest', () => {
    const byName = (name: string, tag: string) => LOOKALIKE_IMAGES.find((i) => i.name === name && i.tag === tag)!;
    assert.ok(!isBuiltLookalike(byName('busybox', '1.36.1-1')), 'run with a command of its own: a plain copy');
    assert.deepEqual(lookalikeConfigArgs(byName('busybox', '1.36.1-1')), []);
    assert.ok(isBuiltLookalike(byName('nginx', '1.14-4')), "a CloneSet's default container runs it");
    const httpd = lookalikeConfigArgs(byName('httpd', '2.4.38-4'));
    assert.deepEqual(httpd.slice(0, 4), ['--config.cmd', '/bin/sh', '--config.cmd', '-c']);
    assert.match(httpd[5]!, /httpd -f -p 80/);
    assert.match(httpd[5]!, /trap "exit 0" TERM INT/);
    assert.ok(isBuiltLookalike(byName('agnhost', '2.53')));
  });

  it("names Docker Hub's images by their path, the minecraft one with bash and probe.sh", () => {
    const refs = DOCKER_HUB_LOOKALIKES.map((image) => dockerHubLookalikeReference('10.1.255.1:5000', image));
    assert.deepEqual(refs, [
      '10.1.255.1:5000/library/nginx:1.15.1',
      '10.1.255.1:5000/library/centos:7',
      '10.1.255.1:5000/openkruise/minecraft-demo:probe-v0',
    ]);
    const minecraft = DOCKER_HUB_LOOKALIKES[2]!;
    assert.deepEqual(
      minecraft.files?.map((f) => f.path),
      ['/bin/bash', '/probe.sh'],
    );
  });

  it('runs the binary with a label filter, a JSON report and the extra flags last; the kubeconfig by environment', () => {
    const args = e2eArgs({
      suite: E2E_SUITES.images,
      jsonReport: '/run/images.json',
      outputDir: '/run',
      extra: ['-ginkgo.focus=two jobs'],
    });
    assert.ok(args.includes('-ginkgo.label-filter=PullImage || PullImages'));
    assert.ok(args.includes('-ginkgo.json-report=/run/images.json'));
    assert.equal(args.at(-1), '-ginkgo.focus=two jobs');
    assert.ok(!args.some((a) => a.startsWith('-kubeconfig')), 'the framework ignores -kubeconfig');
    const env = e2eEnv({ PATH: '/bin', KUBECONFIG: '/elsewhere' }, '/admin.kubeconfig', '/run/repo-list.yaml');
    assert.deepEqual(env, {
      PATH: '/bin',
      KUBECONFIG: '/admin.kubeconfig',
      KUBE_TEST_REPO_LIST: '/run/repo-list.yaml',
    });
  });

  it('names the look-alikes where the repo list sends the framework', () => {
    assert.equal(repoListYaml('10.1.255.1:5000'), 'promoterE2eRegistry: 10.1.255.1:5000/e2e-test-images\n');
    const refs = LOOKALIKE_IMAGES.map((image) => lookalikeReference('10.1.255.1:5000', image));
    assert.ok(refs.includes('10.1.255.1:5000/e2e-test-images/nginx:1.14-4'));
    assert.ok(refs.includes('10.1.255.1:5000/e2e-test-images/busybox:1.36.1-1'));
    assert.equal(new Set(refs).size, refs.length);
    // an old and a new version of one image are different images, as the real ones are
    for (const name of ['nginx', 'httpd']) {
      const sources = new Set(LOOKALIKE_IMAGES.filter((i) => i.name === name).map((i) => i.source));
      assert.equal(sources.size, 2, name);
    }
  });

  it('reads one row per case that ran, with its API version and failure', () => {
    const run = readE2eReport(report([passed, failed, notSelected, notSelected]));
    assert.equal(run.passed, 1);
    assert.equal(run.failed, 1);
    assert.equal(run.notRun, 2);
    assert.equal(run.suiteSucceeded, false);
    assert.equal(run.cases.length, 2);
    assert.deepEqual(run.cases[0], {
      version: 'v1beta1',
      text: 'PullImage ImagePullJob pulling images functionality [ImagePullJob] create two jobs to pull a same image',
      state: 'passed',
      seconds: 16.2,
    });
    assert.equal(run.cases[1]!.version, 'v1alpha1');
    assert.match(run.cases[1]!.failure!, /^Timed out after 10\.000s\./);
    assert.equal(run.cases[1]!.at, 'test/e2e/apps/v1alpha1/pullimages.go:174');
  });

  it('accepts a known failure only at its own check, and no run without cases', () => {
    const known = readE2eReport(report([passed, failed]));
    assert.equal(known.known, 1);
    assert.match(known.cases[1]!.known!, /^theirs: a race in the spec/);
    assert.ok(e2eRunAccepted(known));

    const elsewhere = {
      ...failed,
      Failure: { ...failed.Failure, Location: { ...failed.Failure.Location, LineNumber: 190 } },
    };
    const other = readE2eReport(report([passed, elsewhere]));
    assert.equal(other.known, 0);
    assert.ok(!e2eRunAccepted(other));

    const otherCase = readE2eReport(report([{ ...failed, LeafNodeText: 'create two jobs to pull a same image' }]));
    assert.ok(!e2eRunAccepted(otherCase));
    const timedOut = readE2eReport(report([{ ...failed, State: 'timedout' }]));
    assert.ok(!e2eRunAccepted(timedOut), 'a known check that timed the suite out is not the known failure');
    assert.ok(!e2eRunAccepted(readE2eReport(report([notSelected]))));
  });

  it('counts a failed suite-level node as a case, and a passed one not at all', () => {
    const run = readE2eReport(
      report([
        { LeafNodeType: 'SynchronizedBeforeSuite', State: 'passed', RunTime: 1 },
        { LeafNodeType: 'AfterSuite', State: 'failed', RunTime: 1, Failure: { Message: 'cleanup failed' } },
      ]),
    );
    assert.equal(run.failed, 1);
    assert.equal(run.cases[0]!.text, 'AfterSuite');
    assert.equal(run.cases[0]!.failure, 'cleanup failed');
    assert.equal(run.cases[0]!.at, undefined);
  });

  it('formats a line per case, the failure or the known reason indented under it, then the totals', () => {
    const lines = formatE2eRun(readE2eReport(report([passed, failed, notSelected])));
    assert.match(lines[0]!, /^PASS +16\.2 s {2}v1beta1 PullImage .* create two jobs to pull a same image$/);
    assert.match(
      lines[1]!,
      /^KNOWN +17\.1 s {2}v1alpha1 PullImage .* pull image with secret\n {6}Timed out after 10\.000s\. \(test\/e2e\/apps\/v1alpha1\/pullimages\.go:174\)\n {6}theirs: a race/,
    );
    assert.equal(lines.at(-1), 'ACCEPTED: 1 passed, 1 failed (1 known, not ours), 1 not selected; 65 s');

    const unknown = { ...failed, LeafNodeText: 'create two jobs to pull a same image' };
    const failing = formatE2eRun(readE2eReport(report([unknown])));
    assert.match(failing[0]!, /^FAILED +17\.1 s .*\n {6}Timed out after 10\.000s\.\n {6}Expected\n/);
    assert.match(failing[0]!, /to equal\n {10}<bool>: true \(test\/e2e\/apps\/v1alpha1\/pullimages\.go:174\)$/);
    assert.equal(failing.at(-1), 'FAIL: 0 passed, 1 failed (0 known, not ours), 0 not selected; 65 s');
  });

  it('refuses what is not a ginkgo report', () => {
    assert.throws(() => readE2eReport('{}'), /an array of suite reports/);
    assert.throws(() => readE2eReport('[1]'), /not an object/);
  });
});
