// The host's processes as /proc shows them, for tests that check what runs and what is left.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

export interface ProcessInfo {
  pid: number;
  argv: string[];
  env: Record<string, string>;
}

/** The fields of /proc/PID/stat after the command name: [state, ppid, ...]. */
function statFields(pid: string): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

function pids(): string[] {
  return readdirSync('/proc').filter((e) => /^\d+$/.test(e));
}

/** The live children of `parent`, with their command lines and environments (from /proc). */
export function childrenOf(parent: number): ProcessInfo[] {
  const children: ProcessInfo[] = [];
  for (const entry of pids()) {
    try {
      if (Number(statFields(entry)[1]) !== parent) continue;
      const split = (file: string): string[] =>
        readFileSync(`/proc/${entry}/${file}`, 'utf8').split('\0').filter(Boolean);
      const env = Object.fromEntries(
        split('environ').map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
      );
      children.push({ pid: Number(entry), argv: split('cmdline'), env });
    } catch {
      // gone meanwhile
    }
  }
  return children;
}

/** A process as it is identified across time: its PID and start time (a PID alone may be reused). */
export interface ProcessId {
  pid: number;
  startTicks: string;
  argv: string;
}

/** Every live process whose mount namespace is `mountNamespace` (`mnt:[4026532...]`), and their descendants. */
export function processesIn(mountNamespace: string): ProcessId[] {
  const all = new Map<number, { ppid: number; id: ProcessId; mnt: string }>();
  for (const entry of pids()) {
    try {
      const fields = statFields(entry);
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
      all.set(Number(entry), {
        ppid: Number(fields[1]),
        id: { pid: Number(entry), startTicks: fields[19] ?? '', argv },
        mnt: readlinkSync(`/proc/${entry}/ns/mnt`),
      });
    } catch {
      // gone meanwhile, or a kernel thread
    }
  }
  const inside = new Set([...all.values()].filter((p) => p.mnt === mountNamespace).map((p) => p.id.pid));
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, p] of all) {
      if (!inside.has(pid) && inside.has(p.ppid)) {
        inside.add(pid);
        grew = true;
      }
    }
  }
  return [...inside].map((pid) => all.get(pid)!.id);
}

/**
 * Those of `processes` still running (the same PID with the same start time, not a zombie: a killed process whose
 * parent died is reparented to PID 1, and until PID 1 reaps it, which here can take seconds, it stays in /proc).
 */
export function stillRunning(processes: ProcessId[]): ProcessId[] {
  return processes.filter((p) => {
    try {
      const fields = statFields(String(p.pid));
      return fields[19] === p.startTicks && fields[0] !== 'Z' && fields[0] !== 'X';
    } catch {
      return false;
    }
  });
}
