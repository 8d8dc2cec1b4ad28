// README.md's shell blocks that tests run as written: each follows an HTML comment naming the test file.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../src/util/repo-root.js';

/** The first ```sh block after `marker` in the given README text. */
export function shBlockAfter(readme: string, marker: string): string {
  const at = readme.indexOf(marker);
  assert.ok(at >= 0, `README.md marks the block: ${marker}`);
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(at));
  assert.ok(block, `a sh block follows ${marker}`);
  return block[1]!;
}

/** The ```sh block of the repository's README.md marked with `<!-- <testFile> runs this block ... -->`. */
export function readmeBlock(testFile: string): string {
  return shBlockAfter(readFileSync(join(packageRoot(), 'README.md'), 'utf8'), `${testFile} runs this block`);
}

/** Run a bash script (`set -eo pipefail`) from the repository, without this process's cluster variables (the script
 * sources its own env file); stdout and stderr together. */
export function runScript(script: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env };
    for (const k of ['KUBECONFIG', 'KUBECACHEDIR', 'REGISTRY', 'NODE_NAME', 'KRUISE_NODE_AGENTS']) delete env[k];
    const child = spawn('bash', ['-c', `set -eo pipefail\n${script}`], { cwd: packageRoot(), env });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

/** What README's "Try it" block must print, on any cluster that runs it (npm run dev in either mode, a Helm install). */
export function assertTryItOutput(out: string): void {
  // 1. every node has the image
  assert.match(out, /imagepulljob default\/pull-busybox-\w+ complete: \S+\/test\/busybox:2\.0 is on 2 node\(s\)/);
  for (const node of ['kd-node-1', 'kd-node-2']) {
    assert.match(out, new RegExp(`${node}\\s+\\S+/test/busybox\\s+2\\.0\\s+Succeeded`), `${node} has busybox 2.0`);
  }
  // 2. the CRR completed and only app restarted
  assert.match(out, /containerrecreaterequest default\/crr-demo-\w+ completed: app recreated in place/);
  assert.match(out, /^app=1 sidecar=0\s*$/m);
  // 3. app started after config was ready
  const started = (name: string): number => {
    const m = new RegExp(`^${name} started (\\S+)$`, 'm').exec(out);
    assert.ok(m, `${name} start time printed`);
    return Date.parse(m[1]!);
  };
  assert.ok(started('app') - started('config') >= 2_000, 'app started at least 2 s after config (its probe)');
  // 4. web-0 recreated by the StatefulSet controller on the same node with the same IP, and the IPReused event
  const web0 = /^web-0 before: (\S+) (\S+), after: (\S+) (\S+)$/m.exec(out);
  assert.ok(web0, `node and IP of web-0 printed: ${out}`);
  const [, nodeBefore, ipBefore, nodeAfter, ipAfter] = web0;
  assert.match(nodeBefore!, /^kd-node-[12]$/);
  assert.match(ipBefore!, /^\d+\.\d+\.\d+\.\d+$/);
  assert.equal(nodeAfter, nodeBefore, 'web-0 came back on its node');
  assert.equal(ipAfter, ipBefore, 'web-0 got its IP back');
  assert.match(out, /IPReused\s+pod\/web-0\s+Pod got its reserved IP/);
  // the plugin read the agents' reservations (named by KRUISE_NODE_AGENTS, or found through their pods)
  const reused = new RegExp(`${nodeBefore!}\\s+\\S+\\s+\\d+\\s+\\d+\\s+[1-9]\\d*\\s+\\d+`);
  assert.match(out, reused, `ips shows a reused reservation on ${nodeBefore!}`);
  // `kruise-daemon ipam ls` reads kd-node-1's store ($IPAM_DATA_DIR): one web pod runs there
  assert.match(out, /^\S+\s+\d+\.\d+\.\d+\.\d+\s+\S+\s+default\/web-[01]\s/m, 'ipam ls lists a web pod');
}
