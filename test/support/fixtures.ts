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

/** Top-level suites' files (the root suite's children). */
function runFiles(suite: Mocha.Suite | undefined): string[] {
  return (suite?.suites ?? []).flatMap((child) => (child.file ? [child.file] : []));
}

/**
 * Root hook: before the first test, whatever the run's clusters need is installed and built (prepare-run.ts), with
 * progress on stderr and no timeout; a warm cache makes it a few file checks.
 */
export const mochaHooks = {
  async beforeAll(this: Mocha.Context): Promise<void> {
    const files = runFiles(this.test?.parent);
    const { neededForRun, prepareRun } = await import('./prepare-run.js');
    if (neededForRun(files) === undefined) return;
    this.timeout(0);
    await prepareRun(files, (message) => process.stderr.write(`[first run] ${message}\n`));
  },
};
