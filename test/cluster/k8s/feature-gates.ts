// Feature gates the local cluster turns on beyond its Kubernetes minor's defaults, the same on the API server and on
// every kubelet. ContainerStopSignals (KEP-4960, alpha since 1.33 and still alpha, off by default, in 1.37.2): without
// it the API server drops a container's lifecycle.stopSignal and kubelet does not hand it to the runtime, so the
// CRR stop-signal e2e test would have nothing to prove. Every other gate keeps its default.
export const FEATURE_GATES: readonly string[] = ['ContainerStopSignals=true'];
