// `npm run matrix [-- --cells 1.37/containerd-2.4,1.36/cri-o] [--no-openkruise]`: the matrix's cells
// (test/cluster/stack.ts MATRIX_CELLS, or any of KNOWN_CELLS named), one after the other, each in a cluster directory of its own
// (<repo>/.cluster-matrix-<cell>): `up` (timed; cold when it had to build the cell's binaries), the e2e suites
// (mocha, test/e2e) and OpenKruise's own e2e suites that run today (`npm run openkruise-e2e -- <suite>`), then
// `down --purge`. Writes docs/compatibility/<cell>.json and the table of docs/compatibility.md, and prints it.
// Not part of `npm test`: a cell takes 30 to 60 minutes on 2 cores. Logs in <repo>/.cluster-matrix-logs/<cell>/.
import { execFileSync, spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { packageRoot } from '../../src/util/repo-root.js';
import { errorMessage } from '../../src/util/error-message.js';
import { binaryPaths, missingBinaries } from './k8s/binaries.js';
import {
  cellGreen,
  cellId,
  matrixTable,
  suiteFromMocha,
  suiteFromOpenKruiseOutput,
  withTable,
  type CellResult,
  type MochaJson,
  type SuiteResult,
} from './matrix-table.js';
import { E2E_SUITES } from './openkruise/e2e-suites.js';
import { KNOWN_CELLS, MATRIX_CELLS, parseStack, stackName, stackVersions, type Stack } from './stack.js';

const root = packageRoot();
const resultsDir = join(root, 'docs', 'compatibility');
const page = join(root, 'docs', 'compatibility.md');
const started = performance.now();
const say = (message: string): void =>
  void process.stderr.write(`[matrix ${((performance.now() - started) / 1000).toFixed(0).padStart(5)} s] ${message}\n`);

interface Run {
  code: number;
  seconds: number;
  output: string;
}

/** Run a command with the cell's environment, its output into `logFile` (and kept, for parsing). */
function run(command: string, args: string[], env: NodeJS.ProcessEnv, logFile: string): Promise<Run> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const log = createWriteStream(logFile, { flags: 'a' });
    log.write(`$ ${command} ${args.join(' ')}\n`);
    const chunks: Buffer[] = [];
    const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (chunk: Buffer): void => {
      chunks.push(chunk);
      log.write(chunk);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const end = (code: number): void => {
      log.end();
      resolve({ code, seconds: (performance.now() - t0) / 1000, output: Buffer.concat(chunks).toString('utf8') });
    };
    child.on('error', (err) => {
      chunks.push(Buffer.from(`cannot run ${command}: ${err.message}\n`));
      end(127);
    });
    child.on('close', (code) => end(code ?? 1));
  });
}

function lastLines(text: string, count = 5): string {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .slice(-count)
    .join(' | ');
}

function previousResult(cell: Stack): CellResult | undefined {
  const file = join(resultsDir, `${cellId(cell)}.json`);
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, 'utf8')) as CellResult;
}

/**
 * The checkout this run is from, as the table shows it; `-dirty` when it has changes of its own, not counting the
 * result files the matrix itself writes (docs/compatibility*).
 */
function checkoutCommit(): string | undefined {
  try {
    const git = (args: string[]): string => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
    const commit = git(['rev-parse', '--short=12', 'HEAD']);
    const changes = git(['status', '--porcelain', '--', '.', ':!docs/compatibility.md', ':!docs/compatibility']);
    return changes === '' ? commit : `${commit}-dirty`;
  } catch {
    return undefined;
  }
}

