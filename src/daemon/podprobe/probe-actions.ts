// One run of a probe's action, as kubelet's probers: exec through CRI ExecSync in the container (exit 0 = success,
// the output is the message), tcpSocket (a connection opens) and httpGet (2xx/3xx; redirects followed only on the
// same host, as kubelet without followNonLocalRedirects) from the agent to the pod's own IP only (a probe naming
// another host fails: CVE-2026-24005); grpc is refused. A run is cut at its timeout whatever the action does (its
// slot is freed then) and its signal aborted.
// The message is cut to MAX_PROBE_MESSAGE_LENGTH characters; an http body is read only as far as the message needs.
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { MAX_PROBE_MESSAGE_LENGTH } from '../../api/constants.js';
import type { ContainerProbeSpec } from '../../api/podprobemarker.js';
import { CriError } from '../../cri/errors.js';
import type { WireHTTPGetAction } from '../../api/wire.js';
import type { Clock } from '../../util/clock.js';
import { errorMessage } from '../../util/error-message.js';
import type { ContainerRuntime } from '../podruntime/pod-containers.js';

/** Sent unless the probe sets its own User-Agent (kubelet sends kube-probe/<version>). */
export const PROBE_USER_AGENT = 'kube-probe/kruise-daemon';
/**
 * The runtime's words for a command it could not start in the container: runc's `OCI runtime exec failed: exec
 * failed: unable to start container process: exec: "x": ... not found` / `no such file or directory`, crun's
 * `executable file \`x\` not found`.
 */
const COMMAND_NOT_STARTED = /unable to start container process|executable file .*not found/i;
/** Same-host redirects followed at most (kubelet's http client: 10). */
const MAX_REDIRECTS = 10;
/** Bytes of an http body read for the message (a UTF-8 character is at most 4 bytes). */
const MAX_BODY_BYTES = MAX_PROBE_MESSAGE_LENGTH * 4;

/**
 * How a run ended. `error`: the probe could not be run at all (the runtime failed the ExecSync call): it counts as
 * neither success nor failure, as OpenKruise, and the state stays as it was. A command the runtime could not start
 * in the container (not in the image) is `failed`, with the runtime's words (OpenKruise records nothing then).
 */
export type ProbeOutcome =
  { result: 'succeeded' | 'failed' | 'timeout'; message: string } | { result: 'error'; message: string };

export interface ProbeRun {
  probe: ContainerProbeSpec;
  containerId: string;
  containerName: string;
  podIP: string | undefined;
  timeoutMs: number;
}

export type ExecRuntime = Pick<ContainerRuntime, 'execSync'>;

/** Cut to MAX_PROBE_MESSAGE_LENGTH characters (whole code points). */
export function truncateMessage(message: string): string {
  if (message.length <= MAX_PROBE_MESSAGE_LENGTH) return message;
  return Array.from(message).slice(0, MAX_PROBE_MESSAGE_LENGTH).join('');
}

/** Run the probe once, cut at its timeout on `clock`; never rejects. */
export async function runProbe(
  run: ProbeRun,
  deps: { runtime: ExecRuntime; clock: Clock },
  signal: AbortSignal,
): Promise<ProbeOutcome> {
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  let timer: { cancel(): void } | undefined;
  const seconds = run.timeoutMs / 1000;
  const timedOut = new Promise<ProbeOutcome>((resolve) => {
    timer = deps.clock.setTimer(() => {
      resolve({ result: 'timeout', message: `probe timed out after ${seconds}s` });
      controller.abort(new Error('probe timed out'));
    }, run.timeoutMs);
  });
  // stopped from outside (the worker stops): the run ends at once, whatever the action does
  const stopped = new Promise<ProbeOutcome>((resolve) => {
    const end = (): void => resolve({ result: 'error', message: 'probe run stopped' });
    if (signal.aborted) end();
    else signal.addEventListener('abort', end, { once: true });
  });
  const action = runAction(run, deps.runtime, controller.signal).catch((err: unknown): ProbeOutcome => ({
    result: 'failed',
    message: errorMessage(err),
  }));
  try {
    const outcome = await Promise.race([action, timedOut, stopped]);
    return { ...outcome, message: truncateMessage(outcome.message) };
  } finally {
    timer?.cancel();
    signal.removeEventListener('abort', onAbort);
    controller.abort(new Error('probe run ended'));
  }
}

