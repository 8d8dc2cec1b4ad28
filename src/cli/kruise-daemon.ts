#!/usr/bin/env node
// The kruise-daemon binary: `kruise-daemon [flags]` runs the node agent, `kruise-daemon <command> ...` a tool.
// Everything but the choice lives in src/daemon (commands.ts has the table, main.ts the agent).
import { dispatch } from '../daemon/commands.js';

const io = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env };

try {
  const code = await dispatch(process.argv.slice(2), io);
  // Exit explicitly: a tool's or the agent's leftover handles must not keep a finished process alive.
  // (stdout/stderr writes to files and pipes are synchronous on Linux, so nothing is lost.)
  process.exit(code);
} catch (err) {
  process.stderr.write(`kruise-daemon: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
}