async function runCell(cell: Stack, withOpenKruise: boolean): Promise<CellResult> {
  const id = cellId(cell);
  const dir = join(root, `.cluster-matrix-${id}`);
  const logs = join(root, '.cluster-matrix-logs', id);
  mkdirSync(logs, { recursive: true });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CLUSTER_DIR: dir,
    REAL_CLUSTER_DIR: dir,
    CLUSTER_KUBERNETES: cell.kubernetes,
    CLUSTER_RUNTIME: cell.runtime,
  };
  const load0 = loadavg()[0] ?? 0;
  const cold = missingBinaries(binaryPaths(cell)).length > 0;
  const previous = previousResult(cell);
  const commit = checkoutCommit();
  const result: CellResult = {
    cell,
    versions: stackVersions(cell),
    date: new Date().toISOString(),
    ...(commit !== undefined ? { commit } : {}),
    ...(previous?.coldUpSeconds !== undefined ? { coldUpSeconds: previous.coldUpSeconds } : {}),
    openkruise: {},
    load: [load0, load0],
  };
  const cli = join(root, 'dist', 'test', 'cluster', 'cli.js');
  say(`${stackName(cell)}: up (${cold ? 'cold: building its binaries first' : 'warm'}); log ${logs}/up.log`);
  const up = await run(process.execPath, [cli, 'up', '--kind', 'real'], env, join(logs, 'up.log'));
  if (cold) result.coldUpSeconds = Math.round(up.seconds);
  else result.warmUpSeconds = Math.round(up.seconds);
  if (up.code !== 0) {
    const error = `up failed (exit ${up.code}): ${lastLines(up.output)}`;
    say(`${stackName(cell)}: ${error}`);
    const failed: SuiteResult = { passed: 0, failed: 0, known: 0, failures: [], seconds: 0, error };
    result.e2e = failed;
  } else {
    say(`${stackName(cell)}: up in ${up.seconds.toFixed(0)} s; the e2e suites (log ${logs}/e2e.log)`);
    const report = join(logs, 'e2e.json');
    const mocha = join(root, 'node_modules', 'mocha', 'bin', 'mocha.js');
    const e2e = await run(
      process.execPath,
      [mocha, '--reporter', 'json', '--reporter-option', `output=${report}`, 'dist/test/e2e/**/*.test.js'],
      env,
      join(logs, 'e2e.log'),
    );
    result.e2e = existsSync(report)
      ? suiteFromMocha(JSON.parse(readFileSync(report, 'utf8')) as MochaJson)
      : { passed: 0, failed: 0, known: 0, failures: [], seconds: 0, error: `no report: ${lastLines(e2e.output)}` };
    say(`${stackName(cell)}: e2e ${result.e2e.passed} passed, ${result.e2e.failed} failed`);
    if (withOpenKruise) {
      for (const suite of Object.keys(E2E_SUITES)) {
        say(`${stackName(cell)}: OpenKruise's ${suite} suite (log ${logs}/openkruise-${suite}.log)`);
        const entry = join(root, 'dist', 'test', 'bench', 'openkruise-e2e.js');
        const ran = await run(process.execPath, [entry, suite], env, join(logs, `openkruise-${suite}.log`));
        result.openkruise[suite] = suiteFromOpenKruiseOutput(ran.output);
        const s = result.openkruise[suite];
        say(
          `${stackName(cell)}: OpenKruise ${suite}: ${s.error ?? `${s.passed} passed, ${s.failed} failed, ${s.known} known`}`,
        );
      }
    }
  }
  const down = await run(process.execPath, [cli, 'down', '--purge'], env, join(logs, 'down.log'));
  if (down.code !== 0) say(`${stackName(cell)}: down failed: ${lastLines(down.output)}`);
  result.date = new Date().toISOString();
  result.load[1] = loadavg()[0] ?? 0;
  return result;
}

async function writeResults(result: CellResult): Promise<string> {
  // both files formatted as the lint check wants them (prettier is a devDependency)
  const prettier = await import('prettier');
  const formatted = async (file: string, text: string): Promise<string> =>
    prettier.format(text, { ...((await prettier.resolveConfig(file)) ?? {}), filepath: file });
  mkdirSync(resultsDir, { recursive: true });
  const resultFile = join(resultsDir, `${cellId(result.cell)}.json`);
  writeFileSync(resultFile, await formatted(resultFile, JSON.stringify(result)));
  const all = readdirSync(resultsDir)
    .filter((file) => file.endsWith('.json'))
    .map((file) => JSON.parse(readFileSync(join(resultsDir, file), 'utf8')) as CellResult);
  const table = matrixTable(all);
  const text = existsSync(page) ? readFileSync(page, 'utf8') : '# Compatibility\n';
  writeFileSync(page, await formatted(page, withTable(text, table)));
  return table;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { cells: { type: 'string' }, 'no-openkruise': { type: 'boolean' }, help: { type: 'boolean' } },
  });
  if (values.help) {
    process.stdout.write(
      'usage: npm run matrix [-- --cells K8S/RUNTIME,...] [--no-openkruise]\n' +
        `cells (default): ${MATRIX_CELLS.map((c) => `${c.kubernetes}/${c.runtime}`).join(', ')}\n` +
        `cells the local cluster also runs (--cells): ${KNOWN_CELLS.filter((c) => !MATRIX_CELLS.includes(c))
          .map((c) => `${c.kubernetes}/${c.runtime}`)
          .join(', ')}\n`,
    );
    return 0;
  }
  const cells = values.cells
    ? values.cells.split(',').map((text) => {
        const [kubernetes, runtime] = text.split('/');
        return parseStack(kubernetes, runtime);
      })
    : [...MATRIX_CELLS];
  let table = '';
  let green = true;
  for (const cell of cells) {
    const result = await runCell(cell, values['no-openkruise'] !== true);
    table = await writeResults(result);
    green &&= cellGreen(result);
    say(`${stackName(cell)}: ${cellGreen(result) ? 'green' : 'NOT green'}; docs/compatibility.md updated`);
  }
  process.stdout.write(`${table}\n`);
  return green ? 0 : 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`matrix: ${errorMessage(err)}\n`);
    process.exitCode = 2;
  },
);
