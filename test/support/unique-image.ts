// An image no other test shares a blob with: one layer holding a file of random bytes, pushed to a plain-http
// registry through the distribution API (monolithic blob uploads, then the manifest). A test that needs a pull to
// fetch every blob from the registry uses it instead of waiting for the runtime's GC to drop a shared image's blobs
// (the test busybox images share their base layer, so another test's image keeps it).
import { createHash, randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';

export interface UniqueImage {
  /** registry/repository */
  imageName: string;
  tag: string;
  manifestDigest: string;
  /** The first layer's. */
  layerDigest: string;
  layerSize: number;
  /** Every layer, in the manifest's order. */
  layers: { digest: string; size: number }[];
}

const sha256 = (data: Buffer): string => `sha256:${createHash('sha256').update(data).digest('hex')}`;

/** A ustar archive of one regular file `name` (mode 0644, owned by root). */
function tarOfOneFile(name: string, content: Buffer): Buffer {
  const header = Buffer.alloc(512);
  const field = (offset: number, length: number, value: string): void => {
    header.write(value, offset, length, 'ascii');
  };
  const octal = (value: number, length: number): string => `${value.toString(8).padStart(length - 1, '0')}\0`;
  field(0, 100, name);
  field(100, 8, octal(0o644, 8));
  field(108, 8, octal(0, 8));
  field(116, 8, octal(0, 8));
  field(124, 12, octal(content.length, 12));
  field(136, 12, octal(0, 12));
  field(148, 8, ' '.repeat(8));
  field(156, 1, '0');
  field(257, 6, 'ustar\0');
  field(263, 2, '00');
  let sum = 0;
  for (const byte of header) sum += byte;
  field(148, 8, `${sum.toString(8).padStart(6, '0')}\0 `);
  const padding = Buffer.alloc((512 - (content.length % 512)) % 512);
  return Buffer.concat([header, content, padding, Buffer.alloc(1024)]);
}

async function checked(response: Response, what: string): Promise<Response> {
  if (!response.ok) throw new Error(`${what}: HTTP ${response.status} ${await response.text()}`);
  return response;
}

async function pushBlob(registry: string, repository: string, blob: Buffer): Promise<string> {
  const digest = sha256(blob);
  const start = await checked(
    await fetch(`http://${registry}/v2/${repository}/blobs/uploads/`, { method: 'POST' }),
    `starting the upload of ${digest}`,
  );
  const location = start.headers.get('location');
  if (!location) throw new Error(`the registry gave no upload location for ${digest}`);
  const url = new URL(location, `http://${registry}`);
  url.searchParams.set('digest', digest);
  await checked(
    await fetch(url, {
      method: 'PUT',
      body: blob,
      headers: { 'content-type': 'application/octet-stream' },
    }),
    `uploading ${digest}`,
  );
  return digest;
}

/**
 * Push a fresh image `repository:tag` with `layerCount` layers of `layerBytes` random bytes each (incompressible).
 */
export async function pushUniqueImage(
  registry: string,
  repository: string,
  tag = 'v1',
  layerBytes = 1024 * 1024,
  layerCount = 1,
): Promise<UniqueImage> {
  const tars = Array.from({ length: layerCount }, (_, i) => tarOfOneFile(`random-${i}.bin`, randomBytes(layerBytes)));
  const blobs = tars.map((tar) => gzipSync(tar));
  const architecture = process.arch === 'x64' ? 'amd64' : process.arch;
  const config = Buffer.from(
    JSON.stringify({
      architecture,
      os: 'linux',
      config: { Cmd: ['/random-0.bin'] },
      rootfs: { type: 'layers', diff_ids: tars.map(sha256) },
    }),
  );
  const layers: { digest: string; size: number }[] = [];
  for (const blob of blobs) layers.push({ digest: await pushBlob(registry, repository, blob), size: blob.length });
  const configDigest = await pushBlob(registry, repository, config);
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: configDigest, size: config.length },
      layers: layers.map((l) => ({ mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', ...l })),
    }),
  );
  await checked(
    await fetch(`http://${registry}/v2/${repository}/manifests/${tag}`, {
      method: 'PUT',
      body: manifest,
      headers: { 'content-type': 'application/vnd.oci.image.manifest.v1+json' },
    }),
    `putting the manifest of ${repository}:${tag}`,
  );
  return {
    imageName: `${registry}/${repository}`,
    tag,
    manifestDigest: sha256(manifest),
    layerDigest: layers[0]!.digest,
    layerSize: layers[0]!.size,
    layers,
  };
}
