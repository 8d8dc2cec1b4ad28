// Preloaded with `node --import` by a test: prints every module the process resolves as `[module] URL` on
// stderr, so the test can check what the agent loads (the memory budget forbids client-node's API code).
import { registerHooks } from 'node:module';

registerHooks({
  resolve(specifier, context, nextResolve) {
    const result = nextResolve(specifier, context);
    process.stderr.write(`[module] ${result.url}\n`);
    return result;
  },
});