function runAction(run: ProbeRun, runtime: ExecRuntime, signal: AbortSignal): Promise<ProbeOutcome> {
  const { probe } = run;
  if (probe.exec) return runExec(run, probe.exec.command ?? [], runtime, signal);
  const foreignHost = foreignHostOf(probe, run.podIP);
  if (foreignHost !== undefined) {
    // admission refuses a host; a NodePodProbe written around it still never makes the agent dial elsewhere
    return Promise.resolve({
      result: 'failed',
      message: `probe host ${JSON.stringify(foreignHost)} refused: the agent probes only the pod's own IP`,
    });
  }
  if (probe.httpGet) return runHttpGet(probe.httpGet, run.podIP, run.timeoutMs, signal);
  if (probe.tcpSocket) return runTcp(run.podIP, probe.tcpSocket.port, signal);
  if (probe.grpc) {
    return Promise.resolve({
      result: 'failed',
      message: 'grpc probes are not supported by kruise-daemon (nor by OpenKruise): use exec, httpGet or tcpSocket',
    });
  }
  return Promise.resolve({ result: 'failed', message: 'the probe has no exec, httpGet or tcpSocket action' });
}

async function runExec(
  run: ProbeRun,
  command: string[],
  runtime: ExecRuntime,
  signal: AbortSignal,
): Promise<ProbeOutcome> {
  if (command.length === 0) return { result: 'failed', message: 'the exec probe has no command' };
  let response;
  try {
    response = await runtime.execSync(
      { container_id: run.containerId, cmd: command, timeout: Math.ceil(run.timeoutMs / 1000) },
      { timeoutMs: run.timeoutMs, signal },
    );
  } catch (err) {
    if (signal.aborted) return { result: 'timeout', message: `probe timed out after ${run.timeoutMs / 1000}s` };
    const message = `exec in container ${run.containerName} failed: ${errorMessage(err)}`;
    // the runtime ran and could not start the command (not in the image, not executable): the command's own
    // failure, as a shell's exit 126/127 would be, not a runtime outage
    if (err instanceof CriError && err.kind === 'Unknown' && COMMAND_NOT_STARTED.test(err.runtimeMessage)) {
      return { result: 'failed', message };
    }
    return { result: 'error', message };
  }
  const stdout = response.stdout.toString('utf8');
  const stderr = response.stderr.toString('utf8');
  if (response.exit_code === 0) return { result: 'succeeded', message: stdout };
  return {
    result: 'failed',
    message: stderr || stdout || `command ${JSON.stringify(command)} exited with ${response.exit_code}`,
  };
}

/** The host a tcpSocket/httpGet probe names (or its Host header) when it is not the pod's own IP. */
function foreignHostOf(probe: ProbeRun['probe'], podIP: string | undefined): string | undefined {
  const named = probe.tcpSocket?.host || probe.httpGet?.host;
  if (named && named !== podIP) return named;
  const hostHeader = probe.httpGet?.httpHeaders?.find((h) => h.name.toLowerCase() === 'host');
  return hostHeader ? hostHeader.value : undefined;
}

/** A probe's port: a number 1-65535 (named ports are turned into numbers by the controller, as OpenKruise). */
function portOf(port: number | string | undefined): number | string {
  const n = typeof port === 'string' && /^\d+$/.test(port) ? Number(port) : port;
  if (typeof n === 'number' && Number.isInteger(n) && n > 0 && n < 65536) return n;
  return `invalid port ${JSON.stringify(port ?? null)}: a number from 1 to 65535 is needed (a named port is resolved by the controller)`;
}

