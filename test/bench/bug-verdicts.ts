// Pure helpers of `npm run bench -- openkruise-bugs`: one OpenKruise issue run on both agents, as a Markdown table row
// (issue, case, OpenKruise's verdict, ours, the evidence of each) and as figures (1 passed, 0 failed; durations); and
// the evidence read from log lines.
import type { Figure } from './framework.js';

export interface SideVerdict {
  passed: boolean;
  evidence: string;
  /** Wall time of the case on this agent (ms). */
  ms: number;
}

export interface BugVerdict {
  issue: number;
  title: string;
  ours: SideVerdict;
  theirs: SideVerdict;
}

const word = (v: SideVerdict): string => (v.passed ? 'passes' : 'fails');
/** Markdown cells hold no raw pipe or line break. */
const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');

/** The table: issue, case, OpenKruise, ours, and each side's evidence with its duration. */
export function verdictTable(verdicts: readonly BugVerdict[]): string {
  const header = '| issue | case | OpenKruise | ours | evidence (OpenKruise) | evidence (ours) |';
  const rule = '| ----- | ---- | ---------- | ---- | --------------------- | --------------- |';
  const rows = verdicts.map((v) =>
    [
      `#${v.issue}`,
      cell(v.title),
      word(v.theirs),
      word(v.ours),
      cell(`${v.theirs.evidence} (${(v.theirs.ms / 1000).toFixed(0)} s)`),
      cell(`${v.ours.evidence} (${(v.ours.ms / 1000).toFixed(0)} s)`),
    ].join(' | '),
  );
  return [header, rule, ...rows.map((r) => `| ${r} |`)].join('\n');
}

/** `issue<N>.passed.ours` / `.openkruise` (1 or 0) and the case's duration on each agent. */
export function verdictFigures(v: BugVerdict): Figure[] {
  const key = `issue${v.issue}`;
  return [
    { name: `${key}.passed.ours`, value: v.ours.passed ? 1 : 0, unit: 'bool', note: v.title },
    { name: `${key}.passed.openkruise`, value: v.theirs.passed ? 1 : 0, unit: 'bool' },
    { name: `${key}.duration.ours`, value: v.ours.ms, unit: 'ms' },
    { name: `${key}.duration.openkruise`, value: v.theirs.ms, unit: 'ms' },
  ];
}

/** client-go's line when its rate limiter held a request: `Waited for 1.2s due to client-side throttling, ...`. */
const THROTTLED = /Waited for ([\d.]+)(m?s) due to client-side throttling/;

/** The client-side waits in the agent's log lines (seconds). */
export function throttleWaits(lines: readonly string[]): number[] {
  return lines.flatMap((line) => {
    const m = THROTTLED.exec(line);
    return m ? [Number(m[1]) / (m[2] === 'ms' ? 1000 : 1)] : [];
  });
}
