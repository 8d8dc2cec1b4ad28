// The kruise-ipam CNI IPAM plugin (installed as a shell wrapper: exec <node> <this file>). One call per process:
// everything is synchronous and nothing heavy is imported, because start-up is most of its cost.
import { readFileSync } from 'node:fs';
import { runPlugin } from '../cni/plugin.js';

let stdin = '';
try {
  stdin = readFileSync(0, 'utf8');
} catch {
  // no stdin (VERSION may come without one)
}
process.exitCode = runPlugin({
  env: process.env,
  stdin,
  now: () => Date.now(),
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
