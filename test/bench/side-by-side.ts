// Pure helpers of the side-by-side bench (ours vs OpenKruise's kruise-daemon): one measured quantity as figures for
// both agents and their ratio, the same as a Markdown table row, and a process's CPU time from /proc/PID/stat.
import type { Figure } from './framework.js';

/** One quantity measured for both agents. */
export interface Pair {
  name: string;
  unit: string;
  ours: number;
  theirs: number;
  note?: string;
}

/** ours / theirs, or undefined when theirs is 0 (no ratio to give). */
export function ratio(pair: Pair): number | undefined {
  return pair.theirs === 0 ? undefined : pair.ours / pair.theirs;
}

/** `<name>.ours`, `<name>.openkruise` and `<name> ours/openkruise` (the last left out when OpenKruise's is 0). */
export function sideBySide(pair: Pair): Figure[] {
  const figures: Figure[] = [
    { name: `${pair.name}.ours`, value: pair.ours, unit: pair.unit, ...(pair.note ? { note: pair.note } : {}) },
    { name: `${pair.name}.openkruise`, value: pair.theirs, unit: pair.unit },
  ];
  const r = ratio(pair);
  if (r !== undefined) figures.push({ name: `${pair.name} ours/openkruise`, value: r, unit: 'x' });
  return figures;
}

function cell(value: number): string {
  if (Number.isInteger(value)) return String(value);
  return Math.abs(value) >= 100 ? value.toFixed(0) : value.toFixed(2);
}

/** A Markdown table of the pairs: figure, unit, ours, OpenKruise, ours/OpenKruise ('-' when OpenKruise's is 0). */
export function markdownTable(pairs: readonly Pair[]): string {
  const rows = pairs.map((p) => {
    const r = ratio(p);
    return [p.name, p.unit, cell(p.ours), cell(p.theirs), r === undefined ? '-' : r.toFixed(2)];
  });
  const header = ['figure', 'unit', 'ours', 'OpenKruise', 'ours/OpenKruise'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/**
 * utime + stime of a process (every thread), in clock ticks, from the text of /proc/PID/stat. The command name in
 * parentheses may hold spaces and parentheses: fields are counted after its last ')'.
 */
export function cpuTicksOfStat(stat: string): number {
  const end = stat.lastIndexOf(')');
  if (end < 0) throw new Error(`not a /proc/PID/stat line: ${stat.slice(0, 60)}`);
  // after the name: state (field 3), ppid, ..., utime (field 14), stime (field 15)
  const fields = stat
    .slice(end + 1)
    .trim()
    .split(/\s+/);
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) throw new Error(`no utime/stime in: ${stat.slice(0, 60)}`);
  return utime + stime;
}
