// The real helm for deploy/chart's tests: built by test/cluster/k8s/build.sh on first use, run with its cache,
// config and data under a temporary HOME of its own (nothing written to the user's ~/.cache/helm or ~/.config/helm).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../src/util/repo-root.js';
import { helmBinary } from '../cluster/k8s/binaries.js';

export const CHART_DIR = join(packageRoot(), 'deploy', 'chart');

export interface HelmResult {
  code: number | null;
  out: string;
  err: string;
}

export interface Helm {
  run(args: readonly string[], timeoutMs?: number): HelmResult;
  /** Removes the temporary HOME. */
  close(): void;
}

export async function useHelm(): Promise<Helm> {
  const binary = await helmBinary((line) => process.stderr.write(`    ${line}\n`));
  const home = mkdtempSync(join(tmpdir(), 'kd-helm-'));
  return {
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
