// README.md's shell blocks that tests run as written: each follows an HTML comment naming the test file.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../src/util/repo-root.js';

/** The first ```sh block after `marker` in the given README text. */
export function shBlockAfter(readme: string, marker: string): string {
  const at = readme.indexOf(marker);
  assert.ok(at >= 0, `README.md marks the block: ${marker}`);
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(at));
  assert.ok(block, `a sh block follows ${marker}`);
  return block[1]!;
}

/** The ```sh block of the repository's README.md marked with `<!-- <testFile> runs this block ... -->`. */
export function readmeBlock(testFile: string): string {
  return shBlockAfter(readFileSync(join(packageRoot(), 'README.md'), 'utf8'), `${testFile} runs this block`);
}
