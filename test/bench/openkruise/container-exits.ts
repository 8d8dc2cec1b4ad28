// When each container of a node exited, as containerd publishes it: `ctr events` on the node's containerd socket,
// its /tasks/exit events (the time the event was published, in ns; exec processes, whose exits name another id, are
// left out). Read from the event stream because kubelet may remove a dead container within a second or two of its
// exit (its pod-container deletor), after which CRI ContainerStatus knows nothing of it.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { waitFor } from '../../support/wait.js';

export interface ContainerExits {
  /** ms since the epoch when container `id` (bare or `<runtime>://<id>`) exited; waits for the event. */
  exitedAt(id: string, timeoutMs?: number): Promise<number>;
  stop(): void;
}

/** "2026-11-27 15:02:43.991736637 +0000 UTC k8s.io /tasks/exit {...}" -> ms, topic, payload. */
export function parseEvent(line: string): { ms: number; topic: string; payload: string } | undefined {
  const match = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(\.\d+)? \+0000 UTC \S+ (\S+) (.*)$/.exec(line);
  if (!match) return undefined;
  const fraction = (match[3] ?? '.0').slice(0, 4);
  return { ms: Date.parse(`${match[1]}T${match[2]}${fraction}Z`), topic: match[4]!, payload: match[5]! };
}

export async function watchContainerExits(socket: string): Promise<ContainerExits> {
  const child: ChildProcess = spawn('ctr', ['--address', socket, 'events'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exits = new Map<string, number>();
  let failure = '';
  child.stderr?.on('data', (chunk: Buffer) => (failure += chunk.toString()));
  const lines = createInterface({ input: child.stdout! });
  lines.on('line', (line) => {
    const event = parseEvent(line);
    if (event?.topic !== '/tasks/exit') return;
    const payload = JSON.parse(event.payload) as { container_id?: string; id?: string };
    if (payload.container_id && payload.id === payload.container_id) exits.set(payload.container_id, event.ms);
  });
  const spawned = new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', reject);
  });
  await spawned;
  return {
    exitedAt: (id, timeoutMs = 60_000) => {
      const bare = id.replace(/^[a-z][a-z0-9+.-]*:\/\//, '');
      return waitFor(() => exits.get(bare), {
        timeoutMs,
        intervalMs: 10,
        message: `containerd's exit event of ${bare}${failure ? ` (ctr events: ${failure.trim()})` : ''}`,
      });
    },
    stop: () => {
      lines.close();
      child.kill();
    },
  };
}
