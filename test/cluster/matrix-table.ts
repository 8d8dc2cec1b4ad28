// The compatibility matrix's results and table (docs/compatibility.md): one JSON file per cell under
// docs/compatibility/, the table between two markers of the page rebuilt from all of them, so a run of some cells
// changes only their rows. Pure text builders and the parsers of what the suites print.
import type { Stack, StackVersions } from './stack.js';

/** One suite's outcome in a cell. */
export interface SuiteResult {
  passed: number;
  failed: number;
  /** Cases that failed for a reason outside our product, accepted as such (OpenKruise's suites' KNOWN cases). */
  known: number;
  /** The failing cases by name, each with the first line of its cause. */
  failures: string[];
  seconds: number;
  /** Set when the suite could not run at all (the cluster did not come up, the binary could not be built...). */
  error?: string;
}

export interface CellResult {
  cell: Stack;
  versions: StackVersions;
  /** When the run ended, ISO 8601. */
  date: string;
  /** The checkout the cell ran from: `git describe --always --dirty` (a `-dirty` row is not one commit's). */
  commit?: string;
  /** `up` of a cell whose binaries were all cached. */
  warmUpSeconds?: number;
  /** `up` that first built the cell's binaries (kept from an earlier run when this one was warm). */
  coldUpSeconds?: number;
  /** mocha's e2e suites (test/e2e). */
  e2e?: SuiteResult;
  /** OpenKruise's own e2e suites by name (`npm run openkruise-e2e -- <suite>`). */
  openkruise: Record<string, SuiteResult>;
  /** Load average while the cell ran (1-minute, at its start and end): the machine is shared. */
  load: [number, number];
}

export function cellId(cell: Stack): string {
  return `k8s-${cell.kubernetes}-${cell.runtime}`;
}

export const TABLE_BEGIN = '<!-- matrix:begin (written by `npm run matrix`; edit outside the markers) -->';
export const TABLE_END = '<!-- matrix:end -->';

/** mocha's JSON reporter output (the fields read here). */
export interface MochaJson {
  stats?: { passes?: number; failures?: number; pending?: number; duration?: number };
  failures?: { fullTitle?: string; err?: { message?: string } }[];
}

export function suiteFromMocha(report: MochaJson): SuiteResult {
  const failures = (report.failures ?? []).map(
    (f) => `${f.fullTitle ?? '(untitled)'}: ${(f.err?.message ?? '').split('\n')[0]?.slice(0, 200) ?? ''}`,
  );
  return {
    passed: report.stats?.passes ?? 0,
    failed: report.stats?.failures ?? failures.length,
    known: 0,
    failures,
    seconds: Math.round((report.stats?.duration ?? 0) / 1000),
  };
}

/**
 * `npm run openkruise-e2e`'s output: its verdict line (`SUCCESS|ACCEPTED|FAIL: N passed, M failed (K known, not
 * ours), ...; S s`) and its case lines (`FAILED ...` with the cause on the next line).
 */
export function suiteFromOpenKruiseOutput(output: string): SuiteResult {
  const lines = output.split('\n');
  const verdict = lines
    .map((line) =>
      /(SUCCESS|ACCEPTED|FAIL): (\d+) passed, (\d+) failed \((\d+) known, not ours\).*?(\d+) s\s*$/.exec(line),
    )
    .find((match) => match !== null);
  if (!verdict) {
    const tail = lines
      .filter((line) => line.trim() !== '')
      .slice(-3)
      .join(' | ');
    return { passed: 0, failed: 0, known: 0, failures: [], seconds: 0, error: `no verdict line: ${tail}` };
  }
  const failures: string[] = [];
  lines.forEach((line, index) => {
    const head = /^(?:\s*)(FAILED|PANICKED|TIMEDOUT|INTERRUPTED)\s+[\d.]+ s\s+(.*)$/.exec(line);
    if (head) failures.push(`${head[2]}: ${(lines[index + 1] ?? '').trim().slice(0, 200)}`);
  });
  return {
    passed: Number(verdict[2]),
    failed: Number(verdict[3]) - Number(verdict[4]),
    known: Number(verdict[4]),
    failures,
    seconds: Number(verdict[5]),
  };
}

function minutes(seconds: number | undefined): string {
  return seconds === undefined ? '—' : `${(seconds / 60).toFixed(1)} min`;
}

function suiteCell(suite: SuiteResult | undefined): string {
  if (!suite) return 'not run';
  if (suite.error) return `error: ${suite.error}`;
  const known = suite.known > 0 ? `, ${suite.known} known` : '';
  return `${suite.passed} passed, ${suite.failed} failed${known}`;
}

function escapeCell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

/** The table rows, newest Kubernetes first, then by runtime. */
export function matrixTable(results: readonly CellResult[]): string {
  const sorted = [...results].sort(
    (a, b) =>
      Number(b.cell.kubernetes.split('.')[1]) - Number(a.cell.kubernetes.split('.')[1]) ||
      a.cell.runtime.localeCompare(b.cell.runtime),
  );
  const rows = sorted.map((r) => {
    const suites = Object.entries(r.openkruise)
      .map(([name, suite]) => `${name}: ${suiteCell(suite)}`)
      .join('; ');
    const failures = [
      ...(r.e2e?.failures ?? []).map((f) => `e2e: ${f}`),
      ...Object.entries(r.openkruise).flatMap(([name, suite]) => suite.failures.map((f) => `openkruise ${name}: ${f}`)),
    ];
    return [
      `Kubernetes ${r.versions.kubernetes} on ${r.cell.runtime} (${r.versions.runtime === 'debian' ? "Debian's" : r.versions.runtime})`,
      r.commit === undefined ? r.date.slice(0, 10) : `${r.date.slice(0, 10)} at ${r.commit}`,
      suiteCell(r.e2e),
      suites || 'not run',
      failures.length > 0 ? failures.join('<br>') : 'none',
      `cold ${minutes(r.coldUpSeconds)}, warm ${minutes(r.warmUpSeconds)}; e2e ${minutes(r.e2e?.seconds)}; load ${r.load[0].toFixed(1)}-${r.load[1].toFixed(1)}`,
    ]
      .map(escapeCell)
      .join(' | ');
  });
  return [
    '| cell | date, commit | e2e (test/e2e) | OpenKruise e2e suites | failures by name | time (up cold/warm; e2e) |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows.map((row) => `| ${row} |`),
  ].join('\n');
}

/** The page with its table between the markers replaced (appended at the end when the markers are missing). */
export function withTable(page: string, table: string): string {
  const begin = page.indexOf(TABLE_BEGIN);
  const end = page.indexOf(TABLE_END);
  const block = `${TABLE_BEGIN}\n${table}\n${TABLE_END}`;
  if (begin === -1 || end === -1 || end < begin) return `${page.trimEnd()}\n\n${block}\n`;
  return `${page.slice(0, begin)}${block}${page.slice(end + TABLE_END.length)}`;
}

/** A cell green: every suite ran, nothing failed beyond OpenKruise's known cases. */
export function cellGreen(result: CellResult): boolean {
  const suites = [result.e2e, ...Object.values(result.openkruise)];
  return suites.every((suite) => suite !== undefined && suite.error === undefined && suite.failed === 0);
}
