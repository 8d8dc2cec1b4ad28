// SIGKILL of the plugin at random points of ADD and DEL, many processes at once: no address is ever handed to two
// live attachments, and after the runtime's retries plus a GC nothing is leaked and nothing live is lost.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RESERVED_IP_DURATION_ANNOTATION } from '../../../src/cni/config.js';
import { readState, storePaths } from '../../../src/cni/store.js';
import { runPluginProcess, type PluginRun } from './plugin-process.js';

const NETWORK = 'crash';
/** A call that is not killed on purpose still has a deadline (the lock waits at most 20 s). */
const DEADLINE_MS = 60_000;

function runPlugin(
  dataDir: string,
  command: string,
  id: string,
  pod: string,
  annotations: Record<string, string>,
  killAfterMs: number | undefined,
  extra: Record<string, unknown> = {},
): Promise<PluginRun> {
  const conf = {
    cniVersion: '1.1.0',
    name: NETWORK,
    ipam: { type: 'kruise-ipam', ranges: [[{ subnet: '10.250.0.0/24' }]], dataDir },
    runtimeConfig: { 'io.kubernetes.cri.pod-annotations': annotations },
    ...extra,
  };
  return runPluginProcess({
    env: {
      CNI_COMMAND: command,
      CNI_CONTAINERID: id,
      CNI_IFNAME: 'eth0',
      CNI_NETNS: command === 'DEL' ? '' : '/var/run/netns/none',
      CNI_ARGS: `IgnoreUnknown=1;K8S_POD_NAMESPACE=crash;K8S_POD_NAME=${pod};K8S_POD_UID=uid-${id}`,
    },
    stdin: conf,
    killAfterMs: killAfterMs ?? DEADLINE_MS,
  });
}

describe('kruise-ipam under SIGKILL at random points (real plugin processes)', function () {
  let dataDir: string;
  before(() => (dataDir = mkdtempSync(join(tmpdir(), 'kruise-ipam-crash-'))));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('never hands out an address twice, never loses a live one, leaks nothing after retries and GC', async function () {
    const live = new Map<string, string>(); // attachment -> ip, from ADDs that returned a result
    const deleting = new Set<string>(); // DELs that were killed: the runtime retries them
    const podOf = new Map<string, string>();
    const annotated = new Set<string>();
    const duplicates: string[] = [];
    let kills = 0;
    let seq = 0;
    const ROUNDS = 30;
    const PARALLEL = 4;

    const one = async (): Promise<void> => {
      const liveIds = [...live.keys()].filter((id) => !deleting.has(id));
      const doDel = liveIds.length > 0 && Math.random() < 0.4;
      // node needs ~40 ms to start: most kills land in the plugin's own work (lock, read, write, rename, print)
      const kill = Math.random() < 0.6 ? 25 + Math.floor(Math.random() * 60) : undefined;
      if (doDel) {
        const id = liveIds[Math.floor(Math.random() * liveIds.length)]!;
        deleting.add(id);
        const r = await runPlugin(dataDir, 'DEL', id, podOf.get(id)!, {}, kill);
        if (r.signal) kills++;
        if (r.code === 0) {
          live.delete(id);
          deleting.delete(id);
        }
        return;
      }
      const id = `c${String(seq++).padStart(4, '0')}`;
      const pod = `p-${id}`;
      podOf.set(id, pod);
      const reserve = Math.random() < 0.3;
      if (reserve) annotated.add(pod);
      const r = await runPlugin(
        dataDir,
        'ADD',
        id,
        pod,
        reserve ? { [RESERVED_IP_DURATION_ANNOTATION]: '10' } : {},
        kill,
      );
      if (r.signal) kills++;
      if (r.code === 0) {
        const ip = (JSON.parse(r.stdout) as { ips: Array<{ address: string }> }).ips[0]!.address.split('/')[0]!;
        for (const [other, otherIp] of live) if (otherIp === ip) duplicates.push(`${ip}: ${other} and ${id}`);
        live.set(id, ip);
      }
    };

    for (let round = 0; round < ROUNDS; round++) {
      await Promise.all(Array.from({ length: PARALLEL }, one));
    }
    assert.deepEqual(duplicates, [], 'no address held by two live attachments');
    assert.ok(kills > 10, `enough kills landed (${kills})`);

    // the runtime retries the DELs that failed (kubelet retries StopPodSandbox until it succeeds)
    for (const id of deleting) {
      const r = await runPlugin(dataDir, 'DEL', id, podOf.get(id)!, {}, undefined);
      assert.equal(r.code, 0, r.stdout);
      live.delete(id);
    }
    // killed ADDs the runtime never saw succeed: GC with the attachments the runtime has
    const gc = await runPlugin(dataDir, 'GC', 'gc', 'gc', {}, undefined, {
      'cni.dev/valid-attachments': [...live.keys()].map((id) => ({ containerID: id, ifname: 'eth0' })),
    });
    assert.equal(gc.code, 0, gc.stdout);

    const state = readState(storePaths(dataDir, NETWORK));
    const held = Object.entries(state.entries)
      .filter(([, e]) => e.kind === 'held')
      .map(([ip, e]) => `${e.kind === 'held' ? e.containerId : ''} ${ip}`)
      .sort();
    assert.deepEqual(
      held,
      [...live].map(([id, ip]) => `${id} ${ip}`).sort(),
      'the store holds exactly the live attachments, at the addresses they were given',
    );
    for (const e of Object.values(state.entries)) {
      if (e.kind === 'reserved') assert.ok(annotated.has(e.pod.name), `${e.pod.name} asked for a reservation`);
    }
    // the lock is free and its directory small
    const last = await runPlugin(dataDir, 'ADD', 'final', 'final', {}, undefined);
    assert.equal(last.code, 0, last.stdout);
    const lockFiles = readdirSync(storePaths(dataDir, NETWORK).lockDir);
    assert.ok(lockFiles.length <= 4, lockFiles.join(' '));
  });
});
