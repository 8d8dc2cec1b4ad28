// Decoding of Kubernetes protobuf request bodies (Content-Type application/vnd.kubernetes.protobuf) for the
// few kinds kubectl's imperative generators send that way: `kubectl create namespace|configmap|secret|
// serviceaccount`. The body is the magic "k8s\0" then a runtime.Unknown {typeMeta, raw}; raw is the object.
// Field numbers are those of k8s.io/api/core/v1 and apimachinery meta/v1 generated.proto. Other kinds get 415.
import { apiErrors } from './errors.js';

type Scalar = 'string' | 'bytes' | 'bool' | 'int';
interface Field {
  name: string;
  type: Scalar | Message;
  repeated?: boolean;
  /** map<string, value>: entries are messages {1: key, 2: value}. */
  mapOf?: Scalar;
}
interface Message {
  [num: number]: Field;
}

const TYPE_META: Message = { 1: { name: 'apiVersion', type: 'string' }, 2: { name: 'kind', type: 'string' } };
const UNKNOWN: Message = { 1: { name: 'typeMeta', type: TYPE_META }, 2: { name: 'raw', type: 'bytes' } };

const OWNER_REFERENCE: Message = {
  1: { name: 'kind', type: 'string' },
  3: { name: 'name', type: 'string' },
  4: { name: 'uid', type: 'string' },
  5: { name: 'apiVersion', type: 'string' },
  6: { name: 'controller', type: 'bool' },
  7: { name: 'blockOwnerDeletion', type: 'bool' },
};

const OBJECT_META: Message = {
  1: { name: 'name', type: 'string' },
  2: { name: 'generateName', type: 'string' },
  3: { name: 'namespace', type: 'string' },
  5: { name: 'uid', type: 'string' },
  6: { name: 'resourceVersion', type: 'string' },
  11: { name: 'labels', type: 'string', mapOf: 'string' },
  12: { name: 'annotations', type: 'string', mapOf: 'string' },
  13: { name: 'ownerReferences', type: OWNER_REFERENCE, repeated: true },
  14: { name: 'finalizers', type: 'string', repeated: true },
};

const LOCAL_OBJECT_REFERENCE: Message = { 1: { name: 'name', type: 'string' } };
const OBJECT_REFERENCE: Message = {
  1: { name: 'kind', type: 'string' },
  2: { name: 'namespace', type: 'string' },
  3: { name: 'name', type: 'string' },
  4: { name: 'uid', type: 'string' },
  5: { name: 'apiVersion', type: 'string' },
};

const KINDS: Record<string, Message> = {
  ConfigMap: {
    1: { name: 'metadata', type: OBJECT_META },
    2: { name: 'data', type: 'string', mapOf: 'string' },
    3: { name: 'binaryData', type: 'string', mapOf: 'bytes' },
    4: { name: 'immutable', type: 'bool' },
  },
  Secret: {
    1: { name: 'metadata', type: OBJECT_META },
    2: { name: 'data', type: 'string', mapOf: 'bytes' },
    3: { name: 'type', type: 'string' },
    4: { name: 'stringData', type: 'string', mapOf: 'string' },
    5: { name: 'immutable', type: 'bool' },
  },
  Namespace: {
    1: { name: 'metadata', type: OBJECT_META },
    2: { name: 'spec', type: { 1: { name: 'finalizers', type: 'string', repeated: true } } },
  },
  ServiceAccount: {
    1: { name: 'metadata', type: OBJECT_META },
    2: { name: 'secrets', type: OBJECT_REFERENCE, repeated: true },
    3: { name: 'imagePullSecrets', type: LOCAL_OBJECT_REFERENCE, repeated: true },
    4: { name: 'automountServiceAccountToken', type: 'bool' },
  },
};

export const PROTOBUF = 'application/vnd.kubernetes.protobuf';
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

