// What the runtime holds for one pod, read fresh from CRI at the start of each sync (kubelet reads its PLEG cache,
// see README.md): the pod's sandboxes (newest first) and, per container name, its instances (newest first) with
// full status for the newest two (state and lastState).
import type { CriClient } from '../../../src/cri/index.js';
import type { ContainerStatus__Output, PodSandbox__Output } from '../../../src/cri/types.js';
import { CONTAINER_NAME_LABEL, POD_UID_LABEL } from './labels.js';

export interface SandboxView {
  id: string;
  attempt: number;
  ready: boolean;
  createdAt: number;
  ip?: string;
  additionalIps: string[];
}

export interface InstanceView {
  id: string;
  sandboxId: string;
  createdAt: number;
  state: string;
  /** Full status; present for the newest two instances of each name. */
  status?: ContainerStatus__Output;
}

export interface PodRuntimeView {
  sandboxes: SandboxView[];
  /** Container name -> instances, newest first. */
  containers: Map<string, InstanceView[]>;
}

/** CRI timestamps are nanoseconds since the epoch, as decimal strings; 0 = unset. */
export function nanosToMs(value: string | number | undefined): number {
  if (value === undefined || value === '' || value === '0' || value === 0) return 0;
  try {
    return Number(BigInt(value) / 1_000_000n);
  } catch {
    return 0;
  }
}

export function isoFromNanos(value: string | undefined): string | undefined {
  const ms = nanosToMs(value);
  return ms > 0 ? new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z') : undefined;
}

export async function sandboxView(cri: CriClient, sandbox: PodSandbox__Output): Promise<SandboxView> {
  const view: SandboxView = {
    id: sandbox.id,
    attempt: sandbox.metadata?.attempt ?? 0,
    ready: sandbox.state === 'SANDBOX_READY',
    createdAt: nanosToMs(sandbox.created_at),
    additionalIps: [],
  };
  if (view.ready) {
    try {
      const status = await cri.podSandboxStatus({ pod_sandbox_id: sandbox.id });
      view.ip = status.status?.network?.ip || undefined;
      view.additionalIps = (status.status?.network?.additional_ips ?? []).map((p) => p.ip).filter(Boolean);
      view.ready = status.status?.state === 'SANDBOX_READY';
    } catch {
      view.ready = false;
    }
  }
  return view;
}

export async function readPodRuntime(cri: CriClient, uid: string): Promise<PodRuntimeView> {
  const selector = { [POD_UID_LABEL]: uid };
  const [sandboxes, containers] = await Promise.all([
    cri.listPodSandbox({ filter: { label_selector: selector } }),
    cri.listContainers({ filter: { label_selector: selector } }),
  ]);
  const sandboxViews = await Promise.all(sandboxes.items.map((s) => sandboxView(cri, s)));
  sandboxViews.sort((a, b) => b.createdAt - a.createdAt || b.attempt - a.attempt);
  const byName = new Map<string, InstanceView[]>();
  for (const c of containers.containers) {
    const name = c.labels?.[CONTAINER_NAME_LABEL] ?? c.metadata?.name ?? '';
    const list = byName.get(name) ?? [];
    list.push({ id: c.id, sandboxId: c.pod_sandbox_id, createdAt: nanosToMs(c.created_at), state: c.state });
    byName.set(name, list);
  }
  const reads: Promise<void>[] = [];
  for (const list of byName.values()) {
    list.sort((a, b) => b.createdAt - a.createdAt);
    for (const instance of list.slice(0, 2)) {
      reads.push(
        cri.containerStatus({ container_id: instance.id }).then(
          (r) => {
            if (r.status) {
              instance.status = r.status;
              instance.state = r.status.state;
            }
          },
          () => undefined, // removed meanwhile: the next sync sees it gone
        ),
      );
    }
  }
  await Promise.all(reads);
  return { sandboxes: sandboxViews, containers: byName };
}
