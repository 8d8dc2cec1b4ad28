// A small benchmark framework: named suites, each returning figures; the runner prints them as aligned text
// and, at the end, one JSON line with every figure (for scripts and CI history).
import { errorMessage } from '../../src/util/error-message.js';

export interface Figure {
  /** Stable key within the suite, e.g. `Version.p50`. */
  name: string;
  value: number;
  /** ms, MiB, x (a ratio), count, ... */
  unit: string;
  /** Anything a reader needs to interpret the number (iterations, conditions). */
  note?: string;
}

export interface BenchContext {
  /** Iterations per measured operation (--iterations). */
  iterations: number;
  /** --long: suites that measure a steady state use their long window (e.g. 10 min instead of 2). */
  long: boolean;
  /** Progress for humans, on stderr (plain functions, so a suite may destructure them). */
  log: (message: string) => void;
  /** Register cleanup for what the suite started; run after the suite, last registered first, also on failure. */
  defer: (cleanup: () => unknown) => void;
}

export interface BenchSuite {
  name: string;
  description: string;
  /** Part of `npm run bench` without suite names. */
  inDefaultRun: boolean;
  run(context: BenchContext): Promise<Figure[]>;
}

export interface SuiteOutcome {
  suite: string;
  figures: Figure[];
  /** Set when the suite failed; its figures so far are kept. */
  error?: string;
  seconds: number;
}

/** Cleanups of the suite now running, so a signal handler can run them (abortRunningSuite). */
const pendingCleanups: Array<() => unknown> = [];

/** Run the running suite's cleanups now (SIGINT/SIGTERM). */
export async function abortRunningSuite(log: (message: string) => void): Promise<void> {
  await runCleanups(pendingCleanups.splice(0), log);
}

async function runCleanups(cleanups: Array<() => unknown>, log: (message: string) => void): Promise<void> {
  for (const cleanup of cleanups.reverse()) {
    try {
      await cleanup();
    } catch (err) {
      log(`cleanup failed: ${errorMessage(err)}`);
    }
  }
}

/** Run suites one after another; a failing suite is reported and the others still run. */
export async function runSuites(
  suites: readonly BenchSuite[],
  iterations: number,
  log: (message: string) => void,
  long = false,
): Promise<SuiteOutcome[]> {
  const outcomes: SuiteOutcome[] = [];
  for (const suite of suites) {
    const started = performance.now();
    const context: BenchContext = {
      iterations,
      long,
      log: (message) => log(`[${suite.name}] ${message}`),
      defer: (cleanup) => void pendingCleanups.push(cleanup),
    };
    let outcome: SuiteOutcome;
    try {
      const figures = await suite.run(context);
      outcome = { suite: suite.name, figures, seconds: 0 };
    } catch (err) {
      outcome = { suite: suite.name, figures: [], error: errorMessage(err), seconds: 0 };
    }
    await runCleanups(pendingCleanups.splice(0), (m) => log(`[${suite.name}] ${m}`));
    outcome.seconds = (performance.now() - started) / 1000;
    outcomes.push(outcome);
  }
  return outcomes;
}

/** Plain aligned text: one block per suite, one line per figure. */
export function formatText(outcomes: readonly SuiteOutcome[]): string {
  const lines: string[] = [];
  for (const outcome of outcomes) {
    lines.push(`${outcome.suite} (${outcome.seconds.toFixed(1)} s)`);
    if (outcome.error) lines.push(`  FAILED: ${outcome.error}`);
    const rows = outcome.figures.map((f) => [f.name, formatNumber(f.value), f.unit, f.note ?? '']);
    const widths = [0, 1, 2].map((i) => Math.max(0, ...rows.map((r) => r[i]!.length)));
    for (const [name, value, unit, note] of rows) {
      const line = `  ${name!.padEnd(widths[0]!)}  ${value!.padStart(widths[1]!)} ${unit!.padEnd(widths[2]!)}  ${note}`;
      lines.push(line.trimEnd());
    }
  }
  return lines.join('\n');
}

/** One JSON line with every figure: {"bench":"kruise-daemon","suites":{"cri":{"Version.p50":{"value":..,"unit":"ms"}}}}. */
export function formatJson(outcomes: readonly SuiteOutcome[], meta: Record<string, string | number>): string {
  const suites: Record<string, Record<string, { value: number; unit: string }> | { error: string }> = {};
  for (const outcome of outcomes) {
    if (outcome.error) {
      suites[outcome.suite] = { error: outcome.error };
      continue;
    }
    suites[outcome.suite] = Object.fromEntries(
      outcome.figures.map((f) => [f.name, { value: round(f.value), unit: f.unit }]),
    );
  }
  return JSON.stringify({ bench: 'kruise-daemon', ...meta, suites });
}

function formatNumber(value: number): string {
  if (Number.isInteger(value)) return String(value);
  return Math.abs(value) >= 100 ? value.toFixed(1) : value.toFixed(2);
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

/**
 * Figures measured now beside the ones recorded on another setup (`where`, e.g. "kubelet-lite"): each figure with a
 * recorded value by name gets that value in its note and a `<name> new/old` ratio after it (none for a recorded 0).
 */
export function besideRecorded(
  figures: readonly Figure[],
  recorded: Readonly<Record<string, number>>,
  where: string,
): Figure[] {
  return figures.flatMap((figure) => {
    const old = recorded[figure.name];
    if (old === undefined) return [figure];
    const was = `on ${where}: ${old} ${figure.unit}`;
    const noted = { ...figure, note: figure.note ? `${figure.note}; ${was}` : was };
    if (old === 0) return [noted];
    return [noted, { name: `${figure.name} new/old`, value: Math.round((figure.value / old) * 100) / 100, unit: 'x' }];
  });
}
