// README.md's "Try it" block, run as written with bash and the real kubectl against `npm run dev` (test/cluster/dev.ts
// as a process, on a cluster directory of its own: real Kubernetes), and its output checked: an image pulled on every
// node, a container recreated in place by the real kubelet, a launch order enforced, a StatefulSet pod recreated by
// the StatefulSet controller on its node with its IP. The agents run with the DaemonSet's
// heap flags, and what dev writes stays inside the cluster directory. Ctrl-C (SIGINT to the whole process group, as
// a terminal sends it) then tears it down: exit 0, every process stopped cleanly, nothing left that looks live, no
// temporary file left; the test then purges the cluster directory.
// Twice: as `npm run dev` (our agents and controller as host processes) and as `npm run dev -- --in-cluster`
// (deploy/overlays/ip-retention with the image the cluster built: the DaemonSet and the Deployment, no host process).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageRoot } from '../../../src/util/repo-root.js';
import { downCluster } from '../../cluster/components.js';
import { daemonSetNodeOptions } from '../../cluster/deployed-agent.js';
import { parseEnvFile } from '../../cluster/env-file.js';
import { childrenOf } from '../../support/processes.js';
import { assertTryItOutput, readmeBlock, runScript } from '../../support/readme.js';
import { waitFor } from '../../support/wait.js';

const DEV = fileURLToPath(new URL('../../cluster/dev.js', import.meta.url));

for (const inCluster of [false, true]) describeReadme(inCluster);

