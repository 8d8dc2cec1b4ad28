// <CLUSTER_DIR>/env: the variables of a running local cluster, as lines a shell can `source`
// (`export KEY='value'`). It holds the auth registry's password, so it is written with mode 0600.
import { randomBytes } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';

const KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;
const LINE = /^export ([A-Za-z_][A-Za-z0-9_]*)=(.*)$/;

/** Single-quote a value for a POSIX shell: ' becomes '\''. */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

export function formatEnvFile(vars: Record<string, string>, header?: string): string {
  const lines: string[] = [];
  if (header) for (const line of header.split('\n')) lines.push(`# ${line}`);
  for (const [key, value] of Object.entries(vars)) {
    if (!KEY.test(key)) throw new Error(`env file: ${JSON.stringify(key)} is not a valid variable name`);
    if (/[\n\r\0]/.test(value)) throw new Error(`env file: the value of ${key} contains a line break or NUL`);
    lines.push(`export ${key}=${shellQuote(value)}`);
  }
  return `${lines.join('\n')}\n`;
}

/** Parse what formatEnvFile wrote: `export K='v'` lines, blank lines and # comments. */
export function parseEnvFile(text: string): Record<string, string> {
  const vars: Record<string, string> = {};
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const match = LINE.exec(line);
    if (!match) throw new Error(`env file line ${index + 1}: expected export KEY='value', got ${JSON.stringify(line)}`);
    vars[match[1]!] = unquote(match[2]!, index + 1);
  });
  return vars;
}

function unquote(quoted: string, lineNumber: number): string {
  let value = '';
  let i = 0;
  while (i < quoted.length) {
    if (quoted.startsWith(`\\'`, i)) {
      value += "'";
      i += 2;
    } else if (quoted[i] === "'") {
      const end = quoted.indexOf("'", i + 1);
      if (end < 0) throw new Error(`env file line ${lineNumber}: unterminated quote`);
      value += quoted.slice(i + 1, end);
      i = end + 1;
    } else {
      throw new Error(`env file line ${lineNumber}: values must be single-quoted`);
    }
  }
  return value;
}

/** Write the env file atomically (temp file + rename), mode 0600. */
export async function writeEnvFile(path: string, vars: Record<string, string>, header?: string): Promise<void> {
  const temp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(temp, formatEnvFile(vars, header), { mode: 0o600 });
  await rename(temp, path);
}

/** The variables of an env file, or undefined when it does not exist. */
export async function readEnvFile(path: string): Promise<Record<string, string> | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  return parseEnvFile(text);
}
