// Run a container's preStop hook as kubelet does: exec through CRI ExecSync inside the container, httpGet against
// the host given or else the pod's IP (kubelet's runHTTPHandler; OpenKruise's daemon fails host-less hooks, we
// know the pod IP from the node's pod cache). tcpSocket is not a lifecycle action kubelet runs: reported as failed.
import http from 'node:http';
import https from 'node:https';
import type { ProbeHandler } from '../../api/containerrecreaterequest.js';
import type { WireContainerPort } from '../../api/wire.js';
import type { ContainerRuntime } from './pod-containers.js';

export interface PreStopTarget {
  containerId: string;
  handler: ProbeHandler;
  ports?: WireContainerPort[] | undefined;
  podIP?: string | undefined;
}

/** Resolves when the hook succeeded; rejects with a message saying why it failed. */
export async function runPreStop(
  runtime: ContainerRuntime,
  target: PreStopTarget,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<void> {
  const { handler } = target;
  if (handler.exec) {
    const cmd = handler.exec.command ?? [];
    if (cmd.length === 0) throw new Error('exec preStop hook has no command');
    const res = await runtime.execSync(
      { container_id: target.containerId, cmd, timeout: 0 },
      { timeoutMs: Math.max(1, timeoutMs), signal },
    );
    if (res.exit_code !== 0) {
      const out = Buffer.concat([res.stdout, res.stderr]).toString('utf8').trim().slice(0, 1024);
      throw new Error(
        `exec preStop hook (${JSON.stringify(cmd)}) exited with ${res.exit_code}${out ? `: ${out}` : ''}`,
      );
    }
    return;
  }
  if (handler.httpGet) {
    await runHttpGet(target, timeoutMs, signal);
    return;
  }
  if (handler.tcpSocket) throw new Error('tcpSocket is not supported as a preStop action (as kubelet)');
  throw new Error('preStop hook has no action');
}

function resolvePort(port: number | string | undefined, ports: WireContainerPort[] | undefined): number {
  if (typeof port === 'number') return port;
  if (port === undefined || port === '') throw new Error('httpGet preStop hook has no port');
  if (/^\d+$/.test(port)) return Number(port);
  const named = ports?.find((p) => p.name === port);
  if (!named) throw new Error(`httpGet preStop hook: no container port named ${JSON.stringify(port)}`);
  return named.containerPort;
}

function runHttpGet(target: PreStopTarget, timeoutMs: number, signal: AbortSignal): Promise<void> {
  const get = target.handler.httpGet!;
  const host = get.host || target.podIP;
  if (!host) return Promise.reject(new Error('httpGet preStop hook: the pod has no IP yet and the hook no host'));
  const port = resolvePort(get.port, target.ports);
  const secure = (get.scheme ?? 'HTTP').toUpperCase() === 'HTTPS';
  const path = get.path ? (get.path.startsWith('/') ? get.path : `/${get.path}`) : '/';
  const headers: Record<string, string> = { 'User-Agent': 'kube-lifecycle/kruise-daemon', Accept: '*/*' };
  for (const h of get.httpHeaders ?? []) headers[h.name] = h.value;
  return new Promise((resolve, reject) => {
    const req = (secure ? https : http).request(
      { host, port, path, method: 'GET', headers, timeout: Math.max(1, timeoutMs), signal, rejectUnauthorized: false },
      (res) => {
        res.resume();
        const code = res.statusCode ?? 0;
        if (code >= 200 && code < 400) resolve();
        else
          reject(
            new Error(`httpGet preStop hook ${secure ? 'https' : 'http'}://${host}:${port}${path} answered ${code}`),
          );
      },
    );
    req.on('timeout', () => req.destroy(new Error('httpGet preStop hook timed out')));
    req.on('error', (err) => reject(new Error(`httpGet preStop hook failed: ${err.message}`)));
    req.end();
  });
}
