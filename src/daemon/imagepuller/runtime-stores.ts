// What the image puller asks of the runtime beyond CRI, by runtime. Pins: containerd 1.7 and later read the pinned
// label on an image reference (src/cri/containerd-images.ts); other runtimes get the reason they cannot pin, which
// each Succeeded tag's status then says. Progress: containerd's content store (src/cri/containerd-content.ts); other
// runtimes give none. Leases, so a pull paused for kubelet resumes: containerd's lease service
// (src/cri/containerd-leases.ts); other runtimes have none. CRI-O pins only what its configuration lists (`pinned_images`, reloaded on SIGHUP from
// crio.conf and its drop-in directory, where a later file's list replaces an earlier one's): pinning there would
// mean writing the host's CRI-O configuration and signalling the runtime, which the agent is not allowed to do.
import type { CriClient } from '../../cri/client.js';
import { ContainerdImages } from '../../cri/containerd-images.js';
import { ContainerdChannel } from '../../cri/containerd-api.js';
import { ContainerdContent, type ContentStore } from '../../cri/containerd-content.js';
import { ContainerdLeases, type LeaseStore } from '../../cri/containerd-leases.js';
import type { PinStore } from './image-pins.js';

export async function pinStoreFor(client: CriClient): Promise<PinStore> {
  const version = await client.version();
  const name = version.runtime_name;
  const release = version.runtime_version.replace(/^v/, '');
  if (name === 'containerd') {
    const [major = 0, minor = 0] = release.split(/[.~+-]/).map(Number);
    if (major > 1 || (major === 1 && minor >= 7)) return new ContainerdImages(client.socketPath);
    return {
      unsupported: `containerd ${release} does not report pinned images to kubelet (containerd 1.7 and later do); kubelet's image GC may remove it, and it is pulled again when that is noticed`,
    };
  }
  return {
    unsupported: `${name} ${release} pins only the images its own configuration lists (pinned_images), which the agent does not write; kubelet's image GC may remove it, and it is pulled again when that is noticed`,
  };
}

/** containerd's content store on the runtime's socket, for pull progress; undefined on another runtime. */
export async function contentStoreFor(client: CriClient): Promise<ContentStore | undefined> {
  const version = await client.version();
  if (version.runtime_name !== 'containerd') return undefined;
  return new ContainerdContent(new ContainerdChannel(client.socketPath));
}

/** containerd's lease service on the runtime's socket, for resumable pulls; undefined on another runtime. */
export async function leaseStoreFor(client: CriClient): Promise<LeaseStore | undefined> {
  const version = await client.version();
  if (version.runtime_name !== 'containerd') return undefined;
  return new ContainerdLeases(new ContainerdChannel(client.socketPath));
}
