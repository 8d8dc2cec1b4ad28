// The CRI RPCs this project calls, which service each belongs to, its default deadline and its retry policy.
//
// Deadlines: reads answer in milliseconds on a healthy node, so they get 30 s (a busy runtime may stall, a dead
// one must not hang a reconcile); lifecycle calls get kubelet's default runtime request timeout (2 min);
// StopContainer and ExecSync get that plus their own timeout; PullImage gets 10 min (OpenKruise's default
// ImagePullJob timeout). Every call can override its deadline.
//
// Retries (one at most, after waiting for the channel to be READY within the call's deadline):
//   - "idempotent": retried on any UNAVAILABLE. Reads, plus the calls CRI documents as idempotent
//     (Stop*/Remove*); a repeat has the same effect as one call.
//   - "unsent-only": retried only when the failure shows the request never left this process
//     (grpc-js: "No connection established"), e.g. during a runtime restart. RunPodSandbox, CreateContainer,
//     StartContainer, ExecSync and PullImage are not repeated blindly once the runtime may have seen them: a
//     second RunPodSandbox/CreateContainer makes a duplicate, ExecSync runs the command twice, and a pull
//     interrupted mid-way is the pull worker's to retry with its own backoff and attempt accounting.

export type CriMethod =
  | 'Version'
  | 'Status'
  | 'RunPodSandbox'
  | 'StopPodSandbox'
  | 'RemovePodSandbox'
  | 'PodSandboxStatus'
  | 'ListPodSandbox'
  | 'CreateContainer'
  | 'StartContainer'
  | 'StopContainer'
  | 'RemoveContainer'
  | 'ListContainers'
  | 'ContainerStatus'
  | 'ExecSync'
  | 'ListImages'
  | 'ImageStatus'
  | 'PullImage'
  | 'RemoveImage'
  | 'ImageFsInfo';

export type RetryPolicy = 'idempotent' | 'unsent-only';

export interface MethodSpec {
  service: 'runtime' | 'image';
  /** Default deadline in ms. */
  deadlineMs: number;
  retry: RetryPolicy;
}

const READ = 30_000;
const LIFECYCLE = 120_000;
const PULL = 600_000;

export const CRI_METHODS: Readonly<Record<CriMethod, MethodSpec>> = Object.freeze({
  Version: { service: 'runtime', deadlineMs: READ, retry: 'idempotent' },
  Status: { service: 'runtime', deadlineMs: READ, retry: 'idempotent' },
  RunPodSandbox: { service: 'runtime', deadlineMs: LIFECYCLE, retry: 'unsent-only' },
  StopPodSandbox: { service: 'runtime', deadlineMs: LIFECYCLE, retry: 'idempotent' },
  RemovePodSandbox: { service: 'runtime', deadlineMs: LIFECYCLE, retry: 'idempotent' },
  PodSandboxStatus: { service: 'runtime', deadlineMs: READ, retry: 'idempotent' },
  ListPodSandbox: { service: 'runtime', deadlineMs: READ, retry: 'idempotent' },
  CreateContainer: { service: 'runtime', deadlineMs: LIFECYCLE, retry: 'unsent-only' },
  StartContainer: { service: 'runtime', deadlineMs: LIFECYCLE, retry: 'unsent-only' },
  StopContainer: { service: 'runtime', deadlineMs: LIFECYCLE, retry: 'idempotent' },
  RemoveContainer: { service: 'runtime', deadlineMs: LIFECYCLE, retry: 'idempotent' },
  ListContainers: { service: 'runtime', deadlineMs: READ, retry: 'idempotent' },
  ContainerStatus: { service: 'runtime', deadlineMs: READ, retry: 'idempotent' },
  ExecSync: { service: 'runtime', deadlineMs: LIFECYCLE, retry: 'unsent-only' },
  ListImages: { service: 'image', deadlineMs: READ, retry: 'idempotent' },
  ImageStatus: { service: 'image', deadlineMs: READ, retry: 'idempotent' },
  PullImage: { service: 'image', deadlineMs: PULL, retry: 'unsent-only' },
  RemoveImage: { service: 'image', deadlineMs: LIFECYCLE, retry: 'idempotent' },
  ImageFsInfo: { service: 'image', deadlineMs: READ, retry: 'idempotent' },
});

/**
 * Default deadline of a call: the method's, plus the request's own timeout (seconds) for the calls that carry
 * one (StopContainer grace period, ExecSync command timeout), so the runtime can honour it.
 */
export function defaultDeadlineMs(method: CriMethod, requestTimeoutSeconds?: number | string): number {
  const base = CRI_METHODS[method].deadlineMs;
  if (method !== 'StopContainer' && method !== 'ExecSync') return base;
  const seconds = Number(requestTimeoutSeconds ?? 0);
  return Number.isFinite(seconds) && seconds > 0 ? base + seconds * 1000 : base;
}
