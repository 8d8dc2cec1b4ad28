// `node dist/test/cluster/image/cli.js [--push HOST:PORT]`: build the kruise-daemon image (or find it in the cache),
// print where it is, its tag, digest and sizes as JSON; with --push, copy it to that (plain http) registry too.
import { parseArgs } from 'node:util';
import { errorMessage } from '../runtime/errors.js';
import { ensureImage, imageSizes } from './build.js';
import { pushImage } from './component.js';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { push: { type: 'string' } } });
  const started = Date.now();
  const image = await ensureImage({ log: (message) => process.stderr.write(`${message}\n`) });
  const ensureMs = Date.now() - started;
  const sizes = await imageSizes(image.layout, image.tag);
  const pushed = values.push === undefined ? undefined : await pushImage(image, values.push);
  process.stdout.write(`${JSON.stringify({ ...image, ensureMs, sizes, pushed }, null, 2)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`image: ${errorMessage(err)}\n`);
  process.exit(1);
});
