// kubelet's timers, all behind one scale factor (--time-scale) so tests can shrink them. Sources:
// kubelet.go (backOffPeriod 10 s, MaxContainerBackOff 300 s, genericPlegRelistPeriod 1 s), pod_workers.go
// (jitter 0.5), apis/config/v1beta1/defaults.go (syncFrequency 1 m), client-go flowcontrol/backoff.go (reset
// after 2 x max without a failure; 1.32 uses a fixed 600 s).
export interface KubeletTimers {
  /** Crash-loop backoff: first delay after the first restart, doubled each time. */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** A backoff entry untouched this long is forgotten. */
  backoffResetMs: number;
  /** Retry of a failed sync (x [1, 1.5) jitter). */
  retryMs: number;
  /** Periodic resync of every pod (x [1, 1.5) jitter). */
  resyncMs: number;
  /** Runtime relist (PLEG). Not scaled below 100 ms. */
  relistMs: number;
  /** Node lease renewal (kubelet: 10 s = 0.25 x leaseDurationSeconds 40). */
  leaseRenewMs: number;
  /** Node status heartbeat (lastHeartbeatTime). */
  nodeStatusMs: number;
}

export const KUBELET_TIMERS: Readonly<KubeletTimers> = Object.freeze({
  backoffBaseMs: 10_000,
  backoffMaxMs: 300_000,
  backoffResetMs: 600_000,
  retryMs: 10_000,
  resyncMs: 60_000,
  relistMs: 1_000,
  leaseRenewMs: 10_000,
  nodeStatusMs: 60_000,
});

/** kubelet's timers multiplied by `scale` (0 < scale <= 1 for tests); relist and lease are never below 100 ms. */
export function scaledTimers(scale: number): KubeletTimers {
  if (!Number.isFinite(scale) || scale <= 0 || scale > 10) {
    throw new RangeError(`time scale must be a number in (0, 10], got ${scale}`);
  }
  const s = (ms: number, min = 1): number => Math.max(min, Math.round(ms * scale));
  return {
    backoffBaseMs: s(KUBELET_TIMERS.backoffBaseMs),
    backoffMaxMs: s(KUBELET_TIMERS.backoffMaxMs),
    backoffResetMs: s(KUBELET_TIMERS.backoffResetMs),
    retryMs: s(KUBELET_TIMERS.retryMs),
    resyncMs: s(KUBELET_TIMERS.resyncMs),
    relistMs: s(KUBELET_TIMERS.relistMs, 100),
    leaseRenewMs: s(KUBELET_TIMERS.leaseRenewMs, 100),
    nodeStatusMs: s(KUBELET_TIMERS.nodeStatusMs, 1000),
  };
}

/** wait.Jitter(d, 0.5): d x [1, 1.5). */
export function jittered(ms: number, random: () => number = Math.random): number {
  return Math.round(ms * (1 + 0.5 * random()));
}
