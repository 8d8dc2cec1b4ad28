// Pod volumes kubelet-lite supports: emptyDir (a directory under <stateDir>/pods/<uid>/volumes) and hostPath
// (types "", Directory, DirectoryOrCreate, File, FileOrCreate). Any other volume source fails the pod's volume
// setup with a FailedMount event and the pod stays ContainerCreating, as kubelet does when a mount never succeeds.
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import type { Pod } from './types.js';

export class VolumeError extends Error {}

export function podDirectory(stateDir: string, uid: string): string {
  return join(stateDir, 'pods', uid);
}

/** Set up the pod's volumes; returns volume name -> host path. */
export async function setUpVolumes(pod: Pod, stateDir: string): Promise<Map<string, string>> {
  const paths = new Map<string, string>();
  const base = join(podDirectory(stateDir, pod.metadata.uid), 'volumes');
  for (const volume of pod.spec.volumes ?? []) {
    if (volume.emptyDir !== undefined) {
      const dir = join(base, 'kubernetes.io~empty-dir', volume.name);
      await mkdir(dir, { recursive: true, mode: 0o777 });
      paths.set(volume.name, dir);
    } else if (volume.hostPath !== undefined) {
      const { path, type = '' } = volume.hostPath;
      if (!isAbsolute(path))
        throw new VolumeError(`hostPath ${JSON.stringify(path)} of volume ${volume.name} is not absolute`);
      const found = await stat(path).catch(() => undefined);
      if (type === 'DirectoryOrCreate' && !found) await mkdir(path, { recursive: true, mode: 0o755 });
      else if (type === 'FileOrCreate' && !found) await writeFile(path, '', { mode: 0o644 });
      else if (type === 'Directory' && !found?.isDirectory())
        throw new VolumeError(`hostPath type check failed: ${path} is not a directory`);
      else if (type === 'File' && !found?.isFile())
        throw new VolumeError(`hostPath type check failed: ${path} is not a file`);
      paths.set(volume.name, path);
    } else {
      const kind = Object.keys(volume).find((k) => k !== 'name') ?? 'unknown';
      throw new VolumeError(`volume ${JSON.stringify(volume.name)}: source ${kind} is not supported by kubelet-lite`);
    }
  }
  return paths;
}

/** The host file mounted at the container's terminationMessagePath (kubelet: <podDir>/containers/<name>/<id>). */
export async function terminationMessageFile(
  stateDir: string,
  uid: string,
  container: string,
  restartCount: number,
): Promise<string> {
  const dir = join(podDirectory(stateDir, uid), 'containers', container);
  await mkdir(dir, { recursive: true });
  const file = join(dir, String(restartCount));
  await writeFile(file, '', { mode: 0o666 });
  return file;
}
