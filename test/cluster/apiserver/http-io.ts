// HTTP plumbing of the emulator: bounded body reading, JSON answers, Status answers for errors.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { load as loadYaml } from 'js-yaml';
import { ApiError, apiErrors } from './errors.js';
import { mediaTypeOf } from './patch/index.js';
import { decodeProtobufObject, PROTOBUF } from './protobuf.js';

/** kube-apiserver refuses request bodies over 3 MiB. */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;

export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > MAX_BODY_BYTES) throw apiErrors.tooLarge(`the request body is larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(buf);
  }
  return Buffer.concat(chunks);
}

/** Decode a POST/PUT body: JSON, or YAML when the client says so. */
export function decodeBody(body: Buffer, contentType: string | undefined): unknown {
  const type = mediaTypeOf(contentType ?? 'application/json');
  if (type === PROTOBUF) return decodeProtobufObject(body);
  const text = body.toString('utf8');
  if (text.trim() === '') throw apiErrors.badRequest('the request body is empty');
  if (type === 'application/json' || type === '' || type === '*/*') {
    try {
      return JSON.parse(text);
    } catch (err) {
      throw apiErrors.badRequest(`the request body is not valid JSON: ${(err as Error).message}`);
    }
  }
  if (type === 'application/yaml' || type === 'application/x-yaml' || type === 'text/yaml') {
    try {
      return loadYaml(text);
    } catch (err) {
      throw apiErrors.badRequest(`error decoding YAML: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  throw apiErrors.unsupportedMediaType(['application/json', 'application/yaml', PROTOBUF]);
}

export function sendJson(
  res: ServerResponse,
  code: number,
  body: unknown,
  headers: Record<string, string | string[]> = {},
  contentType = 'application/json',
): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(code, {
    'Content-Type': contentType,
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-cache, private',
    ...headers,
  });
  res.end(text);
}

export function sendError(res: ServerResponse, err: ApiError): void {
  const headers: Record<string, string> = {};
  const retry = err.details?.retryAfterSeconds;
  if (retry !== undefined) headers['Retry-After'] = String(retry);
  sendJson(res, err.code, err.toStatus(), headers);
}

export function sendText(res: ServerResponse, code: number, text: string): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/** `Warning` header values as kube-apiserver sends them (code 299, agent "-"). */
export function warningHeaders(warnings: string[]): Record<string, string[]> {
  if (warnings.length === 0) return {};
  return { Warning: warnings.map((w) => `299 - ${JSON.stringify(w)}`) };
}
