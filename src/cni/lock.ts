// A cross-process lock for one network's store, correct with any number of plugin processes and with SIGKILL at
// any instruction. Node has no flock(2), so the lock is a sequence of generation files in a directory:
//
//   lock.d/g<N>   immutable once created; content = the owner's identity (pid, start time, pid namespace) or "free"
//
// The holder is the owner of the highest generation. To acquire: list the directory; if the highest g<N> is
// "free" or its owner is dead (no /proc/<pid>, state Z or X, or another start time = a recycled PID), create
// g<N+1> with link(2) from a fully written temp file. link fails with EEXIST when another process won the same
// step, so moving from generation N to N+1 is a compare-and-swap. After the link, list again: if a generation above
// ours exists, our file was created from a stale view (its name had been cleaned up) and is withdrawn.
// Release = create g<N+1> "free". Old generations below N-1 are removed by the next holder; temp files of dead
// processes too. A process killed at any point leaves either nothing, a temp file (garbage), or a generation file
// whose owner is dead (taken over by the next caller). The directory stays a handful of entries, so each listing is
// one getdents(2) call, which the kernel serialises with link/unlink in that directory.
//
// An owner in another PID namespace (the agent in a container without hostPID) cannot be checked through /proc:
// such a lock counts as stale once it is FOREIGN_STALE_MS old (holders keep the lock for milliseconds).
import { linkSync, readdirSync, readFileSync, readlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeDirectories } from './dirs.js';
import { isErrno, onPath } from './errors.js';
import { Backoff } from '../util/backoff.js';

export interface ProcessIdentity {
  pid: number;
  /** Field 22 of /proc/<pid>/stat (clock ticks since boot): tells a recycled PID apart. */
  start: string;
  /** readlink /proc/self/ns/pid. */
  ns: string;
}

interface OwnerRecord extends ProcessIdentity {
  at: number;
}

export const FOREIGN_STALE_MS = 30_000;

export function statOf(pid: number): { state: string; start: string } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return undefined;
  }
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // after "pid (comm) ": fields[0] is the state (field 3), so field 22 is fields[19]
  return { state: fields[0] ?? '?', start: fields[19] ?? '' };
}

let self: ProcessIdentity | undefined;

export function selfIdentity(): ProcessIdentity {
  if (self) return self;
  let ns = '';
  try {
    ns = readlinkSync('/proc/self/ns/pid');
  } catch {
    // no /proc: every owner then counts as foreign
  }
  self = { pid: process.pid, start: statOf(process.pid)?.start ?? '', ns };
  return self;
}

/** Whether the owner of a lock may still be running. */
export function ownerAlive(owner: OwnerRecord, me: ProcessIdentity, now: number): boolean {
  if (owner.ns === '' || owner.ns !== me.ns) return now - owner.at < FOREIGN_STALE_MS;
  const stat = statOf(owner.pid);
  if (!stat) return false;
  if (stat.state === 'Z' || stat.state === 'X' || stat.state === 'x') return false;
  return stat.start === owner.start;
}

function parseOwner(text: string): OwnerRecord | 'free' | undefined {
  if (text === 'free') return 'free';
  try {
    const v = JSON.parse(text) as Partial<OwnerRecord>;
    if (
      typeof v.pid === 'number' &&
      typeof v.start === 'string' &&
      typeof v.ns === 'string' &&
      typeof v.at === 'number'
    ) {
      return v as OwnerRecord;
    }
  } catch {
    // torn or empty (only after a power loss: files are complete before they get their name)
  }
  return undefined;
}

export interface LockHandle {
  generation: number;
}

export type AttemptResult =
  { kind: 'acquired'; handle: LockHandle } | { kind: 'busy'; owner: number } | { kind: 'retry' };

/** `g<N>` as this lock writes it: no leading zero, so that every number has one name (`g05` would hide `g5`). */
const GENERATION = /^g[1-9]\d{0,14}$/;

function generations(names: readonly string[]): number[] {
  const out: number[] = [];
  for (const name of names) {
    if (GENERATION.test(name)) out.push(Number(name.slice(1)));
  }
  return out;
}

let tempCounter = 0;

export class GenerationLock {
  constructor(
    readonly dir: string,
    private readonly now: () => number = Date.now,
    private readonly me: ProcessIdentity = selfIdentity(),
    /** Directory listing (tests replay a stale one). */
    private readonly list: (dir: string) => string[] = (d) => readdirSync(d),
  ) {}