function describeReadme(inCluster: boolean): void {
  const CLUSTER_DIR = join(packageRoot(), inCluster ? '.cluster-readme-in-cluster' : '.cluster-readme-examples');
  const inClusterDir = (path: string | undefined): boolean => Boolean(path?.startsWith(`${CLUSTER_DIR}/`));
  describe(`README's example commands against npm run dev${inCluster ? ' -- --in-cluster' : ''}`, function () {
    this.timeout(20 * 60_000); // a cold machine builds Kubernetes first (about 8 minutes)
    let dev: ChildProcess | undefined;
    let devLog = '';

    /** TMPDIR of dev and everything it starts: empty again after teardown. */
    let devTmp = '';

    before(async () => {
      devTmp = mkdtempSync(join(tmpdir(), 'kd-readme-examples-tmp-'));
      dev = spawn(process.execPath, [DEV, ...(inCluster ? ['--in-cluster'] : [])], {
        env: { ...process.env, CLUSTER_DIR, LOG_LEVEL: 'warn', TMPDIR: devTmp },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true, // a process group of its own, as in a terminal: Ctrl-C reaches dev and its children
      });
      dev.stdout!.on('data', (c: Buffer) => (devLog += c.toString()));
      dev.stderr!.on('data', (c: Buffer) => (devLog += c.toString()));
      await waitFor(
        () => {
          if (dev?.exitCode !== null) throw new Error(`npm run dev exited: ${devLog}`);
          return devLog.includes('[dev] ready');
        },
        { timeoutMs: 15 * 60_000, intervalMs: 200, message: `npm run dev ready; log so far:\n${devLog}` },
      );
    });

    after(async () => {
      try {
        if (dev && dev.exitCode === null && dev.signalCode === null) {
          const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
            dev!.once('exit', (code, signal) => resolve([code, signal])),
          );
          process.kill(-dev.pid!, 'SIGINT'); // Ctrl-C in dev's terminal: the whole process group gets SIGINT
          const [code, signal] = await exited;
          assert.match(devLog, /\[dev\] all down/);
          assert.deepEqual([code, signal], [0, null], `npm run dev exits 0 on Ctrl-C; log:\n${devLog}`);
          const exits = [...devLog.matchAll(/^(\S+) exited \((\S+)\)$/gm)].map((m) => `${m[1]} ${m[2]}`);
          assert.deepEqual(
            exits.filter((e) => !e.endsWith(' 0')),
            [],
            `every agent and the controller stop cleanly: ${exits.join(', ')}`,
          );
          assert.equal(exits.length, inCluster ? 0 : 3, `two agents and the controller exited: ${exits.join(', ')}`);
          for (const left of ['dev.env', 'dev', 'bin', 'examples', 'in-cluster']) {
            assert.ok(!existsSync(join(CLUSTER_DIR, left)), `${left} is gone from the cluster directory`);
          }
          assert.deepEqual(readdirSync(devTmp), [], 'nothing left in TMPDIR');
        }
      } finally {
        if (devTmp) rmSync(devTmp, { recursive: true, force: true });
        await downCluster({ dir: CLUSTER_DIR, log: () => undefined, purge: true });
      }
      assert.ok(!existsSync(CLUSTER_DIR), `${CLUSTER_DIR} is purged`);
    });

    it('installs the agents and the controller in the cluster: no host process, its files in the cluster dir', function () {
      if (!inCluster) this.skip();
      // dev's children are the cluster's own daemons (it ran `up` in-process): none of them is ours
      const ours = childrenOf(dev!.pid!).filter((p) =>
        p.argv.some((a) => /\/(kruise-daemon|kruise-controller)(\.js)?$/.test(a)),
      );
      assert.deepEqual(
        ours.map((p) => p.argv.join(' ')),
        [],
        'dev runs nothing of ours on the host',
      );
      const devEnvText = readFileSync(join(CLUSTER_DIR, 'dev.env'), 'utf8');
      assert.doesNotMatch(
        devEnvText,
        /KRUISE_NODE_AGENTS|KRUISE_CONTROLLER_URL/,
        'the plugin finds the agents by itself',
      );
      assert.ok(existsSync(join(CLUSTER_DIR, 'in-cluster', 'kustomization.yaml')), 'the kustomization it applied');
      assert.match(devLog, /in-cluster: cluster up in [\d.]+ s; applied \S+kruise-daemon:\S+, all pods Ready/);
    });

    it('runs the agents as deployed and keeps its files (the webhook key, the kubectl cache) in the cluster dir', function () {
      if (inCluster) this.skip();
      const processes = childrenOf(dev!.pid!);
      const agents = processes.filter((p) => p.argv.some((a) => a.endsWith('/kruise-daemon.js')));
      assert.equal(agents.length, 2, JSON.stringify(processes.map((p) => p.argv)));
      for (const agent of agents) assert.equal(agent.env.NODE_OPTIONS, daemonSetNodeOptions(), agent.argv.join(' '));
      const controller = processes.find((p) => p.argv.some((a) => a.endsWith('/kruise-controller.js')));
      assert.ok(controller, 'the controller runs');
      const certDir = controller.argv[controller.argv.indexOf('--webhook-cert-dir') + 1];
      assert.ok(inClusterDir(certDir), `the webhook certificates (${certDir}) are in ${CLUSTER_DIR}`);
      const devEnv = parseEnvFile(
        readFileSync(join(CLUSTER_DIR, 'dev.env'), 'utf8')
          .split('\n')
          .filter((l) => l.startsWith('export ') && !l.startsWith('export PATH='))
          .join('\n'),
      );
      assert.ok(inClusterDir(devEnv.KUBECACHEDIR), `the kubectl cache (${devEnv.KUBECACHEDIR}) is in ${CLUSTER_DIR}`);
    });

    it('shows an image pulled on every node, a container recreated in place, a launch order, an IP kept', async () => {
      const block = readmeBlock('test/e2e/operate/readme-examples.test.ts');
      const script = block.replace('source .cluster/dev.env', `source ${CLUSTER_DIR}/dev.env`);
      assert.notEqual(script, block, 'the block sources .cluster/dev.env');
      const { code, out } = await runScript(script);
      assert.equal(code, 0, out);

      assertTryItOutput(out);
    });

    it('the plugin on the same cluster: JSON output, bad input and failures answered with exit codes 1 and 2', async () => {
      const env = `source ${CLUSTER_DIR}/dev.env\n`;
      const json = await runScript(`${env}kubectl kruise-node nodeimages --node kd-node-2 -o json`);
      assert.equal(json.code, 0, json.out);
      const rows = JSON.parse(json.out.slice(json.out.indexOf('['))) as { node: string; tag: string; phase: string }[];
      assert.ok(
        rows.some((r) => r.node === 'kd-node-2' && r.tag === '2.0' && r.phase === 'Succeeded'),
        json.out,
      );

      const ordered = await runScript(
        `${env}kubectl kruise-node recreate crr-demo -c sidecar -c app --ordered -o json`,
      );
      assert.equal(ordered.code, 0, ordered.out);
      const crr = JSON.parse(ordered.out.slice(ordered.out.indexOf('{'))) as {
        spec: { strategy?: { orderedRecreate?: boolean } };
        status: { phase: string; containerRecreateStates: { name: string; phase: string }[] };
      };
      assert.equal(crr.spec.strategy?.orderedRecreate, true);
      assert.equal(crr.status.phase, 'Completed');
      assert.deepEqual(
        crr.status.containerRecreateStates.map((c) => `${c.name}=${c.phase}`),
        ['sidecar=Succeeded', 'app=Succeeded'],
      );

      const missing = await runScript(`${env}kubectl kruise-node recreate crr-demo -c nope`);
      assert.equal(missing.code, 1);
      assert.match(missing.out, /pod default\/crr-demo has no container nope \(its containers: app, sidecar\)/);
      const bad = await runScript(`${env}kubectl kruise-node pull 'Not An Image'`);
      assert.equal(bad.code, 2);
      assert.match(bad.out, /IMAGE: /);

      const unknownNode = await runScript(`${env}kubectl kruise-node ips --node kd-node-9`);
      assert.equal(unknownNode.code, 1, unknownNode.out);
      assert.match(unknownNode.out, /node kd-node-9 not found/);
      // a pull no node can do ends with each node's reason, from its NodeImage
      const unpullable = await runScript(
        `${env}kubectl kruise-node pull $REGISTRY/test/nope:1.0 --nodes kd-node-1 --timeout 3m`,
      );
      assert.equal(unpullable.code, 1, unpullable.out);
      assert.match(unpullable.out, /failed on 1 of 1 node\(s\)/);
      assert.match(unpullable.out, /^ {2}kd-node-1: Failed: \S.*$/m);
    });
  });
}
