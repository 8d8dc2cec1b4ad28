// ensureDaemon, the start/keep/restart logic behind the registries and containerd, on a stand-in daemon (sh).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ensureDaemon, type DaemonDefinition } from '../../cluster/runtime/daemon.js';
import { isAlive, readPidFile, stopDaemon } from '../../cluster/runtime/processes.js';

describe('local cluster: managed daemons', () => {
  let dir: string;
  let definition: (configText: string) => DaemonDefinition;

  before(() => {
    dir = mkdtempSync('/tmp/kd-daemon-test-');
    const configFile = join(dir, 'stand-in.conf');
    definition = (configText) => ({
      name: 'stand-in',
      command: 'sh',
      // the config path is $0 of the script, so it shows in the command line and marks the process as ours
      args: ['-c', "trap 'kill $! 2>/dev/null; exit 0' TERM; sleep 600 & wait", configFile],
      configFile,
      configText,
      pidFile: join(dir, 'stand-in.pid'),
      logFile: join(dir, 'stand-in.log'),
      stopGraceMs: 5_000,
    });
  });

  after(async () => {
    await stopDaemon(join(dir, 'stand-in.pid'), join(dir, 'stand-in.conf'));
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts once, keeps a running daemon with the same config, restarts it when the config changes', async () => {
    const first = await ensureDaemon(definition('a=1\n'), () => undefined);
    assert.equal(first.started, true);
    assert.ok(isAlive(first.pid));
    assert.equal(await readPidFile(join(dir, 'stand-in.pid')), first.pid);

    const again = await ensureDaemon(definition('a=1\n'), () => undefined);
    assert.deepEqual(again, { pid: first.pid, started: false });

    const changed = await ensureDaemon(definition('a=2\n'), () => undefined);
    assert.equal(changed.started, true);
    assert.notEqual(changed.pid, first.pid);
    assert.equal(isAlive(first.pid), false);

    const stopped = await stopDaemon(join(dir, 'stand-in.pid'), join(dir, 'stand-in.conf'));
    assert.equal(stopped, changed.pid);
    assert.equal(isAlive(changed.pid), false);
    assert.equal(await stopDaemon(join(dir, 'stand-in.pid'), join(dir, 'stand-in.conf')), undefined, 'nothing left');
  });

  it('never signals a PID whose command line is not ours', async () => {
    const pidFile = join(dir, 'foreign.pid');
    const { writeFile } = await import('node:fs/promises');
    await writeFile(pidFile, `${process.pid}\n`); // this test process: alive, but not the daemon
    assert.equal(await stopDaemon(pidFile, join(dir, 'stand-in.conf')), undefined);
    assert.ok(isAlive(process.pid));
  });
});
