// Files shipped beside the code (proto/, deploy/) are found from the package root, whatever the build's outDir.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

/** The directory holding this package's package.json, searched upwards from this file. */
export function packageRoot(): string {
  if (cached) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'proto'))) {
      cached = dir;
      return dir;
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`package root not found above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}
