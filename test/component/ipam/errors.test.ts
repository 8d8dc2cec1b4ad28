// Bad input to the real plugin process, one case per row: every failure is one CNI error object on stdout with the
// spec's code (SPEC.md "Error": 1 version, 4 environment, 5 I/O, 6 decoding, 7 network configuration; 100+ ours) and a
// message that names the field and the path, at most one line on stderr, exit status 1, and the process ends by
// itself: the harness kills it at a deadline and the case fails when it had to.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPluginProcess } from './plugin-process.js';

/** Far above a plugin start on a loaded machine (about 1 s), far below the lock's 20 s wait. */
const DEADLINE_MS = 10_000;

interface Case {
  title: string;
  code: number;
  /** What the message must contain: the field, and the path where one is involved. */
  names: readonly string[];
  env?: Record<string, string>;
  /** The network configuration, or a function of the case's own directory. */
  conf?: unknown;
  prefix?: readonly string[];
  /** The error's cniVersion: the configuration's (default 1.0.0, also when stdin says none). */
  version?: string;
}

describe('kruise-ipam bad input (real plugin processes)', function () {
  let base: string;
  before(() => (base = mkdtempSync(join(tmpdir(), 'kruise-ipam-errors-'))));
  after(() => {
    chmodSync(join(base, 'readonly'), 0o755);
    rmSync(base, { recursive: true, force: true });
  });

  const ENV = { CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'c1', CNI_IFNAME: 'eth0', CNI_NETNS: '/var/run/netns/x' };
  const conf = (over: Record<string, unknown> = {}, ipam: Record<string, unknown> = {}) => ({
    cniVersion: '1.0.0',
    name: 'errs',
    ipam: { type: 'kruise-ipam', subnet: '10.77.0.0/24', dataDir: join(base, 'store'), ...ipam },
    ...over,
  });
  const withoutEnv = (name: keyof typeof ENV) => Object.fromEntries(Object.entries(ENV).filter(([k]) => k !== name));

  function cases(): Case[] {
    const file = join(base, 'a-file');
    writeFileSync(file, 'not a directory');
    symlinkSync(join(base, 'nowhere'), join(base, 'dangling'));
    mkdirSync(join(base, 'readonly'), { mode: 0o555 });
    // a stray directory where the lock keeps an owner file; a directory where the state file belongs
    mkdirSync(join(base, 'odd-lock', 'errs', 'lock.d', 'g1'), { recursive: true });
    mkdirSync(join(base, 'odd-state', 'errs', 'state.json'), { recursive: true });
    mkdirSync(join(base, 'corrupt', 'errs'), { recursive: true });
    writeFileSync(join(base, 'corrupt', 'errs', 'state.json'), '{"version":');
    const long = (n: number) => 'n'.repeat(n);
    return [
      { title: 'network name of 300 characters', code: 7, names: ['name'], conf: conf({ name: long(300) }) },
      { title: 'network name of 5,000 characters', code: 7, names: ['name'], conf: conf({ name: long(5000) }) },
      { title: 'network name with a slash', code: 7, names: ['name'], conf: conf({ name: 'a/b' }) },
      { title: 'dataDir relative', code: 7, names: ['ipam.dataDir'], conf: conf({}, { dataDir: 'rel/dir' }) },
      {
        title: 'dataDir with a component of 300 characters',
        code: 7,
        names: ['ipam.dataDir'],
        conf: conf({}, { dataDir: join(base, long(300)) }),
      },
      {
        title: 'dataDir of 5,000 characters',
        code: 7,
        names: ['ipam.dataDir'],
        conf: conf({}, { dataDir: `/${'d/'.repeat(2500)}` }),
      },
      { title: 'dataDir with a NUL byte', code: 7, names: ['ipam.dataDir'], conf: conf({}, { dataDir: '/tmp/a\0b' }) },
      { title: 'dataDir that is a file', code: 5, names: ['ipam.dataDir', file], conf: conf({}, { dataDir: file }) },
      {
        title: 'dataDir under a file',
        code: 5,
        names: ['ipam.dataDir', file],
        conf: conf({}, { dataDir: join(file, 'sub') }),
      },
      {
        title: 'dataDir under /proc',
        code: 5,
        names: ['ipam.dataDir', '/proc/kruise-ipam-test'],
        conf: conf({}, { dataDir: '/proc/kruise-ipam-test/store' }),
      },
      {
        title: 'dataDir under /sys',
        code: 5,
        names: ['ipam.dataDir', '/sys/kruise-ipam-test'],
        conf: conf({}, { dataDir: '/sys/kruise-ipam-test/store' }),
      },
      {
        title: 'dataDir under a dangling symlink',
        code: 5,
        names: ['ipam.dataDir', join(base, 'dangling')],
        conf: conf({}, { dataDir: join(base, 'dangling', 'store') }),
      },
      {
        // an unmapped user namespace: the same kernel uid, no capability over the host's files (no DAC override)
        title: 'dataDir not writable',
        code: 5,
        names: ['ipam.dataDir', join(base, 'readonly')],
        conf: conf({}, { dataDir: join(base, 'readonly', 'store') }),
        prefix: ['unshare', '--user'],
      },
      {
        title: 'a directory where the lock keeps an owner file',
        code: 5,
        names: ['ipam.dataDir', join(base, 'odd-lock', 'errs', 'lock.d', 'g1')],
        conf: conf({}, { dataDir: join(base, 'odd-lock') }),
      },
      {
        title: 'a directory where the state file belongs',
        code: 5,
        names: ['ipam.dataDir', join(base, 'odd-state', 'errs', 'state.json')],
        conf: conf({}, { dataDir: join(base, 'odd-state') }),
      },
      {
        title: 'a torn state file',
        code: 101,
        names: [join(base, 'corrupt', 'errs', 'state.json')],
        conf: conf({}, { dataDir: join(base, 'corrupt') }),
      },
      { title: 'no ranges', code: 7, names: ['ipam'], conf: conf({}, { subnet: undefined }) },
      { title: 'a bad subnet', code: 7, names: ['ipam.ranges[0][0].subnet'], conf: conf({}, { subnet: '10.0.0/8' }) },
      {
        title: 'unsupported cniVersion',
        code: 1,
        names: ['cniVersion'],
        conf: conf({ cniVersion: '9.9.9' }),
        version: '9.9.9',
      },
      { title: 'stdin not JSON', code: 6, names: ['stdin'], conf: '{"cniVersion":' },
      { title: 'stdin not an object', code: 6, names: ['network configuration'], conf: '[1,2]' },
      { title: 'no CNI_COMMAND', code: 4, names: ['CNI_COMMAND'], env: withoutEnv('CNI_COMMAND') },
      { title: 'unknown CNI_COMMAND', code: 4, names: ['CNI_COMMAND'], env: { ...ENV, CNI_COMMAND: 'ATTACH' } },
      { title: 'no CNI_CONTAINERID', code: 4, names: ['CNI_CONTAINERID'], env: withoutEnv('CNI_CONTAINERID') },
      {
        title: 'CNI_CONTAINERID with a slash',
        code: 4,
        names: ['CNI_CONTAINERID'],
        env: { ...ENV, CNI_CONTAINERID: '../x' },
      },
      {
        title: 'CNI_CONTAINERID of 5,000 characters',
        code: 4,
        names: ['CNI_CONTAINERID'],
        env: { ...ENV, CNI_CONTAINERID: `-${long(4999)}` },
      },
      { title: 'no CNI_IFNAME', code: 4, names: ['CNI_IFNAME'], env: withoutEnv('CNI_IFNAME') },
      {
        title: 'CNI_IFNAME longer than IFNAMSIZ',
        code: 4,
        names: ['CNI_IFNAME'],
        env: { ...ENV, CNI_IFNAME: 'eth0123456789abc' },
      },
      { title: 'no CNI_NETNS for ADD', code: 4, names: ['CNI_NETNS'], env: withoutEnv('CNI_NETNS') },
      { title: 'CNI_ARGS not KEY=VALUE', code: 4, names: ['CNI_ARGS'], env: { ...ENV, CNI_ARGS: 'IgnoreUnknown' } },
      {
        title: 'CNI_ARGS with a bad namespace',
        code: 4,
        names: ['CNI_ARGS', 'K8S_POD_NAMESPACE'],
        env: { ...ENV, CNI_ARGS: `K8S_POD_NAMESPACE=${long(5000).toUpperCase()};K8S_POD_NAME=a` },
      },
      {
        title: 'GC without valid-attachments',
        code: 7,
        names: ['cni.dev/valid-attachments'],
        env: { CNI_COMMAND: 'GC' },
      },
    ];
  }

  it('answers every bad input with one CNI error object, the spec code, the field and the path, and ends', async function () {
    const failures: string[] = [];
    for (const c of cases()) {
      const r = await runPluginProcess({
        env: c.env ?? ENV,
        stdin: c.conf ?? conf(),
        killAfterMs: DEADLINE_MS,
        ...(c.prefix ? { prefix: c.prefix } : {}),
      });
      const problems: string[] = [];
      if (r.killed) problems.push(`still running after ${DEADLINE_MS} ms (killed)`);
      if (r.code !== 1) problems.push(`exit status ${r.code}`);
      const lines = r.stdout.split('\n').filter((l) => l !== '');
      let body: Record<string, unknown> | undefined;
      try {
        body = lines.length === 1 ? (JSON.parse(lines[0]!) as Record<string, unknown>) : undefined;
      } catch {
        body = undefined;
      }
      if (!body) problems.push(`stdout is not one JSON object: ${JSON.stringify(r.stdout.slice(0, 300))}`);
      else {
        const keys = Object.keys(body).filter((k) => !['cniVersion', 'code', 'msg', 'details'].includes(k));
        if (keys.length) problems.push(`unexpected keys ${keys.join(',')}`);
        if (body.cniVersion !== (c.version ?? '1.0.0')) problems.push(`cniVersion ${JSON.stringify(body.cniVersion)}`);
        if (body.code !== c.code) problems.push(`code ${String(body.code)}, expected ${c.code}`);
        const msg = typeof body.msg === 'string' ? body.msg : '';
        for (const name of c.names) if (!msg.includes(name)) problems.push(`msg does not name ${name}`);
        if (msg.length > 600) problems.push(`msg of ${msg.length} characters`);
        if (problems.length) problems.push(`msg: ${msg.slice(0, 300)}`);
      }
      const errLines = r.stderr.split('\n').filter((l) => l !== '');
      if (errLines.length > 1) problems.push(`${errLines.length} lines on stderr: ${r.stderr.slice(0, 300)}`);
      if (problems.length) failures.push(`${c.title}: ${problems.join('; ')}`);
    }
    assert.deepEqual(failures, []);
  });
});
