// emulator: kruise-controller as a real process against the API emulator (no kube-apiserver needed for this).
// Without --webhook-client-ca the controller says loudly that its webhooks answer anyone (a warning at start, the
// metric kruise_controller_webhook_client_auth 0); with a CA file it cannot read, or one that holds no CA, it does
// not start (a broken setting never falls back to answering anyone).
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { waitFor } from '../../support/wait.js';
import { startControllerEnv, type ControllerEnv } from './controller-env.js';
import { ControllerProcess, freePort } from './controller-process.js';

describe('kruise-controller: webhook client authentication at start (emulator)', function () {
  this.timeout(120_000);
  let env: ControllerEnv;

  before(async () => {
    env = await startControllerEnv();
  });
  after(() => env?.close());

  it('without --webhook-client-ca: a warning at start and kruise_controller_webhook_client_auth 0', async () => {
    const controller = await env.startController();
    try {
      const warning = await waitFor(() => controller.findLog(/NOT authenticating their callers/), {
        timeoutMs: 30_000,
        message: 'the warning',
      });
      assert.equal(warning.level, 'warn');
      assert.match(await controller.metrics(), /^kruise_controller_webhook_client_auth 0$/m);
    } finally {
      await controller.stop();
    }
  });

  it('with a CA file it cannot read or that holds no CA certificate: it does not start, and says why', async () => {
    const notCa = join(env.dir, 'not-a-ca.pem');
    await writeFile(notCa, 'hello\n');
    for (const [file, message] of [
      [join(env.dir, 'missing.pem'), /--webhook-client-ca: cannot read .*missing\.pem: ENOENT/],
      [notCa, /not-a-ca\.pem holds no PEM certificate/],
    ] as const) {
      const controller = new ControllerProcess({
        kubeconfig: env.kubeconfig,
        statusPort: await freePort(),
        webhookPort: await freePort(),
        certDir: join(env.dir, 'certs-bad-ca'),
        extraArgs: ['--webhook-client-ca', file],
      });
      const { code } = await controller.exited;
      assert.equal(code, 1, controller.stderr);
      assert.match(controller.stderr, message);
    }
  });
});
