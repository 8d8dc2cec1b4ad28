// The real helm for deploy/chart's tests, helm 3 or helm 4 (HELM_MAJORS: the chart is tested with both): built by test/cluster/k8s/build.sh on first use, run with its cache,
// config and data under a temporary HOME of its own (nothing written to the user's ~/.cache/helm or ~/.config/helm).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../src/util/repo-root.js';
import { helmBinary, helmVersion, type HelmMajor } from '../cluster/k8s/binaries.js';

export { HELM_MAJORS, type HelmMajor } from '../cluster/k8s/binaries.js';

export const CHART_DIR = join(packageRoot(), 'deploy', 'chart');

export interface HelmResult {
  code: number | null;
  out: string;
  err: string;
}

export interface Helm {
  /** The helm major and its pinned version (e.g. "helm v4.3.1"), for test titles. */
  readonly major: HelmMajor;
  readonly version: string;
  run(args: readonly string[], timeoutMs?: number): HelmResult;
  /** Removes the temporary HOME. */
  close(): void;
}

export async function useHelm(major: HelmMajor): Promise<Helm> {
  const binary = await helmBinary(major, (line) => process.stderr.write(`    ${line}\n`));
  const home = mkdtempSync(join(tmpdir(), 'kd-helm-'));
  return {
    major,
    version: helmVersion(major),
    run(args, timeoutMs = 60_000) {
      const result = spawnSync(binary, args, {
        cwd: packageRoot(),
        encoding: 'utf8',
        timeout: timeoutMs,
        env: {
          PATH: process.env.PATH,
          HOME: home,
          HELM_CACHE_HOME: join(home, 'cache'),
          HELM_CONFIG_HOME: join(home, 'config'),
          HELM_DATA_HOME: join(home, 'data'),
        },
      });
      return { code: result.status, out: result.stdout, err: result.stderr };
    },
    close() {
      rmSync(home, { recursive: true, force: true });
    },
  };
}
