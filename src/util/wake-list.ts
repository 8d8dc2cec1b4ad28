// Callers waiting for a gate to open (kubelet done pulling, room on the disk): each wait() ends at the next
// wakeAll(), or rejects with the signal's reason when its signal aborts first.
export class WakeList {
  private readonly waiters = new Set<() => void>();

  wait(signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        this.waiters.delete(wake);
        reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      };
      const wake = (): void => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      if (signal.aborted) {
        onAbort();
        return;
      }
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.add(wake);
    });
  }

  wakeAll(): void {
    const waiting = [...this.waiters];
    this.waiters.clear();
    for (const wake of waiting) wake();
  }
}
