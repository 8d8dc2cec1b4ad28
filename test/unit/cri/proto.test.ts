import assert from 'node:assert/strict';
import { loadSync } from '@grpc/proto-loader';
import { CRI_METHODS, type CriMethod } from '../../../src/cri/methods.js';
import { criProtoPath, criServices, PROTO_LOADER_OPTIONS } from '../../../src/cri/proto.js';

interface FieldDescriptor {
  name: string;
  number: number;
}

describe('cri proto', () => {
  it('is loaded once per process', () => {
    assert.equal(criServices(), criServices());
  });

  it('declares every RPC the client calls, in the right service, under /runtime.v1.<Service>/<Method>', () => {
    const services = criServices();
    for (const method of Object.keys(CRI_METHODS) as CriMethod[]) {
      const spec = CRI_METHODS[method];
      const def = spec.service === 'runtime' ? services.runtime[method] : services.image[method];
      assert.ok(def, `${method} missing`);
      const service = spec.service === 'runtime' ? 'RuntimeService' : 'ImageService';
      assert.equal(def.path, `/runtime.v1.${service}/${method}`);
      assert.equal(def.requestStream, false);
      assert.equal(def.responseStream, false);
    }
  });

  it('keeps the published field numbers (spot checks across the messages)', () => {
    const definition = loadSync(criProtoPath(), { ...PROTO_LOADER_OPTIONS });
    const fields = (message: string): Map<string, number> => {
      const entry = definition[`runtime.v1.${message}`] as { type?: { field?: FieldDescriptor[] } } | undefined;
      assert.ok(entry?.type?.field, `message ${message} missing`);
      return new Map(entry.type.field.map((f) => [f.name, f.number]));
    };
    const expected: [string, string, number][] = [
      ['VersionResponse', 'runtime_api_version', 4],
      ['PodSandboxConfig', 'log_directory', 3],
      ['PodSandboxConfig', 'linux', 8],
      ['PodSandboxConfig', 'windows', 9],
      ['LinuxSandboxSecurityContext', 'run_as_group', 8],
      ['LinuxSandboxSecurityContext', 'supplemental_groups_policy', 11],
      ['LinuxContainerSecurityContext', 'run_as_group', 12],
      ['LinuxContainerSecurityContext', 'no_new_privs', 11],
      ['LinuxContainerSecurityContext', 'apparmor', 16],
      ['LinuxContainerResources', 'memory_swap_limit_in_bytes', 10],
      ['ContainerConfig', 'log_path', 11],
      ['ContainerConfig', 'linux', 15],
      ['ContainerConfig', 'CDI_devices', 17],
      ['Mount', 'uidMappings', 6],
      ['Mount', 'image', 9],
      ['ImageSpec', 'user_specified_image', 18],
      ['ImageSpec', 'runtime_handler', 19],
      ['Container', 'image_id', 10],
      ['ContainerStatus', 'log_path', 15],
      ['ContainerStatus', 'image_source', 19],
      ['PodSandboxStatusResponse', 'containers_statuses', 3],
      ['Image', 'pinned', 8],
      ['AuthConfig', 'server_address', 4],
      ['AuthConfig', 'registry_token', 6],
      ['ExecSyncRequest', 'timeout', 3],
      ['StopContainerRequest', 'timeout', 2],
      ['Namespace', 'options', 2],
      ['StatusResponse', 'features', 4],
    ];
    for (const [message, field, number] of expected) {
      assert.equal(fields(message).get(field), number, `${message}.${field}`);
    }
  });
});
