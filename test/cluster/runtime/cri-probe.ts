// Does containerd's CRI plugin answer? One raw runtime.v1 RuntimeService/Version call over the unix socket,
// decoded by hand (four string fields), so the cluster tooling needs no generated CRI code.
import { Client, credentials, type ServiceError } from '@grpc/grpc-js';

export interface CriVersion {
  version: string;
  runtimeName: string;
  runtimeVersion: string;
  runtimeApiVersion: string;
}

/** Decode a protobuf message whose fields 1-4 are strings (VersionResponse); other fields are skipped. */
export function decodeVersionResponse(bytes: Buffer): CriVersion {
  const strings: string[] = ['', '', '', ''];
  let offset = 0;
  const varint = (): number => {
    let result = 0;
    let shift = 0;
    for (;;) {
      if (offset >= bytes.length) throw new Error('truncated varint');
      const byte = bytes[offset++]!;
      result += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7;
      if (shift > 63) throw new Error('varint too long');
    }
  };
  while (offset < bytes.length) {
    const key = varint();
    const field = Math.floor(key / 8);
    const wireType = key % 8;
    if (wireType === 2) {
      const length = varint();
      if (offset + length > bytes.length) throw new Error('truncated field');
      if (field >= 1 && field <= 4) strings[field - 1] = bytes.subarray(offset, offset + length).toString('utf8');
      offset += length;
    } else if (wireType === 0) {
      varint();
    } else if (wireType === 1) {
      offset += 8;
    } else if (wireType === 5) {
      offset += 4;
    } else {
      throw new Error(`unsupported wire type ${wireType}`);
    }
  }
  return {
    version: strings[0]!,
    runtimeName: strings[1]!,
    runtimeVersion: strings[2]!,
    runtimeApiVersion: strings[3]!,
  };
}

/** Call CRI Version on `socket`; rejects when the CRI plugin does not answer within `timeoutMs`. */
export function criVersion(socket: string, timeoutMs = 2_000): Promise<CriVersion> {
  const client = new Client(`unix://${socket}`, credentials.createInsecure());
  return new Promise<CriVersion>((resolve, reject) => {
    client.makeUnaryRequest(
      '/runtime.v1.RuntimeService/Version',
      (request: Buffer) => request,
      (response: Buffer) => response,
      Buffer.alloc(0),
      { deadline: Date.now() + timeoutMs },
      (err: ServiceError | null, response?: Buffer) => {
        if (err || !response) {
          reject(err ?? new Error('empty CRI Version response'));
          return;
        }
        try {
          resolve(decodeVersionResponse(response));
        } catch (decodeError) {
          reject(decodeError instanceof Error ? decodeError : new Error(String(decodeError)));
        }
      },
    );
  }).finally(() => client.close());
}
