// Exec probes, one worker per running container and probe type (pkg/kubelet/prober/worker.go): the first probe
// after initialDelaySeconds (from the container's start) or a random part of the period, then every period; a
// result changes only after failureThreshold/successThreshold consecutive results; initial results: readiness
// failure, liveness success, startup unknown; readiness and liveness wait until startup succeeded; after a
// liveness failure the worker holds until the container id changes. Defaults as SetDefaults_Probe.
import type { Logger } from 'pino';
import type { CriClient } from '../../../src/cri/index.js';
import type { Container, Pod, Probe } from './types.js';

export type ProbeKind = 'readiness' | 'liveness' | 'startup';

export interface RunningContainer {
  name: string;
  id: string;
  startedAtMs: number;
}

export interface ProbeEvents {
  /** A result changed (readiness either way, liveness/startup failure or startup success): sync the pod. */
  changed(uid: string, kind: ProbeKind): void;
  /** A probe failed (for the Unhealthy event). */
  failed(pod: Pod, container: string, kind: ProbeKind, output: string): void;
}

interface ProbeSettings {
  initialDelayMs: number;
  timeoutSeconds: number;
  periodMs: number;
  successThreshold: number;
  failureThreshold: number;
}

export function probeSettings(probe: Probe): ProbeSettings {
  const positive = (v: number | undefined, d: number): number => (typeof v === 'number' && v > 0 ? v : d);
  return {
    initialDelayMs: Math.max(0, probe.initialDelaySeconds ?? 0) * 1000,
    timeoutSeconds: positive(probe.timeoutSeconds, 1),
    periodMs: positive(probe.periodSeconds, 10) * 1000,
    successThreshold: positive(probe.successThreshold, 1),
    failureThreshold: positive(probe.failureThreshold, 3),
  };
}

class ProbeWorker {
  result: boolean | undefined;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private consecutive = 0;
  private lastOutcome: boolean | undefined;
  private running = false;

  constructor(
    readonly kind: ProbeKind,
    readonly containerId: string,
    private readonly probe: Probe,
    private readonly run: (w: ProbeWorker) => Promise<{ ok: boolean; output: string }>,
    private readonly onResult: (w: ProbeWorker, changed: boolean, ok: boolean, output: string) => void,
    private readonly gate: () => boolean,
    startedAtMs: number,
  ) {
    this.result = kind === 'readiness' ? false : kind === 'liveness' ? true : undefined;
    const s = probeSettings(probe);
    const sinceStart = Date.now() - startedAtMs;
    const first = Math.max(s.initialDelayMs - sinceStart, Math.floor(Math.random() * Math.min(s.periodMs, 1000)));
    this.timer = setTimeout(() => void this.tick(), first);
  }

  get settings(): ProbeSettings {
    return probeSettings(this.probe);
  }

  get command(): string[] {
    return this.probe.exec?.command ?? [];
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private async tick(): Promise<void> {
    if (this.stopped || this.running) return;
    const s = this.settings;
    const held = this.kind === 'liveness' && this.result === false;
    if (!held && this.gate()) {
      this.running = true;
      try {
        const { ok, output } = await this.run(this);
        if (this.stopped) return;
        if (ok === this.lastOutcome) this.consecutive++;
        else {
          this.lastOutcome = ok;
          this.consecutive = 1;
        }
        const threshold = ok ? s.successThreshold : s.failureThreshold;
        let changed = false;
        if (this.consecutive >= threshold && this.result !== ok) {
          this.result = ok;
          changed = true;
        }
        this.onResult(this, changed, ok, output);
      } finally {
        this.running = false;
      }
    }
    if (!this.stopped) this.timer = setTimeout(() => void this.tick(), s.periodMs);
  }
}

export class ProbeManager {
  /** uid -> container id -> workers. */
  private readonly pods = new Map<string, Map<string, ProbeWorker[]>>();

  constructor(
    private readonly cri: CriClient,
    private readonly events: ProbeEvents,
    private readonly logger: Logger,
  ) {}

