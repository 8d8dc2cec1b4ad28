// The terminated state's message (kuberuntime_container.go#getTerminationMessage, #readLastStringFromContainerLogs):
// policy File reads the file mounted at terminationMessagePath (at most 4096 bytes); FallbackToLogsOnError uses the
// last 80 lines (at most 2048 bytes) of the container's log when the file is empty and the container failed.
import { open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { restartCountOf } from './labels.js';
import type { InstanceView, PodRuntimeView } from './runtime-view.js';
import { podLogDirectory } from './sandbox-config.js';
import type { Container, Pod } from './types.js';
import { podDirectory } from './volumes.js';

const MAX_MESSAGE_BYTES = 4096;
const MAX_LOG_BYTES = 2048;
const MAX_LOG_LINES = 80;

async function readHead(path: string, max: number): Promise<string> {
  const handle = await open(path, 'r').catch(() => undefined);
  if (!handle) return '';
  try {
    const buffer = Buffer.alloc(max);
    const { bytesRead } = await handle.read(buffer, 0, max, 0);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

/** CRI log lines are `<time> <stream> <P|F> <text>`; the text of the last lines. */
export function lastLogText(log: string): string {
  const lines = log.split('\n').filter(Boolean).slice(-MAX_LOG_LINES);
  const text = lines.map((line) => line.split(' ').slice(3).join(' ')).join('\n');
  return text.length > MAX_LOG_BYTES ? text.slice(-MAX_LOG_BYTES) : text;
}

async function messageOf(
  pod: Pod,
  c: Container,
  instance: InstanceView,
  stateDir: string,
  podLogDir: string,
): Promise<string> {
  const count = restartCountOf(instance.status?.annotations);
  const file = join(podDirectory(stateDir, pod.metadata.uid), 'containers', c.name, String(count));
  const text = await readHead(file, MAX_MESSAGE_BYTES);
  if (
    text !== '' ||
    c.terminationMessagePolicy !== 'FallbackToLogsOnError' ||
    (instance.status?.exit_code ?? 0) === 0
  ) {
    return text;
  }
  const log = await readFile(join(podLogDirectory({ podLogDir }, pod), c.name, `${count}.log`), 'utf8').catch(() => '');
  return lastLogText(log);
}

/** Fill in the message of exited instances that the runtime left empty. */
export async function addTerminationMessages(
  pod: Pod,
  view: PodRuntimeView,
  stateDir: string,
  podLogDir: string,
): Promise<void> {
  const specs = [...(pod.spec.initContainers ?? []), ...pod.spec.containers];
  for (const c of specs) {
    for (const instance of (view.containers.get(c.name) ?? []).slice(0, 2)) {
      if (instance.state !== 'CONTAINER_EXITED' || !instance.status || instance.status.message) continue;
      instance.status.message = await messageOf(pod, c, instance, stateDir, podLogDir);
    }
  }
}
