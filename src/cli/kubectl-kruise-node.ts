#!/usr/bin/env node
// kubectl-kruise-node: a kubectl plugin (`kubectl kruise-node ...` once this file is on PATH under that name).
// Everything lives in src/kubectl-plugin (main.ts).
import { runPlugin } from '../kubectl-plugin/main.js';

try {
  const code = await runPlugin(process.argv.slice(2), {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
  });
  process.exit(code);
} catch (err) {
  process.stderr.write(`kubectl kruise-node: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
}
