// The runtime relist (generic PLEG, pkg/kubelet/pleg/generic.go): every relist period one ListContainers and one
// ListPodSandbox for the whole runtime; pods (by io.kubernetes.pod.uid) whose containers or sandboxes changed
// state, appeared or disappeared are reported to every subscriber. Shared by all nodes of one process.
import type { Logger } from 'pino';
import type { CriClient } from '../../../src/cri/index.js';
import { POD_UID_LABEL } from './labels.js';

export type RelistListener = (changedUids: Set<string>) => void;

export class RuntimeWatcher {
  private previous = new Map<string, string>();
  private readonly listeners = new Set<RelistListener>();
  private timer?: NodeJS.Timeout;
  private stopped = false;

  constructor(
    private readonly cri: CriClient,
    private readonly periodMs: number,
    private readonly logger: Logger,
  ) {}

  subscribe(listener: RelistListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  start(): void {
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.relist().finally(() => this.schedule()), this.periodMs);
  }

  /** One relist; exposed for tests. */
  async relist(): Promise<Set<string>> {
    const current = new Map<string, string>();
    try {
      const [containers, sandboxes] = await Promise.all([this.cri.listContainers({}), this.cri.listPodSandbox({})]);
      for (const c of containers.containers) {
        const uid = c.labels?.[POD_UID_LABEL];
        if (uid) current.set(`c/${c.id}`, `${uid}|${c.state}`);
      }
      for (const s of sandboxes.items) {
        const uid = s.labels?.[POD_UID_LABEL];
        if (uid) current.set(`s/${s.id}`, `${uid}|${s.state}`);
      }
    } catch (err) {
      this.logger.warn({ err }, 'runtime relist failed');
      return new Set();
    }
    const changed = new Set<string>();
    for (const [id, value] of current) {
      if (this.previous.get(id) !== value) changed.add(value.split('|')[0]!);
    }
    for (const [id, value] of this.previous) if (!current.has(id)) changed.add(value.split('|')[0]!);
    this.previous = current;
    if (changed.size > 0) for (const l of this.listeners) l(changed);
    return changed;
  }
}
