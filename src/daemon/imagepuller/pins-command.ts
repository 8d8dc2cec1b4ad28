// `kruise-daemon pins ls|release [--runtime-socket PATH]`: the pins the image puller holds on this node's runtime
// (references marked apps.kruise.io/pinned-by=kruise-daemon), and their release. A running agent keeps its pins in
// step with the NodeImage; `release` is for a node whose agent is gone for good (uninstall), since an agent that
// stops leaves its pins for the next one to keep or release.
import { parseArgs } from 'node:util';
import { connectRuntime, type CriClient } from '../../cri/index.js';
import { errorMessage } from '../../util/error-message.js';
import { parseArgsProblem } from '../../util/parse-args-problem.js';
import type { CommandIo } from '../command-io.js';
import { PINNED_BY_LABEL, PINNED_BY_VALUE, releaseAllPins } from './image-pins.js';
import { pinStoreFor } from './runtime-stores.js';

export const PINS_COMMAND_USAGE = `Usage: kruise-daemon pins ls|release [--runtime-socket PATH]

The images the agent pinned in the container runtime (so kubelet's image GC keeps them while their tags are in the
node's NodeImage), marked ${PINNED_BY_LABEL}=${PINNED_BY_VALUE}. Pins of the runtime or an admin are never listed
or touched.
  ls                     one reference per line
  release                unpin every one of them (after uninstalling the agent; a running agent pins again what
                         its NodeImage still wants)
  --runtime-socket PATH  the runtime's socket (default: $RUNTIME_SOCKET, else the first that answers under
                         /hostvarrun, as the agent)`;

const FLAGS = { 'runtime-socket': { type: 'string' }, help: { type: 'boolean', short: 'h' } } as const;

export async function runPinsCommand(argv: string[], io: CommandIo): Promise<number> {
  let values: { 'runtime-socket'?: string; help?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({ args: argv, options: FLAGS, allowPositionals: true, strict: true }));
  } catch (err) {
    io.stderr.write(`kruise-daemon pins: ${parseArgsProblem(err)}\n${PINS_COMMAND_USAGE}\n`);
    return 2;
  }
  if (values.help) {
    io.stdout.write(`${PINS_COMMAND_USAGE}\n`);
    return 0;
  }
  const action = positionals[0];
  if (positionals.length !== 1 || (action !== 'ls' && action !== 'release')) {
    io.stderr.write(`kruise-daemon pins: expected ls or release\n${PINS_COMMAND_USAGE}\n`);
    return 2;
  }
  let client: CriClient | undefined;
  try {
    client = await connectRuntime({ socket: values['runtime-socket'], env: io.env });
    const store = await pinStoreFor(client);
    if ('unsupported' in store) {
      io.stderr.write(`kruise-daemon pins ${action}: nothing to do: ${store.unsupported}\n`);
      return 0;
    }
    try {
      const references =
        action === 'ls'
          ? (await store.listLabelled(PINNED_BY_LABEL, PINNED_BY_VALUE)).map((image) => image.name).sort()
          : await releaseAllPins(store);
      for (const reference of references) io.stdout.write(`${reference}\n`);
      if (action === 'release') io.stderr.write(`released ${references.length} pin(s)\n`);
      return 0;
    } finally {
      store.close?.();
    }
  } catch (err) {
    io.stderr.write(`kruise-daemon pins ${action}: ${errorMessage(err)}\n`);
    return 1;
  } finally {
    client?.close();
  }
}
