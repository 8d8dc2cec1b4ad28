// `--ipam-install-mode copy`: Node and the plugin are copied under <cni-bin-dir>/kruise-ipam.d and the wrapper runs
// that copy, so the plugin works on a host that cannot see the agent's files. Real files, a real Node binary.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installPluginBundled, installPluginCopy, pluginModules } from '../../../src/daemon/ipreservation/install.js';

describe('kruise-ipam install (copy mode, bundled and module tree)', function () {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'kruise-ipam-copy-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('bundles the plugin into one file, copies Node once, and the wrapper runs ADD on them', function () {
    const bdir = join(dir, 'bundled');
    const first = installPluginBundled(bdir, { copyNode: true });
    assert.deepEqual(
      [first.bundled, first.changed, first.entry],
      [true, true, join(bdir, 'kruise-ipam.d', 'kruise-ipam.mjs')],
    );
    assert.match(
      readFileSync(first.path, 'utf8'),
      new RegExp(`exec '${join(bdir, 'kruise-ipam.d', 'node')}' '${first.entry}'`),
    );
    assert.equal(installPluginBundled(bdir, { copyNode: true }).changed, false, 'nothing to do the second time');
    const r = spawnSync(first.path, [], {
      input: JSON.stringify({
        cniVersion: '1.0.0',
        name: 'bundled',
        ipam: { subnet: '10.67.0.0/24', dataDir: join(bdir, 'data') },
      }),
      env: { CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'c1', CNI_IFNAME: 'eth0', CNI_NETNS: '/x', PATH: '/usr/bin:/bin' },
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.equal((JSON.parse(r.stdout) as { ips: Array<{ address: string }> }).ips[0]!.address, '10.67.0.2/24');
  });

  it('copies Node and the plugin module tree once, and the installed wrapper runs ADD on its own copy', function () {
    const first = installPluginCopy(dir);
    assert.equal(first.changed, true);
    const wrapper = readFileSync(first.path, 'utf8');
    assert.match(
      wrapper,
      new RegExp(
        `exec '${join(dir, 'kruise-ipam.d', 'node')}' '${join(dir, 'kruise-ipam.d', 'lib')}/src/cli/kruise-ipam.js'`,
      ),
    );
    assert.equal(statSync(join(dir, 'kruise-ipam.d', 'node')).size, statSync(process.execPath).size);
    // every module the plugin imports, wherever it lives (src/cni and the src/util helpers it uses)
    assert.ok(pluginModules().includes('src/cni/store.js'));
    assert.ok(pluginModules().includes('src/util/error-message.js'));
    assert.equal(installPluginCopy(dir).changed, false, 'nothing to do the second time');

    const dataDir = join(dir, 'data');
    const r = spawnSync(first.path, [], {
      input: JSON.stringify({ cniVersion: '0.4.0', name: 'copied', ipam: { subnet: '10.66.0.0/24', dataDir } }),
      env: { CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'c1', CNI_IFNAME: 'eth0', CNI_NETNS: '/x', PATH: '/usr/bin:/bin' },
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), {
      cniVersion: '0.4.0',
      ips: [{ version: '4', address: '10.66.0.2/24', gateway: '10.66.0.1' }],
      routes: [],
      dns: {},
    });
  });
});
