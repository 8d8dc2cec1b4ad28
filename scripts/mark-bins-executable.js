// `npm run build`'s last step: tsc writes files 0644, but the commands of package.json's "bin" are run directly
// (by npx, by a user typing their path), so each gets the execute bits (chmod a+x).
import { chmodSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
for (const file of new Set(Object.values(pkg.bin ?? {}))) {
  const path = join(root, file);
  chmodSync(path, statSync(path).mode | 0o111);
}
