import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { COMMANDS, commandsHelp, dispatch, route, type AgentMain, type Command } from '../../../src/daemon/commands.js';
import type { CommandIo } from '../../../src/daemon/command-io.js';

function captureIo(): { io: CommandIo; stdout: () => string; stderr: () => string } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let text = '';
  stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return {
    io: { stdin: new PassThrough(), stdout, stderr, env: {} },
    stdout: () => out,
    stderr: () => text,
  };
}

describe('command dispatcher', () => {
  const calls: Array<{ who: string; args: string[] }> = [];
  const loaded: string[] = [];
  const table: Command[] = ['cri', 'ipam'].map((name) => ({
    name,
    summary: `${name} tool`,
    load: () => {
      loaded.push(name);
      return Promise.resolve((args: string[]) => {
        calls.push({ who: name, args });
        return Promise.resolve(name === 'cri' ? 0 : 3);
      });
    },
  }));
  const agentHelp: string[] = [];
  const agent = (): Promise<AgentMain> => {
    loaded.push('agent');
    return Promise.resolve((args, _io, help) => {
      calls.push({ who: 'agent', args });
      agentHelp.push(help);
      return Promise.resolve(0);
    });
  };

  beforeEach(() => {
    calls.length = 0;
    loaded.length = 0;
    agentHelp.length = 0;
  });

  it('routes flags and no arguments to the agent', () => {
    assert.deepEqual(route([], table), { kind: 'agent', args: [] });
    assert.deepEqual(route(['--addr', ':1', 'x'], table), { kind: 'agent', args: ['--addr', ':1', 'x'] });
    assert.deepEqual(route(['help'], table), { kind: 'agent', args: ['--help'] });
  });

  it('routes a command name with the arguments after it', () => {
    const r = route(['ipam', 'ls', '--json'], table);
    assert.equal(r.kind, 'command');
    assert.deepEqual(r.kind === 'command' && [r.command.name, r.args], ['ipam', ['ls', '--json']]);
  });

  it('loads and runs only the chosen command and returns its exit code', async () => {
    const { io } = captureIo();
    assert.equal(await dispatch(['ipam', 'ls'], io, table, agent), 3);
    assert.deepEqual(loaded, ['ipam']);
    assert.deepEqual(calls, [{ who: 'ipam', args: ['ls'] }]);
  });

  it('runs the agent without loading any command, passing the commands help', async () => {
    const { io } = captureIo();
    assert.equal(await dispatch(['--addr', ':0'], io, table, agent), 0);
    assert.deepEqual(loaded, ['agent']);
    assert.deepEqual(calls, [{ who: 'agent', args: ['--addr', ':0'] }]);
    assert.equal(agentHelp[0], 'Commands:\n  cri   cri tool\n  ipam  ipam tool');
  });

  it('answers an unknown command with exit 2 and the list of commands', async () => {
    const { io, stderr } = captureIo();
    assert.equal(await dispatch(['frobnicate'], io, table, agent), 2);
    assert.deepEqual(loaded, []);
    assert.match(stderr(), /unknown command "frobnicate"; commands: cri, ipam/);
  });

  it('exits 1 with a message when a command cannot be loaded', async () => {
    const { io, stderr } = captureIo();
    const broken: Command[] = [{ name: 'cri', summary: '', load: () => Promise.reject(new Error('module missing')) }];
    assert.equal(await dispatch(['cri'], io, broken, agent), 1);
    assert.match(stderr(), /cannot load command cri: module missing/);
  });

  it('has the cri, ipam and pins commands in the real table, each loadable', async () => {
    assert.deepEqual(
      COMMANDS.map((c) => c.name),
      ['cri', 'ipam', 'pins'],
    );
    assert.match(commandsHelp(COMMANDS), /^Commands:\n {2}cri {3}/);
    for (const command of COMMANDS) assert.equal(typeof (await command.load()), 'function', command.name);
  });

  it('pins: usage errors exit 2 with the usage, --help exits 0', async () => {
    const pins = await COMMANDS.find((c) => c.name === 'pins')!.load();
    const bad = captureIo();
    assert.equal(await pins(['unpin-everything'], bad.io), 2);
    assert.match(bad.stderr(), /expected ls or release\nUsage: kruise-daemon pins ls\|release/);
    const flag = captureIo();
    assert.equal(await pins(['ls', '--force'], flag.io), 2);
    assert.match(flag.stderr(), /--force/);
    const help = captureIo();
    assert.equal(await pins(['--help'], help.io), 0);
    assert.match(help.stdout(), /apps\.kruise\.io\/pinned-by=kruise-daemon/);
  });
});
