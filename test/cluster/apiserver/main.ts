// The API emulator as a process (test infrastructure): `node main.js --config <file>` where the file is
// {"host":"127.0.0.1","port":N,"dataFile":"/path/state.json","watchWindow":10000,"bookmarkIntervalMs":60000}.
// SIGTERM/SIGINT stop it after saving its state to dataFile.
import { readFile } from 'node:fs/promises';
import { createLogger } from '../../../src/observability/logger.js';
import { startApiServer, type ApiServerOptions } from './index.js';
import { parseProcessConfig } from './process-config.js';

async function main(): Promise<void> {
  const logger = createLogger('kube-api-emulator');
  const at = process.argv.indexOf('--config');
  const file = at >= 0 ? process.argv[at + 1] : undefined;
  if (!file) {
    console.error('usage: main.js --config <config.json>');
    process.exit(2);
  }
  const config = parseProcessConfig(await readFile(file, 'utf8'));
  const options: ApiServerOptions = { ...config, logger };
  const server = await startApiServer(options);
  logger.info({ url: server.url, dataFile: config.dataFile }, 'kube API emulator (test infrastructure) ready');
  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    server.close().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'stop failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  console.error(`kube API emulator failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
