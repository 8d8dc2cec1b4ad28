// Component "registries": two docker-registry (distribution) instances, one open and one with htpasswd basic auth,
// on 127.0.0.1 (or on REGISTRY_HOST, the host's address on the real cluster's node network, which nodes in their own
// network namespaces reach). Ports are chosen free on the first up and kept in allocations.json; the auth registry's
// user/password is generated once per cluster directory and kept with mode 0600.
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { ClusterContext } from '../component.js';
import type { ComponentStatus, ComponentWithStatus } from './component-status.js';
import { clusterPaths, type ClusterPaths } from '../paths.js';
import { freeLoopbackPort, loopbackPortIsFree, readAllocations, saveAllocations } from './allocations.js';
import { ensureDaemon } from './daemon.js';
import { runChecked } from './exec.js';
import { readTextIfExists, tailOfFile, writeAtomic } from './files.js';
import { httpStatus, type BasicCredentials } from './http-probe.js';
import { isAlive, runningPid, stopDaemon } from './processes.js';
import { waitUntil } from './wait-until.js';

const AUTH_USER = 'kd-test';

interface RegistryInstance {
  name: 'registry' | 'registry-auth';
  configFile: string;
  dataDir: string;
  pidFile: string;
  portKey: 'registryPort' | 'authRegistryPort';
  withAuth: boolean;
}

function instances(paths: ClusterPaths): RegistryInstance[] {
  const r = paths.registry;
  return [
    {
      name: 'registry',
      configFile: r.openConfig,
      dataDir: r.openData,
      pidFile: r.openPidFile,
      portKey: 'registryPort',
      withAuth: false,
    },
    {
      name: 'registry-auth',
      configFile: r.authConfig,
      dataDir: r.authData,
      pidFile: r.authPidFile,
      portKey: 'authRegistryPort',
      withAuth: true,
    },
  ];
}

/** The registry config (JSON is valid YAML, which docker-registry reads). */
export function registryConfig(options: {
  host?: string;
  port: number;
  dataDir: string;
  htpasswd?: string | undefined;
  service: string;
}): string {
  const config: Record<string, unknown> = {
    version: '0.1',
    log: { level: 'warn', accesslog: { disabled: true }, fields: { service: options.service } },
    storage: {
      filesystem: { rootdirectory: options.dataDir },
      delete: { enabled: true },
      cache: { blobdescriptor: 'inmemory' },
    },
    http: {
      addr: `${options.host ?? '127.0.0.1'}:${options.port}`,
      // signs upload state only; a fixed value per instance keeps the registry from logging a warning
      secret: `kruise-daemon-test-${options.service}`,
      headers: { 'X-Content-Type-Options': ['nosniff'] },
    },
  };
  if (options.htpasswd) config.auth = { htpasswd: { realm: 'kruise-daemon-test', path: options.htpasswd } };
  return `${JSON.stringify(config, null, 2)}\n`;
}

/** The auth registry's credentials, generated on first use and stored (0600) in the cluster directory. */
export async function registryCredentials(paths: ClusterPaths): Promise<BasicCredentials> {
  const stored = await readTextIfExists(paths.registry.credentials);
  if (stored !== undefined) {
    try {
      const parsed = JSON.parse(stored) as Partial<BasicCredentials>;
      if (typeof parsed.user === 'string' && typeof parsed.password === 'string' && parsed.password.length >= 16) {
        return { user: parsed.user, password: parsed.password };
      }
    } catch {
      // damaged: generate new credentials below
    }
  }
  const credentials = { user: AUTH_USER, password: randomBytes(18).toString('base64url') };
  await writeAtomic(paths.registry.credentials, `${JSON.stringify(credentials)}\n`, 0o600);
  await writeAtomic(paths.registry.htpasswd, await htpasswdLine(credentials), 0o600);
  return credentials;
}

async function htpasswdLine(credentials: BasicCredentials): Promise<string> {
  // -i reads the password from stdin, so it never appears in a process listing
  const line = await runChecked('htpasswd', ['-n', '-B', '-i', credentials.user], { input: credentials.password });
  return `${line.trim()}\n`;
}

