// RunPodSandbox's config as kubelet generates it (kuberuntime_sandbox.go#generatePodSandboxConfig,
// #generatePodSandboxLinuxConfig): metadata, hostname, log directory, DNS (the host's resolv.conf: there is no
// cluster DNS), port mappings, labels/annotations (labels.ts), cgroup parent and namespace options.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DNSConfig, PodSandboxConfig } from '../../../src/cri/types.js';
import { sandboxAnnotations, sandboxLabels } from './labels.js';
import type { NodeSettings } from './settings.js';
import type { Pod } from './types.js';

export function podLogDirectory(settings: Pick<NodeSettings, 'podLogDir'>, pod: Pod): string {
  return join(settings.podLogDir, `${pod.metadata.namespace}_${pod.metadata.name}_${pod.metadata.uid}`);
}

export function podCgroupParent(settings: Pick<NodeSettings, 'podCgroupParent'>, uid: string): string {
  return `${settings.podCgroupParent.replace(/\/+$/, '')}/pod${uid}`;
}

/** dnsPolicy Default (the host's resolv.conf): servers, searches, options. */
export function hostDnsConfig(text: string): DNSConfig {
  const servers: string[] = [];
  const searches: string[] = [];
  const options: string[] = [];
  for (const raw of text.split('\n')) {
    const fields = raw
      .replace(/[#;].*$/, '')
      .trim()
      .split(/\s+/);
    const [key, ...rest] = fields;
    if (key === 'nameserver' && rest[0]) servers.push(rest[0]);
    else if (key === 'search') searches.splice(0, searches.length, ...rest);
    else if (key === 'options') options.push(...rest);
  }
  return { servers, searches, options };
}

let hostDns: DNSConfig | undefined;
function readHostDns(): DNSConfig {
  if (!hostDns) {
    let text = '';
    try {
      text = readFileSync('/etc/resolv.conf', 'utf8');
    } catch {
      // no resolv.conf: no DNS config
    }
    hostDns = hostDnsConfig(text);
  }
  return hostDns;
}

/** GeneratePodHostNameAndDomain: spec.hostname or the pod name, truncated to 63 characters. */
export function podHostname(pod: Pod): string {
  const name = pod.spec.hostname ?? pod.metadata.name;
  return name.length > 63 ? name.slice(0, 63).replace(/[-.]+$/, '') : name;
}

export function sandboxConfig(pod: Pod, attempt: number, settings: NodeSettings): PodSandboxConfig {
  const portMappings = [];
  for (const c of pod.spec.containers) {
    for (const p of c.ports ?? []) {
      portMappings.push({
        protocol: (p.protocol ?? 'TCP').toUpperCase() as 'TCP' | 'UDP' | 'SCTP',
        container_port: p.containerPort,
        host_port: p.hostPort ?? 0,
        host_ip: p.hostIP ?? '',
      });
    }
  }
  const privileged = [...(pod.spec.initContainers ?? []), ...pod.spec.containers].some(
    (c) => c.securityContext?.privileged === true,
  );
  const psc = pod.spec.securityContext ?? {};
  return {
    metadata: { name: pod.metadata.name, namespace: pod.metadata.namespace, uid: pod.metadata.uid, attempt },
    hostname: podHostname(pod),
    log_directory: podLogDirectory(settings, pod),
    dns_config: readHostDns(),
    port_mappings: portMappings,
    labels: sandboxLabels(pod, settings.nodeName),
    annotations: sandboxAnnotations(pod),
    linux: {
      cgroup_parent: podCgroupParent(settings, pod.metadata.uid),
      security_context: {
        namespace_options: {
          network: pod.spec.hostNetwork ? 'NODE' : 'POD',
          pid: pod.spec.shareProcessNamespace ? 'POD' : 'CONTAINER',
          ipc: 'POD',
        },
        privileged,
        run_as_user: psc.runAsUser !== undefined ? { value: psc.runAsUser } : undefined,
        run_as_group: psc.runAsGroup !== undefined ? { value: psc.runAsGroup } : undefined,
        supplemental_groups: [...(psc.supplementalGroups ?? []), ...(psc.fsGroup !== undefined ? [psc.fsGroup] : [])],
      },
    },
  };
}
