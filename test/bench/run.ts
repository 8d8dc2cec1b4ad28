// `npm run bench [-- [--iterations N] [SUITE...]]`: run benchmark suites and print their figures.
// Whatever the suites start (the local cluster, agent processes) is stopped before the process exits.
import { parseArgs } from 'node:util';
import { mochaGlobalTeardown } from '../support/fixtures.js';
import { abortRunningSuite, formatJson, formatText, runSuites, type BenchSuite } from './framework.js';
import { SUITES } from './suites.js';
import { errorMessage } from '../../src/util/error-message.js';

const USAGE = `Usage: npm run bench -- [--iterations N] [--long] [SUITE...]

  --long  suites measuring a steady state use their long window (openkruise: 10 min per agent instead of 2)

Suites (default: those marked *):
${SUITES.map((s) => `  ${s.inDefaultRun ? '*' : ' '} ${s.name.padEnd(10)} ${s.description}`).join('\n')}`;

function choose(argv: string[]): { suites: BenchSuite[]; iterations: number; long: boolean } | number {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        iterations: { type: 'string', short: 'n' },
        long: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: true,
    });
  } catch (err) {
    console.error(`${errorMessage(err)}\n\n${USAGE}`);
    return 2;
  }
  if (parsed.values.help) {
    console.log(USAGE);
    return 0;
  }
  const iterations = Number(parsed.values.iterations ?? '200');
  if (!Number.isInteger(iterations) || iterations < 1) {
    console.error(`--iterations must be a positive integer, got ${parsed.values.iterations}`);
    return 2;
  }
  const names = parsed.positionals;
  const unknown = names.filter((n) => !SUITES.some((s) => s.name === n));
  if (unknown.length > 0) {
    console.error(`unknown suite ${unknown.join(', ')}\n\n${USAGE}`);
    return 2;
  }
  const suites =
    names.length === 0 ? SUITES.filter((s) => s.inDefaultRun) : SUITES.filter((s) => names.includes(s.name));
  return { suites, iterations, long: parsed.values.long === true };
}

async function main(): Promise<number> {
  const choice = choose(process.argv.slice(2));
  if (typeof choice === 'number') return choice;
  const started = new Date();
  try {
    const outcomes = await runSuites(choice.suites, choice.iterations, (m) => console.error(m), choice.long);
    console.log(formatText(outcomes));
    console.log(
      formatJson(outcomes, {
        at: started.toISOString(),
        node: process.version,
        iterations: choice.iterations,
        long: String(choice.long),
      }),
    );
    return outcomes.some((o) => o.error) ? 1 : 0;
  } finally {
    await mochaGlobalTeardown(); // stops the local cluster if this run started it
  }
}

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) process.exit(130);
    stopping = true;
    console.error(`${signal}: stopping what the benchmark started`);
    const log = (m: string): void => console.error(m);
    void abortRunningSuite(log)
      .then(() => mochaGlobalTeardown())
      .finally(() => process.exit(130));
  });
}

process.exitCode = await main();
