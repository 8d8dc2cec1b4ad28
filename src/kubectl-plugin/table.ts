// Plain-text tables as kubectl prints them: upper-case headers, columns padded to the widest cell, two spaces apart.

export function renderTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  return (
    [header, ...rows]
      .map((row) =>
        header
          .map((_, i) => (row[i] ?? '').padEnd(widths[i] ?? 0))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}
