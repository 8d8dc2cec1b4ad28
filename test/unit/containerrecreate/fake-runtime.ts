// A fake CRI runtime for the container controllers: containers of pods (by pod uid label), StopContainer marks one
// exited and, like kubelet, a new instance of the same name starts (restartCount + 1) unless `recreate` is off.
// Every call is recorded in order, so tests can check what happened before what.
import type { CriCallOptions } from '../../../src/cri/client.js';
import type {
  ContainerStatusRequest,
  ContainerStatusResponse__Output,
  ExecSyncRequest,
  ExecSyncResponse__Output,
  ListContainersRequest,
  ListContainersResponse__Output,
  StopContainerRequest,
  StopContainerResponse__Output,
} from '../../../src/cri/types.js';
import {
  CONTAINER_HASH_ANNOTATION,
  CONTAINER_NAME_LABEL,
  CONTAINER_RESTART_COUNT_ANNOTATION,
  POD_UID_LABEL,
} from '../../../src/daemon/podruntime/labels.js';
import type { ContainerRuntime } from '../../../src/daemon/podruntime/pod-containers.js';

export interface FakeContainer {
  id: string;
  podUid: string;
  name: string;
  state: 'CONTAINER_RUNNING' | 'CONTAINER_EXITED' | 'CONTAINER_CREATED';
  restartCount: number;
  createdNs: bigint;
  startedNs: bigint;
  env: Record<string, string>;
}

export type RuntimeCall =
  | { method: 'StopContainer'; id: string; timeout: number }
  | { method: 'ExecSync'; id: string; cmd: string[] }
  | { method: 'ListContainers' };

export class FakeContainerRuntime implements ContainerRuntime {
  readonly containers: FakeContainer[] = [];
  readonly calls: RuntimeCall[] = [];
  /** Start a new instance after a stop (kubelet's restart). */
  recreate = true;
  /** Env of new instances, by container name (what the pod's metadata says at restart). */
  envOnRestart = new Map<string, Record<string, string>>();
  /** ExecSync answers: by default `env` prints the container's env, anything else exits 0. */
  execResult?: (id: string, cmd: string[]) => Promise<{ exit: number; stdout: string }>;
  stopError?: Error;
  private seq = 0;
  private nowNs = 1_700_000_000_000_000_000n;

  add(podUid: string, name: string, env: Record<string, string> = {}): FakeContainer {
    this.nowNs += 1_000_000n;
    const c: FakeContainer = {
      id: `c${++this.seq}-${name}`,
      podUid,
      name,
      state: 'CONTAINER_RUNNING',
      restartCount: 0,
      createdNs: this.nowNs,
      startedNs: this.nowNs,
      env,
    };
    this.containers.push(c);
    return c;
  }

  current(podUid: string, name: string): FakeContainer | undefined {
    return this.containers
      .filter((c) => c.podUid === podUid && c.name === name)
      .sort((a, b) => (a.createdNs > b.createdNs ? -1 : 1))[0];
  }

  stops(): string[] {
    return this.calls.flatMap((c) => (c.method === 'StopContainer' ? [c.id] : []));
  }

  listContainers(request: ListContainersRequest): Promise<ListContainersResponse__Output> {
    this.calls.push({ method: 'ListContainers' });
    const uid = request.filter?.label_selector?.[POD_UID_LABEL];
    return Promise.resolve({
      containers: this.containers
        .filter((c) => uid === undefined || c.podUid === uid)
        .map((c) => ({
          id: c.id,
          pod_sandbox_id: `sb-${c.podUid}`,
          metadata: { name: c.name, attempt: c.restartCount },
          image: null,
          image_ref: '',
          state: c.state,
          created_at: String(c.createdNs),
          labels: { [POD_UID_LABEL]: c.podUid, [CONTAINER_NAME_LABEL]: c.name },
          annotations: {
            [CONTAINER_RESTART_COUNT_ANNOTATION]: String(c.restartCount),
            [CONTAINER_HASH_ANNOTATION]: 'abc',
          },
          image_id: '',
        })),
    });
  }

  containerStatus(request: ContainerStatusRequest): Promise<ContainerStatusResponse__Output> {
    const c = this.containers.find((x) => x.id === request.container_id);
    if (!c) return Promise.reject(new Error('not found'));
    return Promise.resolve({
      status: {
        id: c.id,
        metadata: { name: c.name, attempt: c.restartCount },
        state: c.state,
        created_at: String(c.createdNs),
        started_at: String(c.startedNs),
        finished_at: '0',
        exit_code: 0,
        image: null,
        image_ref: '',
        reason: '',
        message: '',
        labels: {},
        annotations: {},
        mounts: [],
        log_path: '',
        resources: null,
        image_id: '',
        user: null,
        image_source: '',
      },
      info: {},
      containers_statuses: [],
    } as unknown as ContainerStatusResponse__Output);
  }

  stopContainer(request: StopContainerRequest, _options?: CriCallOptions): Promise<StopContainerResponse__Output> {
    const id = request.container_id ?? '';
    this.calls.push({ method: 'StopContainer', id, timeout: Number(request.timeout ?? 0) });
    if (this.stopError) return Promise.reject(this.stopError);
    const c = this.containers.find((x) => x.id === id);
    if (c && c.state === 'CONTAINER_RUNNING') {
      c.state = 'CONTAINER_EXITED';
      if (this.recreate) {
        const next = this.add(c.podUid, c.name, this.envOnRestart.get(c.name) ?? c.env);
        next.restartCount = c.restartCount + 1;
      }
    }
    return Promise.resolve({});
  }

  async execSync(request: ExecSyncRequest, _options?: CriCallOptions): Promise<ExecSyncResponse__Output> {
    const id = request.container_id ?? '';
    const cmd = request.cmd ?? [];
    this.calls.push({ method: 'ExecSync', id, cmd });
    if (this.execResult) {
      const r = await this.execResult(id, cmd);
      return { stdout: Buffer.from(r.stdout), stderr: Buffer.alloc(0), exit_code: r.exit };
    }
    const c = this.containers.find((x) => x.id === id);
    const stdout =
      cmd[0] === 'env' && c
        ? Object.entries(c.env)
            .map(([k, v]) => `${k}=${v}\n`)
            .join('')
        : '';
    return { stdout: Buffer.from(stdout), stderr: Buffer.alloc(0), exit_code: 0 };
  }
}
