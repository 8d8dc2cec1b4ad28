// A reader of the Prometheus text exposition format (what an agent's /metrics serves): samples with their labels.
// Comments, HELP and TYPE lines are skipped; a malformed line is skipped too (a plugin never fails over one line).

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(\s+\S+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?\s*/y;

function parseLabels(text: string): Record<string, string> | undefined {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const at = LABEL.lastIndex;
    const m = LABEL.exec(text);
    if (!m || LABEL.lastIndex === at) return undefined;
    labels[m[1]!] = m[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
  }
  return labels;
}

export function parsePrometheusText(text: string): Sample[] {
  const out: Sample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = SAMPLE.exec(line);
    if (!m) continue;
    const labels = m[3] === undefined ? {} : parseLabels(m[3]);
    const value = Number(m[4] === '+Inf' ? Infinity : m[4] === '-Inf' ? -Infinity : m[4]);
    if (!labels || Number.isNaN(value)) continue;
    out.push({ name: m[1]!, labels, value });
  }
  return out;
}
