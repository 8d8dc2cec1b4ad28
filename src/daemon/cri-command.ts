// `kruise-daemon cri <info|images|pull|ps>`: look at the node's container runtime through the same CRI client
// the agent uses. Exit codes: 0 done, 1 the runtime failed (or none was found), 2 bad usage.
// Credentials given to `pull` are passed to the runtime and never printed.
import { parseArgs } from 'node:util';
import { validateImageReference } from '../api/image-reference.js';
import { connectRuntime, CriError, type AuthConfig, type CriClient } from '../cri/index.js';
import {
  imageDocuments,
  infoDocument,
  psDocument,
  renderImages,
  renderInfo,
  renderPs,
  type PsDocument,
} from '../cri/present.js';
import { errorMessage } from '../util/error-message.js';

export interface CriCommandIo {
  stdout: { write(chunk: string): unknown };
  stderr: { write(chunk: string): unknown };
  env: Record<string, string | undefined>;
  /** Read by `pull --password-stdin` (default process.stdin). */
  stdin?: AsyncIterable<string | Buffer>;
  /** Current time for "created ... ago" (default Date.now). */
  now?: () => number;
}

export const CRI_USAGE = `Usage: kruise-daemon cri <command> [options]

Look at the node's container runtime through CRI (the same client the agent uses).

Commands:
  info          runtime name and version, CRI API version, socket, runtime conditions
  images        images on the node
  pull IMAGE    pull an image; with credentials: --username USER and --password-stdin (or --password PASS)
  ps            pod sandboxes and containers, with their state

Options:
  --runtime-socket PATH   CRI socket of the runtime (default: $RUNTIME_SOCKET, else the first that answers
                          under the host run dir: containerd.sock, containerd/containerd.sock, crio.sock, ...)
  --host-run-dir DIR      where the host's /var/run is mounted (default /hostvarrun)
  --timeout DURATION      deadline of each call, e.g. 500ms, 10s, 2m (default: 5s to connect, then per call;
                          pull 10m)
  --json                  print JSON instead of a table
  --username USER         (pull) registry user
  --password PASS         (pull) registry password; visible to other users of this machine, prefer:
  --password-stdin        (pull) read the password from standard input
  -h, --help              show this help

Exit codes: 0 done, 1 runtime error or no runtime found, 2 bad usage.
`;

class UsageError extends Error {}

interface CriCommandLine {
  command: 'info' | 'images' | 'pull' | 'ps';
  image?: string;
  json: boolean;
  socket?: string;
  hostRunDir?: string;
  timeoutMs?: number;
  username?: string;
  password?: string;
  passwordStdin: boolean;
}

const COMMANDS = ['info', 'images', 'pull', 'ps'] as const;

/** "500ms", "10s", "2m", "1h", or a bare number of seconds; positive. */
export function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;
  const ms = match ? Number(match[1]) * unit[(match[2] ?? 's') as keyof typeof unit] : NaN;
  if (!Number.isFinite(ms) || ms <= 0) {
    throw new UsageError(`--timeout ${JSON.stringify(text)} is not a positive duration (e.g. 500ms, 10s, 2m)`);
  }
  return ms;
}

