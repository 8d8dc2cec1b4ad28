// Minimal HTTPS requests to the real cluster's API server as a client-certificate identity (the cluster tooling
// needs only readiness checks and a few GETs; tests use kubectl or the project's own client).
import { readFile } from 'node:fs/promises';
import { request } from 'node:https';
import { join } from 'node:path';
import type { K8sLayout } from './layout.js';

export interface ApiResponse {
  status: number;
  body: string;
}

export async function apiRequest(
  layout: K8sLayout,
  path: string,
  options: { stem?: string; method?: string; body?: string; timeoutMs?: number } = {},
): Promise<ApiResponse> {
  const stem = options.stem ?? 'admin';
  const [ca, cert, key] = await Promise.all([
    readFile(join(layout.pkiDir, 'ca.crt')),
    readFile(join(layout.pkiDir, `${stem}.crt`)),
    readFile(join(layout.pkiDir, `${stem}.key`)),
  ]);
  return new Promise((resolve, reject) => {
    const req = request(
      `${layout.apiServerUrl}${path}`,
      {
        method: options.method ?? 'GET',
        ca,
        cert,
        key,
        timeout: options.timeoutMs ?? 5_000,
        headers: options.body ? { 'content-type': 'application/json' } : {},
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`timed out: ${options.method ?? 'GET'} ${path}`)));
    req.on('error', reject);
    req.end(options.body);
  });
}

/** GET a JSON object; throws with the status and body on anything but 200. */
export async function apiGetJson<T>(layout: K8sLayout, path: string): Promise<T> {
  const response = await apiRequest(layout, path);
  if (response.status !== 200) throw new Error(`GET ${path}: ${response.status} ${response.body.slice(0, 300)}`);
  return JSON.parse(response.body) as T;
}
