// A NodePodProbe's spec as the agent uses it: the probes it lists, checked (the object is outside input: an entry
// without the names a worker needs is skipped and named), and each probe's timing with OpenKruise's floors
// (period, initial delay and timeout at least 1 s; thresholds <= 0 count as 1).
import type { NodePodProbe } from '../../api/nodepodprobe.js';
import type { ContainerProbeSpec } from '../../api/podprobemarker.js';
import { isRecord } from '../../util/is-record.js';

/** One probe to run: a pod's container and the probe's name in the NodePodProbe. */
export interface ProbeTarget {
  podNamespace: string;
  podName: string;
  podUid: string;
  /** The pod's IP (the only address tcpSocket/httpGet probes reach); absent until the controller knows it. */
  podIP: string | undefined;
  containerName: string;
  probeName: string;
  probe: ContainerProbeSpec;
}

export type ProbeKind = 'exec' | 'httpGet' | 'tcpSocket' | 'grpc' | 'none';

export interface ProbeTiming {
  periodMs: number;
  initialDelayMs: number;
  timeoutMs: number;
  successThreshold: number;
  failureThreshold: number;
}

/** The key of a worker: (pod uid, container, probe name). */
export function probeKey(target: Pick<ProbeTarget, 'podUid' | 'containerName' | 'probeName'>): string {
  return `${target.podUid}/${target.containerName}/${target.probeName}`;
}

/** The key of a probe's status entry: (pod uid, probe name), as OpenKruise's status. */
export function statusKey(podUid: string, probeName: string): string {
  return `${podUid}/${probeName}`;
}

export function kindOf(probe: ContainerProbeSpec): ProbeKind {
  if (probe.exec) return 'exec';
  if (probe.httpGet) return 'httpGet';
  if (probe.tcpSocket) return 'tcpSocket';
  if (probe.grpc) return 'grpc';
  return 'none';
}

function seconds(value: unknown, floor: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= floor ? Math.floor(value) : floor;
}

export function timingOf(probe: ContainerProbeSpec): ProbeTiming {
  return {
    periodMs: seconds(probe.periodSeconds, 1) * 1000,
    initialDelayMs: seconds(probe.initialDelaySeconds, 1) * 1000,
    timeoutMs: seconds(probe.timeoutSeconds, 1) * 1000,
    successThreshold: seconds(probe.successThreshold, 1),
    failureThreshold: seconds(probe.failureThreshold, 1),
  };
}

/** The action of a probe (what is run), for telling whether a spec change must reset its result. */
export function actionOf(probe: ContainerProbeSpec): string {
  return JSON.stringify([probe.exec, probe.httpGet, probe.tcpSocket, probe.grpc]);
}

export interface SpecProbes {
  targets: ProbeTarget[];
  /** One line per entry skipped, saying why. */
  problems: string[];
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The probes a NodePodProbe's spec asks for; entries missing a name, uid or probe are skipped and named. */
export function specProbes(npp: Pick<NodePodProbe, 'spec'>): SpecProbes {
  const targets: ProbeTarget[] = [];
  const problems: string[] = [];
  const podProbes: unknown = npp.spec?.podProbes;
  if (podProbes !== undefined && !Array.isArray(podProbes)) {
    return { targets, problems: ['spec.podProbes is not a list'] };
  }
  const seen = new Set<string>();
  for (const [i, pod] of (podProbes ?? []).entries()) {
    const where = `spec.podProbes[${i}]`;
    if (!isRecord(pod)) {
      problems.push(`${where} is not an object`);
      continue;
    }
    const podName = text(pod.name);
    const podNamespace = text(pod.namespace);
    const podUid = text(pod.uid);
    if (!podName || !podNamespace || !podUid) {
      problems.push(`${where} lacks its pod's name, namespace or uid`);
      continue;
    }
    const probes: unknown = pod.probes;
    if (probes !== undefined && !Array.isArray(probes)) {
      problems.push(`${where}.probes is not a list`);
      continue;
    }
    for (const [j, probe] of (probes ?? []).entries()) {
      const at = `${where}.probes[${j}]`;
      if (!isRecord(probe)) {
        problems.push(`${at} is not an object`);
        continue;
      }
      const probeName = text(probe.name);
      const containerName = text(probe.containerName);
      if (!probeName || !containerName || !isRecord(probe.probe)) {
        problems.push(`${at} lacks its name, containerName or probe`);
        continue;
      }
      const target: ProbeTarget = {
        podNamespace,
        podName,
        podUid,
        podIP: text(pod.IP),
        containerName,
        probeName,
        probe: probe.probe,
      };
      const key = statusKey(podUid, probeName);
      if (seen.has(key)) {
        problems.push(`${at}: probe ${JSON.stringify(probeName)} is listed twice for pod ${podNamespace}/${podName}`);
        continue;
      }
      seen.add(key);
      targets.push(target);
    }
  }
  return { targets, problems };
}
