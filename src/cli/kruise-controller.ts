#!/usr/bin/env node
// The kruise-controller binary: everything lives in src/controller (main.ts).
import { runController } from '../controller/main.js';

try {
  const code = await runController(process.argv.slice(2), {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
  });
  process.exit(code);
} catch (err) {
  process.stderr.write(`kruise-controller: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
}