  /** Make the workers match the pod's running containers. */
  sync(pod: Pod, running: RunningContainer[]): void {
    const uid = pod.metadata.uid;
    const byId = this.pods.get(uid) ?? new Map<string, ProbeWorker[]>();
    const keep = new Set(running.map((r) => r.id));
    for (const [id, workers] of byId) {
      if (!keep.has(id)) {
        for (const w of workers) w.stop();
        byId.delete(id);
      }
    }
    const specs = new Map<string, Container>();
    for (const c of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]) specs.set(c.name, c);
    for (const r of running) {
      if (byId.has(r.id)) continue;
      const c = specs.get(r.name);
      if (!c) continue;
      const workers: ProbeWorker[] = [];
      const startup = c.startupProbe;
      const startupDone = (): boolean => !startup || workers.find((w) => w.kind === 'startup')?.result === true;
      const add = (kind: ProbeKind, probe: Probe | undefined, gate: () => boolean): void => {
        if (!probe?.exec?.command?.length) return;
        workers.push(
          new ProbeWorker(
            kind,
            r.id,
            probe,
            (w) => this.execProbe(w),
            (w, changed, ok, output) => this.onResult(pod, r.name, w, changed, ok, output),
            gate,
            r.startedAtMs,
          ),
        );
      };
      add('startup', startup, () => true);
      add('liveness', c.livenessProbe, startupDone);
      add('readiness', c.readinessProbe, startupDone);
      byId.set(r.id, workers);
    }
    if (byId.size > 0) this.pods.set(uid, byId);
    else this.pods.delete(uid);
  }

  /** Stop the workers of one container instance (it is being killed). */
  stopContainer(uid: string, containerId: string): void {
    const byId = this.pods.get(uid);
    for (const w of byId?.get(containerId) ?? []) w.stop();
    byId?.delete(containerId);
  }

  stopPod(uid: string): void {
    for (const workers of this.pods.get(uid)?.values() ?? []) for (const w of workers) w.stop();
    this.pods.delete(uid);
  }

  stopAll(): void {
    for (const uid of [...this.pods.keys()]) this.stopPod(uid);
  }

  private worker(uid: string, containerId: string, kind: ProbeKind): ProbeWorker | undefined {
    return this.pods
      .get(uid)
      ?.get(containerId)
      ?.find((w) => w.kind === kind);
  }

  /** Ready as the status manager sees it: no readiness probe -> true; else its current result. */
  ready(uid: string, container: Container, containerId: string): boolean {
    if (!this.started(uid, container, containerId)) return false;
    if (!container.readinessProbe?.exec?.command?.length) return true;
    return this.worker(uid, containerId, 'readiness')?.result === true;
  }

  started(uid: string, container: Container, containerId: string): boolean {
    if (!container.startupProbe?.exec?.command?.length) return true;
    return this.worker(uid, containerId, 'startup')?.result === true;
  }

  /** Liveness (or startup) probe failed for this instance: kubelet kills it. */
  unhealthy(uid: string, containerId: string): ProbeKind | undefined {
    if (this.worker(uid, containerId, 'liveness')?.result === false) return 'liveness';
    if (this.worker(uid, containerId, 'startup')?.result === false) return 'startup';
    return undefined;
  }

  private async execProbe(w: ProbeWorker): Promise<{ ok: boolean; output: string }> {
    const { timeoutSeconds } = w.settings;
    try {
      const r = await this.cri.execSync(
        { container_id: w.containerId, cmd: w.command, timeout: timeoutSeconds },
        { timeoutMs: timeoutSeconds * 1000 + 5000 },
      );
      const output = Buffer.concat([Buffer.from(r.stdout), Buffer.from(r.stderr)])
        .toString('utf8')
        .trim();
      return { ok: r.exit_code === 0, output };
    } catch (err) {
      return { ok: false, output: err instanceof Error ? err.message : String(err) };
    }
  }

  private onResult(pod: Pod, container: string, w: ProbeWorker, changed: boolean, ok: boolean, output: string): void {
    if (!ok) this.events.failed(pod, container, w.kind, output);
    if (changed) {
      this.logger.debug({ pod: pod.metadata.name, container, kind: w.kind, result: w.result }, 'probe result changed');
      if (w.kind === 'readiness' || w.result === false || w.kind === 'startup')
        this.events.changed(pod.metadata.uid, w.kind);
    }
  }
}
