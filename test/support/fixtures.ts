// Mocha global fixtures: whatever a test run started (the local cluster) is stopped at the end, also on failure.
type Teardown = () => Promise<void>;

const teardowns: Teardown[] = [];

/** Register work to run once after all tests (last registered runs first). */
export function atRunEnd(fn: Teardown): void {
  teardowns.push(fn);
}

export async function mochaGlobalTeardown(): Promise<void> {
  for (const fn of teardowns.reverse()) {
    try {
      await fn();
    } catch (err) {
      console.error('teardown failed:', err);
    }
  }
}
