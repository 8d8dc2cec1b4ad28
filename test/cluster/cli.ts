// `npm run cluster -- up [--nodes N] | down [--purge] | status | env`: the local cluster (test infrastructure).
// CLUSTER_DIR selects the instance (default <repo>/.cluster). Exit codes: 0 ok, 1 failed, 2 missing prerequisite
// or bad usage.
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import {
  clusterStatus,
  downCluster,
  parseClusterKind,
  parseNodeCount,
  upCluster,
  type ClusterKind,
} from './components.js';
import { clusterPaths, resolveClusterDir } from './paths.js';
import { errorMessage, PrerequisiteError } from './runtime/errors.js';
import { parseStack, type Stack } from './stack.js';

const USAGE = `usage: npm run cluster -- <command> [options]
  up [--nodes N] [--kind real|runtime] [--kubernetes 1.37] [--runtime containerd-2.4]
                   start the local cluster (idempotent); writes $CLUSTER_DIR/env. real (the default): Kubernetes
                   with N nodes (default 2), built from Go modules on first use (5 to 10 minutes); runtime: one
                   containerd with the registries and test images, no Kubernetes (the CRI and CNI component tests).
                   --kubernetes and --runtime choose the stack (default: versions.env's newest cell; also
                   CLUSTER_KUBERNETES, CLUSTER_RUNTIME): 1.33 (containerd-1.6), 1.35, 1.36, 1.37 (containerd-2.4,
                   containerd-2.2), 1.36 with cri-o
  down [--purge]   stop it; --purge also deletes images, registry data and containerd content
  status           show what runs
  env              print the env file (source it in a shell)
CLUSTER_DIR selects the cluster directory (default <repo>/.cluster).`;

class UsageError extends Error {}

interface Command {
  name: 'up' | 'down' | 'status' | 'env';
  nodeCount?: number | undefined;
  kind?: ClusterKind | undefined;
  stack?: Stack | undefined;
  purge: boolean;
}

export function parseCommand(argv: string[]): Command {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        nodes: { type: 'string' },
        kind: { type: 'string' },
        kubernetes: { type: 'string' },
        runtime: { type: 'string' },
        purge: { type: 'boolean', default: false },
        help: { type: 'boolean' },
      },
    });
  } catch (err) {
    throw new UsageError(errorMessage(err));
  }
  const { positionals, values } = parsed;
  if (values.help) throw new UsageError('');
  if (positionals.length !== 1) throw new UsageError('expected exactly one command');
  const name = positionals[0];
  if (name !== 'up' && name !== 'down' && name !== 'status' && name !== 'env') {
    throw new UsageError(`unknown command ${JSON.stringify(name)}`);
  }
  if (values.nodes !== undefined && name !== 'up') throw new UsageError('--nodes goes with up');
  if (values.purge && name !== 'down') throw new UsageError('--purge goes with down');
  if (values.kind !== undefined && name !== 'up') throw new UsageError('--kind goes with up');
  if ((values.kubernetes !== undefined || values.runtime !== undefined) && name !== 'up')
    throw new UsageError('--kubernetes and --runtime go with up');
  let stack: Stack | undefined;
  if (values.kubernetes !== undefined || values.runtime !== undefined) {
    try {
      stack = parseStack(
        values.kubernetes ?? process.env.CLUSTER_KUBERNETES,
        values.runtime ?? process.env.CLUSTER_RUNTIME,
      );
    } catch (err) {
      throw new UsageError(errorMessage(err));
    }
  }
  let kind: ClusterKind | undefined;
  if (values.kind !== undefined) {
    try {
      kind = parseClusterKind(values.kind);
    } catch (err) {
      throw new UsageError(errorMessage(err));
    }
  }
  let nodeCount: number | undefined;
  if (values.nodes !== undefined) {
    try {
      nodeCount = parseNodeCount(values.nodes);
    } catch (err) {
      throw new UsageError(errorMessage(err));
    }
  }
  return { name, nodeCount, kind, stack, purge: values.purge ?? false };
}

async function main(argv: string[]): Promise<number> {
  const command = parseCommand(argv);
  const dir = resolveClusterDir();
  const started = Date.now();
  const log = (message: string): void => {
    process.stderr.write(`[cluster ${String(Date.now() - started).padStart(5)} ms] ${message}\n`);
  };
  switch (command.name) {
    case 'up': {
      await upCluster({ dir, log, nodeCount: command.nodeCount, kind: command.kind, stack: command.stack });
      log(`up (${Date.now() - started} ms); variables: source ${clusterPaths(dir).envFile}`);
      return 0;
    }
    case 'down': {
      await downCluster({ dir, log, purge: command.purge });
      log(`down (${Date.now() - started} ms)`);
      return 0;
    }
    case 'status': {
      const statuses = await clusterStatus({ dir, log });
      for (const s of statuses)
        process.stdout.write(`${s.healthy ? 'ok  ' : 'DOWN'} ${s.name.padEnd(14)} ${s.detail}\n`);
      return statuses.every((s) => s.healthy) ? 0 : 1;
    }
    case 'env': {
      const envFile = clusterPaths(dir).envFile;
      const text = await readFile(envFile, 'utf8').catch(() => undefined);
      if (text === undefined) {
        process.stderr.write(`the cluster in ${dir} is not up (no ${envFile}); run: npm run cluster -- up\n`);
        return 1;
      }
      process.stdout.write(text);
      return 0;
    }
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message ? `${err.message}\n` : ''}${USAGE}\n`);
      process.exitCode = 2;
    } else if (err instanceof PrerequisiteError) {
      process.stderr.write(`cluster: ${err.message}\n`);
      process.exitCode = 2;
    } else {
      process.stderr.write(`cluster: ${errorMessage(err)}\n`);
      process.exitCode = 1;
    }
  },
);