/** Where the registries listen: REGISTRY_HOST from an earlier component (the real cluster's host address), else loopback. */
function registryHost(ctx: ClusterContext): string {
  return ctx.env.REGISTRY_HOST ?? '127.0.0.1';
}

async function choosePort(instance: RegistryInstance, stored: number | undefined): Promise<number> {
  if (stored !== undefined) {
    if ((await runningPid(instance.pidFile, instance.configFile)) !== undefined) return stored;
    if (await loopbackPortIsFree(stored)) return stored;
  }
  return freeLoopbackPort();
}

export function registries(): ComponentWithStatus {
  return {
    name: 'registries',
    async up(ctx: ClusterContext) {
      const paths = clusterPaths(ctx.dir);
      const host = registryHost(ctx);
      const credentials = await registryCredentials(paths);
      if ((await readTextIfExists(paths.registry.htpasswd)) === undefined) {
        await writeAtomic(paths.registry.htpasswd, await htpasswdLine(credentials), 0o600);
      }
      const allocations = await readAllocations(paths.allocationsFile);
      const ports: Record<string, number> = {};
      for (const instance of instances(paths)) {
        const port = await choosePort(instance, allocations[instance.portKey]);
        await saveAllocations(paths.allocationsFile, { [instance.portKey]: port });
        ports[instance.name] = port;
        await mkdir(instance.dataDir, { recursive: true });
        const logFile = join(paths.logDir, `${instance.name}.log`);
        const state = await ensureDaemon(
          {
            name: instance.name,
            command: 'docker-registry',
            args: ['serve', instance.configFile],
            configFile: instance.configFile,
            configText: registryConfig({
              host,
              port,
              dataDir: instance.dataDir,
              htpasswd: instance.withAuth ? paths.registry.htpasswd : undefined,
              service: `${instance.name}-${paths.id}`,
            }),
            pidFile: instance.pidFile,
            logFile,
          },
          ctx.log,
        );
        const expected = instance.withAuth ? 401 : 200;
        await waitUntil(async () => (await httpStatus(`http://${host}:${port}/v2/`)) === expected, {
          timeoutMs: 20_000,
          what: `${instance.name} on ${host}:${port} to answer /v2/ with ${expected}`,
          failFast: async () =>
            isAlive(state.pid) ? undefined : `it exited; last lines of ${logFile}:\n${await tailOfFile(logFile)}`,
        });
      }
      return {
        REGISTRY: `${host}:${ports.registry}`,
        AUTH_REGISTRY: `${host}:${ports['registry-auth']}`,
        AUTH_USER: credentials.user,
        AUTH_PASSWORD: credentials.password,
        REGISTRY_PID_FILE: paths.registry.openPidFile,
        AUTH_REGISTRY_PID_FILE: paths.registry.authPidFile,
      };
    },
    async down(ctx: ClusterContext) {
      const paths = clusterPaths(ctx.dir);
      for (const instance of instances(paths).reverse()) {
        const pid = await stopDaemon(instance.pidFile, instance.configFile);
        if (pid !== undefined) ctx.log(`${instance.name}: stopped (PID ${pid})`);
      }
    },
    async status(ctx: ClusterContext): Promise<ComponentStatus[]> {
      const paths = clusterPaths(ctx.dir);
      const allocations = await readAllocations(paths.allocationsFile);
      const host = registryHost(ctx);
      const statuses: ComponentStatus[] = [];
      for (const instance of instances(paths)) {
        const pid = await runningPid(instance.pidFile, instance.configFile);
        const port = allocations[instance.portKey];
        if (pid === undefined || port === undefined) {
          statuses.push({ name: instance.name, healthy: false, detail: 'not running' });
          continue;
        }
        const code = await httpStatus(`http://${host}:${port}/v2/`);
        const expected = instance.withAuth ? 401 : 200;
        statuses.push({
          name: instance.name,
          healthy: code === expected,
          detail: `PID ${pid}, ${host}:${port}, /v2/ answers ${code ?? 'nothing'} (expected ${expected})`,
        });
      }
      return statuses;
    },
  };
}