  /** Create `g<gen>` holding `content` atomically; false when it exists already. */
  private publish(gen: number, content: string): boolean {
    const temp = join(this.dir, `t.${this.me.pid}.${this.now()}.${tempCounter++}`);
    writeFileSync(temp, content, { flag: 'wx', mode: 0o600 });
    try {
      linkSync(temp, join(this.dir, `g${gen}`));
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    } finally {
      unlinkQuietly(temp);
    }
  }

  /** One attempt, never blocking. */
  attempt(): AttemptResult {
    makeDirectories(this.dir, 0o700);
    const gens = generations(this.list(this.dir));
    const top = gens.length ? Math.max(...gens) : 0;
    if (top > 0) {
      const topPath = join(this.dir, `g${top}`);
      let text: string;
      try {
        text = onPath(topPath, () => readFileSync(topPath, 'utf8'));
      } catch (err) {
        if (isErrno(err) && err.code === 'ENOENT') return { kind: 'retry' }; // superseded and cleaned up meanwhile
        throw err; // anything else stays: retrying could only spin until the deadline
      }
      const owner = parseOwner(text);
      if (owner !== 'free' && owner !== undefined && ownerAlive(owner, this.me, this.now())) {
        return { kind: 'busy', owner: owner.pid };
      }
    }
    const mine = top + 1;
    const record: OwnerRecord = { ...this.me, at: this.now() };
    if (!this.publish(mine, JSON.stringify(record))) return { kind: 'retry' };
    if (generations(this.list(this.dir)).some((g) => g > mine)) {
      unlinkQuietly(join(this.dir, `g${mine}`)); // created from a stale listing: withdraw
      return { kind: 'retry' };
    }
    this.cleanUp(mine);
    return { kind: 'acquired', handle: { generation: mine } };
  }

  release(handle: LockHandle): void {
    // EEXIST would mean someone judged us dead and took over: nothing left to release then
    this.publish(handle.generation + 1, 'free');
  }

  /** Remove generations below mine-1 and temp files of dead processes. Only the holder calls it. */
  private cleanUp(mine: number): void {
    for (const name of this.list(this.dir)) {
      if (GENERATION.test(name)) {
        if (Number(name.slice(1)) < mine - 1) unlinkQuietly(join(this.dir, name));
      } else if (name.startsWith('t.')) {
        const pid = Number(name.split('.')[1]);
        if (pid !== this.me.pid && !statOf(pid)) unlinkQuietly(join(this.dir, name));
      }
    }
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // gone already
  }
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Block the thread for `ms` (the plugin is a short synchronous process). */
export function sleepSync(ms: number): void {
  Atomics.wait(sleeper, 0, 0, ms);
}

/** Waiting for a busy lock: 2 ms, doubling, at most 32 ms, jittered. */
const LOCK_WAIT_BACKOFF = { initialMs: 2, maxMs: 32 };

/** The pauses (ms) of one wait for the lock, returning its handle; throws LockTimeout after `timeoutMs`. */
function* lockWait(lock: GenerationLock, timeoutMs: number): Generator<number, LockHandle> {
  // performance.now(): a change of the wall clock cannot stretch the deadline
  const deadline = performance.now() + timeoutMs;
  const backoff = new Backoff(LOCK_WAIT_BACKOFF);
  for (;;) {
    const r = lock.attempt();
    if (r.kind === 'acquired') return r.handle;
    if (performance.now() > deadline) throw new LockTimeout(lock.dir, r.kind === 'busy' ? r.owner : undefined);
    // a retry (a race lost) pauses too: whatever keeps answering retry costs no CPU until the deadline
    yield backoff.next();
  }
}

/** Acquire, blocking (plugin). Throws LockTimeout after `timeoutMs`. */
export function acquireSync(lock: GenerationLock, timeoutMs: number): LockHandle {
  const wait = lockWait(lock, timeoutMs);
  for (let step = wait.next(); ; step = wait.next()) {
    if (step.done) return step.value;
    sleepSync(step.value);
  }
}

/** Acquire without blocking the event loop (agent). */
export async function acquire(
  lock: GenerationLock,
  timeoutMs: number,
  sleep: (ms: number) => Promise<void>,
): Promise<LockHandle> {
  const wait = lockWait(lock, timeoutMs);
  for (let step = wait.next(); ; step = wait.next()) {
    if (step.done) return step.value;
    await sleep(step.value);
  }
}

export class LockTimeout extends Error {
  override readonly name = 'LockTimeout';
  constructor(
    readonly dir: string,
    readonly owner: number | undefined,
  ) {
    super(`the store lock ${dir} is busy${owner === undefined ? '' : ` (held by pid ${owner})`}`);
  }
}