class Reader {
  pos = 0;
  constructor(private readonly buf: Buffer) {}
  get done(): boolean {
    return this.pos >= this.buf.length;
  }
  varint(): number {
    let result = 0;
    let shift = 0;
    for (;;) {
      if (this.pos >= this.buf.length) throw new Error('truncated varint');
      const byte = this.buf[this.pos++]!;
      result += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7;
      if (shift > 63) throw new Error('varint too long');
    }
  }
  bytes(): Buffer {
    const len = this.varint();
    if (this.pos + len > this.buf.length) throw new Error('truncated length-delimited field');
    const out = this.buf.subarray(this.pos, this.pos + len);
    this.pos += len;
    return out;
  }
  skip(wireType: number): void {
    if (wireType === 0) this.varint();
    else if (wireType === 1) this.pos += 8;
    else if (wireType === 2) this.bytes();
    else if (wireType === 5) this.pos += 4;
    else throw new Error(`unsupported wire type ${wireType}`);
  }
}

function scalar(type: Scalar, wireType: number, r: Reader): unknown {
  if (type === 'string' || type === 'bytes') {
    if (wireType !== 2) throw new Error(`expected a length-delimited ${type}`);
    const b = r.bytes();
    return type === 'string' ? b.toString('utf8') : b.toString('base64');
  }
  if (wireType !== 0) throw new Error(`expected a varint ${type}`);
  const v = r.varint();
  return type === 'bool' ? v !== 0 : v;
}

function decodeMessage(buf: Buffer, schema: Message): Record<string, unknown> {
  const r = new Reader(buf);
  const out: Record<string, unknown> = {};
  while (!r.done) {
    const tag = r.varint();
    const num = Math.floor(tag / 8);
    const wireType = tag & 7;
    const field = schema[num];
    if (!field) {
      r.skip(wireType);
      continue;
    }
    if (field.mapOf) {
      const entry = decodeMessage(r.bytes(), {
        1: { name: 'key', type: 'string' },
        2: { name: 'value', type: field.mapOf },
      });
      const map = (out[field.name] ??= {}) as Record<string, unknown>;
      map[typeof entry.key === 'string' ? entry.key : ''] = entry.value ?? (field.mapOf === 'bool' ? false : '');
      continue;
    }
    const value =
      typeof field.type === 'string' ? scalar(field.type, wireType, r) : decodeMessage(r.bytes(), field.type);
    if (field.repeated) ((out[field.name] ??= []) as unknown[]).push(value);
    else if (value !== '' && value !== false && value !== 0) out[field.name] = value; // Go zero values: omitted
  }
  return out;
}

/** Decode a protobuf request body into the JSON form of the object. */
export function decodeProtobufObject(body: Buffer): Record<string, unknown> {
  if (body.length < 4 || !body.subarray(0, 4).equals(MAGIC)) {
    throw apiErrors.badRequest('protobuf body without the Kubernetes "k8s\\0" prefix');
  }
  let envelope: Record<string, unknown>;
  try {
    envelope = decodeMessage(body.subarray(4), UNKNOWN);
  } catch (err) {
    throw apiErrors.badRequest(`cannot decode the protobuf envelope: ${(err as Error).message}`);
  }
  const typeMeta = (envelope.typeMeta ?? {}) as { apiVersion?: string; kind?: string };
  const kind = typeMeta.kind ?? '';
  const schema = KINDS[kind];
  if (!schema || (typeMeta.apiVersion ?? 'v1') !== 'v1') {
    throw apiErrors.unsupportedMediaType([
      `application/json (the emulator decodes ${PROTOBUF} only for v1 ${Object.keys(KINDS).join(', ')}; got ${typeMeta.apiVersion ?? '?'} ${kind || '?'})`,
      'application/yaml',
    ]);
  }
  try {
    const raw = Buffer.from(typeof envelope.raw === 'string' ? envelope.raw : '', 'base64');
    return { apiVersion: 'v1', kind, ...decodeMessage(raw, schema) };
  } catch (err) {
    throw apiErrors.badRequest(`cannot decode the protobuf ${kind}: ${(err as Error).message}`);
  }
}
