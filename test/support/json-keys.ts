// Keys written twice in one JSON object of a text: JSON.parse keeps the last and hides the rest, so a log line that
// names a field twice (a child logger's binding and the line's own field) looks fine once parsed.

/** `path.key` of every key that occurs twice in the same object of `text` (valid JSON). */
export function duplicateKeys(text: string): string[] {
  let i = 0;
  const found: string[] = [];
  const space = (): void => {
    while (/\s/.test(text[i] ?? '')) i++;
  };
  const string = (): string => {
    const start = i++;
    while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const value = (path: string): void => {
    space();
    const c = text[i];
    if (c === '{') object(path);
    else if (c === '[') {
      i++;
      for (let n = 0; ; n++) {
        space();
        if (text[i] === ']') break;
        value(`${path}[${n}]`);
        space();
        if (text[i] === ',') i++;
      }
      i++;
    } else if (c === '"') string();
    else while (i < text.length && !/[,\]}\s]/.test(text[i]!)) i++;
  };
  const object = (path: string): void => {
    i++;
    const keys = new Set<string>();
    for (;;) {
      space();
      if (text[i] === '}') break;
      const key = string();
      if (keys.has(key)) found.push(`${path}${key}`);
      keys.add(key);
      space();
      i++; // ':'
      value(`${path}${key}.`);
      space();
      if (text[i] === ',') i++;
    }
    i++;
  };
  value('');
  return found;
}
