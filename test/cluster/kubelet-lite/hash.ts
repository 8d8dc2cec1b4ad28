// The container hash kubelet writes in io.kubernetes.container.hash (kubelet >= 1.31,
// pkg/kubelet/container/helpers.go#HashContainer): FNV-1a 32 over hashutil.DeepHashObject's go-spew rendering of
// the JSON bytes of {"image": <image>, "name": <name>}, printed as lowercase hex (strconv.FormatUint(h, 16)).
// Test vector (kubelet's own): name "test_container", image "foo/image:v1" -> "8e45cbd0".
import type { Container } from './types.js';

/** encoding/json's string form: escapes ", \, control characters, <, >, &, U+2028 and U+2029. */
export function goJsonString(value: string): string {
  let out = '"';
  for (const ch of value) {
    const code = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || ch === '<' || ch === '>' || ch === '&' || code === 0x2028 || code === 0x2029) {
      out += `\\u${code.toString(16).padStart(4, '0')}`;
    } else out += ch;
  }
  return `${out}"`;
}

/** FNV-1a 32-bit over the go-spew `%#v` text of a []byte: `([]uint8)[b0 b1 ...]`. */
export function deepHashBytes(bytes: Uint8Array): number {
  const text = `([]uint8)[${Array.from(bytes).join(' ')}]`;
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

export function containerHash(container: Pick<Container, 'name' | 'image'>): string {
  const json = `{"image":${goJsonString(container.image)},"name":${goJsonString(container.name)}}`;
  return deepHashBytes(new TextEncoder().encode(json)).toString(16);
}
