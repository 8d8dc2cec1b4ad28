// What `npm run dev` writes and prints: dev.env sources the cluster's env file and puts the plugin on PATH, with
// every value shell-quoted, and refuses to be sourced once dev is gone; the plugin wrapper runs the given Node; the
// guide names only example files that exist; everything dev writes is in the cluster directory and goes at teardown.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../../src/util/repo-root.js';
import {
  agentList,
  devGuide,
  devPaths,
  prepareDevFiles,
  removeDevFiles,
  writeDevFiles,
  type DevSetup,
} from '../../cluster/dev-guide.js';

describe('npm run dev: dev.env, the plugin wrapper and the guide', () => {
  let dir: string;
  let setup: DevSetup;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "kd dev 'guide"));
    writeFileSync(join(dir, 'env'), 'export REGISTRY=127.0.0.1:5000\nexport NODE_NAME=kd-node-1\n');
    setup = {
      clusterDir: dir,
      nodes: ['kd-node-1', 'kd-node-2'],
      agentUrls: new Map([
        ['kd-node-1', 'http://127.0.0.1:10221'],
        ['kd-node-2', 'http://127.0.0.1:10222'],
      ]),
      controllerUrl: 'http://127.0.0.1:8000',
      // this test's process stands for dev: its command line holds "node"
      owner: { pid: process.pid, script: 'node' },
      pluginEntry: join(dir, 'plugin.js'),
      nodePath: process.execPath,
      podIpam: 'kruise-ipam',
      examplesDir: join(packageRoot(), 'examples'),
      registry: '127.0.0.1:5000',
      firstNode: 'kd-node-1',
    };
    writeFileSync(setup.pluginEntry, 'console.log(JSON.stringify(process.argv.slice(2)));\n');
  });

  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('dev.env gives a shell the cluster variables, the kubectl cache, the plugin on PATH and the agents', () => {
    const envFile = writeDevFiles(setup);
    const out = execFileSync(
      'bash',
      [
        '-c',
        `. "$1" && echo "$REGISTRY|$KUBECACHEDIR|$KRUISE_NODE_AGENTS" && command -v kubectl-kruise_node`,
        '_',
        envFile,
      ],
      { encoding: 'utf8' },
    ).split('\n');
    assert.equal(out[0], `127.0.0.1:5000|${devPaths(dir).kubectlCacheDir}|${agentList(setup)}`);
    assert.equal(out[1], join(dir, 'bin', 'kubectl-kruise_node'));
    assert.equal(agentList(setup), 'kd-node-1=http://127.0.0.1:10221,kd-node-2=http://127.0.0.1:10222');
  });

  it('dev.env refuses to be sourced once npm run dev is gone, saying it is stale', () => {
    const gone = spawnSync('true').pid;
    const envFile = writeDevFiles({ ...setup, owner: { pid: gone, script: 'node' } });
    const sourced = spawnSync('bash', ['-c', '. "$1" && echo "sourced $REGISTRY"', '_', envFile], { encoding: 'utf8' });
    assert.equal(sourced.status, 1, sourced.stdout + sourced.stderr);
    assert.equal(sourced.stdout, '');
    assert.match(sourced.stderr, new RegExp(`dev\\.env is stale: npm run dev \\(pid ${gone}\\) is no longer running`));
    const run = spawnSync('sh', [envFile], { encoding: 'utf8' });
    assert.equal(run.status, 1, 'run instead of sourced: exits 1');
  });

  it('keeps the kubectl cache and the webhook certificates in a private directory of the cluster dir', () => {
    const paths = devPaths(dir);
    prepareDevFiles(dir);
    assert.equal(statSync(paths.stateDir).mode & 0o777, 0o700);
    for (const inside of [paths.kubectlCacheDir, paths.webhookCertDir]) {
      assert.ok(inside.startsWith(`${paths.stateDir}/`), inside);
    }
    for (const path of Object.values(paths)) assert.ok(path.startsWith(`${dir}/`), path);
  });

  it('removes everything it wrote at teardown, and leftovers of a dev that died before it starts again', () => {
    prepareDevFiles(dir);
    writeFileSync(join(devPaths(dir).stateDir, 'tls.key'), 'secret');
    writeDevFiles(setup);
    removeDevFiles(dir);
    assert.deepEqual(readdirSync(dir).sort(), ['env', 'plugin.js'], 'only what was there before');
    writeDevFiles(setup);
    prepareDevFiles(dir);
    assert.deepEqual(readdirSync(dir).sort(), ['dev', 'env', 'plugin.js'], 'a fresh start keeps no dev.env');
    assert.deepEqual(readdirSync(devPaths(dir).stateDir), []);
  });

  it('writes every example with the placeholders filled to $EXAMPLES', () => {
    writeDevFiles(setup);
    for (const file of readdirSync(join(packageRoot(), 'examples')).filter((f) => f.endsWith('.yaml'))) {
      const text = readFileSync(join(dir, 'examples', file), 'utf8');
      assert.doesNotMatch(text, /\$\{/, file);
      // only the plain pod that keeps its IP names its node; kube-scheduler places the others
      if (/nodeName:/.test(text)) assert.match(text, /nodeName: kd-node-1/, file);
      for (const m of text.matchAll(/image: (\S+)/g)) assert.match(m[1]!, /^127\.0\.0\.1:5000\/test\/busybox:/, file);
    }
  });

  it('installs the plugin under both kubectl names, running the given Node on the entry with the arguments', () => {
    writeDevFiles(setup);
    for (const name of ['kubectl-kruise_node', 'kubectl-kruise-node']) {
      const path = join(dir, 'bin', name);
      assert.ok(statSync(path).mode & 0o100, `${name} is executable`);
      assert.equal(execFileSync(path, ['ips', "it's"], { encoding: 'utf8' }).trim(), JSON.stringify(['ips', "it's"]));
    }
  });

  it('prints commands that name existing example files and the env file', () => {
    const guide = devGuide(setup, join(dir, 'dev.env'));
    assert.match(guide, new RegExp(`source ${join(dir, 'dev.env').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    const files = [...guide.matchAll(/(?:examples|\$EXAMPLES)\/([\w.-]+\.yaml)/g)].map((m) => m[1]!);
    assert.ok(files.length >= 3);
    for (const f of files) assert.ok(existsSync(join(packageRoot(), 'examples', f)), `examples/${f}`);
    assert.match(guide, /kd-node-2 {2}http:\/\/127\.0\.0\.1:10222\/metrics/);
    assert.ok(
      readFileSync(join(packageRoot(), 'README.md'), 'utf8').includes('## Try it'),
      'the README section it names',
    );
  });
});