/** Parse argv (after `cri`); 'help' for --help / help. Throws UsageError. */
export function parseCriCommandLine(argv: readonly string[]): CriCommandLine | 'help' {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        'runtime-socket': { type: 'string' },
        'host-run-dir': { type: 'string' },
        timeout: { type: 'string' },
        json: { type: 'boolean', default: false },
        username: { type: 'string' },
        password: { type: 'string' },
        'password-stdin': { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (err) {
    throw new UsageError(errorMessage(err));
  }
  const { values, positionals } = parsed;
  if (values.help || positionals[0] === 'help') return 'help';
  const [command, ...rest] = positionals;
  if (command === undefined) throw new UsageError('no command given (info, images, pull, ps)');
  if (!(COMMANDS as readonly string[]).includes(command)) {
    throw new UsageError(`unknown command ${JSON.stringify(command)} (info, images, pull, ps)`);
  }
  const line: CriCommandLine = {
    command: command as CriCommandLine['command'],
    json: values.json,
    passwordStdin: values['password-stdin'],
  };
  for (const [flag, value] of [
    ['--runtime-socket', values['runtime-socket']],
    ['--host-run-dir', values['host-run-dir']],
  ] as const) {
    if (value !== undefined && value.trim() === '') throw new UsageError(`${flag} is empty`);
  }
  if (values['runtime-socket'] !== undefined) line.socket = values['runtime-socket'].trim();
  if (values['host-run-dir'] !== undefined) line.hostRunDir = values['host-run-dir'].trim();
  if (values.timeout !== undefined) line.timeoutMs = parseDuration(values.timeout);

  const credentialFlags = values.username !== undefined || values.password !== undefined || line.passwordStdin;
  if (command === 'pull') {
    if (rest.length !== 1) throw new UsageError('pull takes exactly one IMAGE');
    const image = rest[0] ?? '';
    const problem = validateImageReference(image);
    if (problem) throw new UsageError(problem);
    line.image = image;
    if (values.password !== undefined && line.passwordStdin) {
      throw new UsageError('give either --password or --password-stdin, not both');
    }
    if (values.username === undefined && (values.password !== undefined || line.passwordStdin)) {
      throw new UsageError('a password needs --username');
    }
    if (values.username !== undefined) {
      if (values.username === '') throw new UsageError('--username is empty');
      if (values.password === undefined && !line.passwordStdin) {
        throw new UsageError('--username needs --password-stdin (or --password)');
      }
      line.username = values.username;
      if (values.password !== undefined) line.password = values.password;
    }
  } else {
    if (rest.length > 0) throw new UsageError(`${command} takes no arguments, got ${rest.join(' ')}`);
    if (credentialFlags) throw new UsageError('--username/--password/--password-stdin are for pull only');
  }
  return line;
}

async function readPassword(stdin: AsyncIterable<string | Buffer>): Promise<string> {
  let text = '';
  for await (const chunk of stdin) {
    text += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    if (text.length > 64 * 1024) throw new UsageError('--password-stdin: more than 64 KiB on standard input');
  }
  const password = text.replace(/\r?\n$/, '');
  if (password === '') throw new UsageError('--password-stdin: standard input is empty');
  return password;
}

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

async function info(client: CriClient, line: CriCommandLine): Promise<string> {
  const version = await client.version();
  const status = await client.status().catch((err: unknown) => {
    if (err instanceof CriError && err.kind === 'Unimplemented') return undefined;
    throw err;
  });
  const doc = infoDocument(client.socketPath, version, status);
  return line.json ? json(doc) : renderInfo(doc);
}

async function images(client: CriClient, line: CriCommandLine): Promise<string> {
  const docs = imageDocuments((await client.listImages()).images);
  if (line.json) return json(docs);
  return docs.length === 0 ? 'No images.\n' : renderImages(docs);
}

async function pull(client: CriClient, line: CriCommandLine, password: string | undefined): Promise<string> {
  const image = line.image ?? '';
  const auth: AuthConfig | undefined = line.username
    ? { username: line.username, password: password ?? '' }
    : undefined;
  const started = performance.now();
  const response = await client.pullImage({ image: { image }, ...(auth ? { auth } : {}) });
  const ms = Math.round(performance.now() - started);
  if (line.json) return json({ image, imageRef: response.image_ref, ms });
  return `Pulled ${image} (${response.image_ref}) in ${ms} ms\n`;
}

async function ps(client: CriClient, line: CriCommandLine, now: number): Promise<string> {
  const [sandboxes, containers, imageList] = await Promise.all([
    client.listPodSandbox(),
    client.listContainers(),
    client.listImages(),
  ]);
  const doc: PsDocument = psDocument(sandboxes.items, containers.containers);
  // containerd reports the reference the container was created with; some runtimes give the image ID
  // instead: show a tag for those where the node has one.
  const tagOf = new Map(imageList.images.map((i) => [i.id, i.repo_tags[0] ?? i.repo_digests[0] ?? i.id]));
  for (const c of doc.containers) c.image = tagOf.get(c.image) ?? c.image;
  return line.json ? json(doc) : renderPs(doc, now);
}

/** Entry point: argv after `cri`; resolves with the exit code. */
export async function runCriCommand(argv: string[], io: CriCommandIo): Promise<number> {
  let line: CriCommandLine | 'help';
  let password: string | undefined;
  try {
    line = parseCriCommandLine(argv);
    if (line !== 'help') {
      password = line.password;
      if (line.passwordStdin) password = await readPassword(io.stdin ?? process.stdin);
    }
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.stderr.write(`kruise-daemon cri: ${err.message}\nRun 'kruise-daemon cri --help' for usage.\n`);
    return 2;
  }
  if (line === 'help') {
    io.stdout.write(CRI_USAGE);
    return 0;
  }

  let client: CriClient | undefined;
  try {
    client = await connectRuntime({
      socket: line.socket,
      hostRunDir: line.hostRunDir,
      timeoutMs: line.timeoutMs,
      callTimeoutMs: line.timeoutMs,
      env: io.env,
    });
    const now = (io.now ?? Date.now)();
    let output: string;
    switch (line.command) {
      case 'info':
        output = await info(client, line);
        break;
      case 'images':
        output = await images(client, line);
        break;
      case 'pull':
        output = await pull(client, line, password);
        break;
      case 'ps':
        output = await ps(client, line, now);
        break;
    }
    io.stdout.write(output);
    return 0;
  } catch (err) {
    // CriError and CriDiscoveryError carry the whole story; anything else is reported the same way.
    const message = errorMessage(err);
    io.stderr.write(`kruise-daemon cri ${line.command}: ${message}\n`);
    return 1;
  } finally {
    client?.close();
  }
}