function runTcp(host: string | undefined, rawPort: number | string | undefined, signal: AbortSignal) {
  const port = portOf(rawPort);
  if (typeof port === 'string') return Promise.resolve<ProbeOutcome>({ result: 'failed', message: port });
  if (!host) return Promise.resolve<ProbeOutcome>({ result: 'failed', message: 'the pod has no IP yet' });
  return new Promise<ProbeOutcome>((resolve) => {
    const socket = net.connect({ host, port, signal });
    socket.once('connect', () => {
      socket.destroy();
      resolve({ result: 'succeeded', message: '' });
    });
    socket.once('error', (err) => {
      socket.destroy();
      resolve({ result: 'failed', message: `dial tcp ${joinHostPort(host, port)}: ${err.message}` });
    });
  });
}

function joinHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

async function runHttpGet(
  get: WireHTTPGetAction,
  podIP: string | undefined,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<ProbeOutcome> {
  const port = portOf(get.port);
  if (typeof port === 'string') return { result: 'failed', message: port };
  const host = podIP;
  if (!host) return { result: 'failed', message: 'the pod has no IP yet' };
  const scheme = (get.scheme || 'HTTP').toLowerCase();
  if (scheme !== 'http' && scheme !== 'https') {
    return { result: 'failed', message: `unsupported scheme ${JSON.stringify(get.scheme)}: HTTP or HTTPS` };
  }
  const path = get.path ? (get.path.startsWith('/') ? get.path : `/${get.path}`) : '/';
  let url: URL;
  try {
    url = new URL(`${scheme}://${joinHostPort(host, port)}${path}`);
  } catch {
    return { result: 'failed', message: `invalid URL ${scheme}://${joinHostPort(host, port)}${path}` };
  }
  const headers: Record<string, string> = {};
  for (const h of get.httpHeaders ?? []) if (h.name) headers[h.name] = h.value;
  const has = (name: string): string | undefined =>
    Object.keys(headers).find((k) => k.toLowerCase() === name.toLowerCase());
  if (!has('user-agent')) headers['User-Agent'] = PROBE_USER_AGENT;
  const accept = has('accept');
  if (accept === undefined) headers.Accept = '*/*';
  else if (headers[accept] === '') delete headers[accept];

  for (let redirects = 0; ; redirects++) {
    const response = await httpGetOnce(url, headers, timeoutMs, signal);
    const code = response.statusCode;
    if (code >= 300 && code < 400 && response.location) {
      const next = new URL(response.location, url);
      if (next.hostname !== url.hostname || redirects >= MAX_REDIRECTS) {
        return { result: 'succeeded', message: `Probe terminated redirects, Response body: ${response.body}` };
      }
      url = next;
      continue;
    }
    if (code >= 200 && code < 400) return { result: 'succeeded', message: response.body };
    return { result: 'failed', message: `HTTP probe failed with statuscode: ${code}` };
  }
}

interface HttpAnswer {
  statusCode: number;
  location: string | undefined;
  body: string;
}

function httpGetOnce(
  url: URL,
  headers: Record<string, string>,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<HttpAnswer> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const request = client.request(
      url,
      { method: 'GET', headers, signal, timeout: timeoutMs, rejectUnauthorized: false, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const done = (): void => {
          res.destroy();
          resolve({
            statusCode: res.statusCode ?? 0,
            location: res.headers.location,
            body: Buffer.concat(chunks).toString('utf8'),
          });
        };
        res.on('data', (chunk: Buffer) => {
          if (size >= MAX_BODY_BYTES) return;
          chunks.push(chunk.subarray(0, MAX_BODY_BYTES - size));
          size += chunk.length;
          if (size >= MAX_BODY_BYTES) done();
        });
        res.once('end', done);
        res.once('error', (err) => reject(new Error(`Get ${JSON.stringify(url.href)}: ${err.message}`)));
      },
    );
    request.once('timeout', () => request.destroy(new Error('timed out')));
    request.once('error', (err) => reject(new Error(`Get ${JSON.stringify(url.href)}: ${err.message}`)));
    request.end();
  });
}
