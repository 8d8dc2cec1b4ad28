// Container environment as kubelet builds it (kubelet_pods.go#Kubelet.makeEnvironmentVariables): envFrom sources
// first (invalid names skipped), then env entries in order (each overriding), values with $(VAR) expansion.
// Errors carry kubelet's messages; the caller turns them into Waiting CreateContainerConfigError.
// Service-link variables are not produced (no Services in the local cluster).
import { expand } from './expansion.js';
import type { ConfigMap, Container, Pod, Secret } from './types.js';

export class EnvError extends Error {}

/** Reads ConfigMaps and Secrets of the pod's namespace; undefined when the object does not exist. */
export interface ConfigSource {
  configMap(namespace: string, name: string): Promise<ConfigMap | undefined>;
  secret(namespace: string, name: string): Promise<Secret | undefined>;
}

export interface EnvContext {
  pod: Pod;
  nodeName: string;
  podIPs: string[];
  hostIPs: string[];
  source: ConfigSource;
}

/** C_IDENTIFIER-ish rule of validation.IsEnvVarName: printable, no '=', not empty. */
export function isValidEnvName(name: string): boolean {
  return name !== '' && !name.includes('=') && /^[-._a-zA-Z][-._a-zA-Z0-9]*$/.test(name);
}

const LABEL_PATH = /^metadata\.labels\['(.+)'\]$/;
const ANNOTATION_PATH = /^metadata\.annotations\['(.+)'\]$/;

/** podFieldSelectorRuntimeValue + fieldpath.ExtractFieldPathAsString for the paths validation accepts for env. */
export function fieldRefValue(path: string, ctx: Pick<EnvContext, 'pod' | 'nodeName' | 'podIPs' | 'hostIPs'>): string {
  const { pod } = ctx;
  const label = LABEL_PATH.exec(path);
  if (label) return pod.metadata.labels?.[label[1]!] ?? '';
  const annotation = ANNOTATION_PATH.exec(path);
  if (annotation) return pod.metadata.annotations?.[annotation[1]!] ?? '';
  switch (path) {
    case 'metadata.name':
      return pod.metadata.name;
    case 'metadata.namespace':
      return pod.metadata.namespace;
    case 'metadata.uid':
      return pod.metadata.uid;
    case 'spec.nodeName':
      return pod.spec.nodeName ?? ctx.nodeName;
    case 'spec.serviceAccountName':
      return pod.spec.serviceAccountName ?? '';
    case 'status.podIP':
      return ctx.podIPs[0] ?? '';
    case 'status.podIPs':
      return ctx.podIPs.join(',');
    case 'status.hostIP':
      return ctx.hostIPs[0] ?? '';
    case 'status.hostIPs':
      return ctx.hostIPs.join(',');
    default:
      throw new EnvError(`unsupported fieldPath: ${path}`);
  }
}

function decodeSecretValue(secret: Secret, key: string): string | undefined {
  const encoded = secret.data?.[key];
  if (encoded !== undefined) return Buffer.from(encoded, 'base64').toString('utf8');
  return secret.stringData?.[key];
}

function configMapValue(cm: ConfigMap, key: string): string | undefined {
  const text = cm.data?.[key];
  if (text !== undefined) return text;
  const binary = cm.binaryData?.[key];
  return binary === undefined ? undefined : Buffer.from(binary, 'base64').toString('utf8');
}

/** The container's env in order, as name/value pairs for CRI. Throws EnvError with kubelet's message. */
export async function makeEnvironment(
  container: Container,
  ctx: EnvContext,
): Promise<{ key: string; value: string }[]> {
  const ns = ctx.pod.metadata.namespace;
  const values = new Map<string, string>();
  for (const from of container.envFrom ?? []) {
    const prefix = from.prefix ?? '';
    if (from.configMapRef) {
      const name = from.configMapRef.name ?? '';
      const cm = await ctx.source.configMap(ns, name);
      if (!cm) {
        if (from.configMapRef.optional) continue;
        throw new EnvError(`configmap "${name}" not found`);
      }
      const keys = new Set([...Object.keys(cm.data ?? {}), ...Object.keys(cm.binaryData ?? {})]);
      for (const key of keys) {
        const envName = prefix + key;
        if (isValidEnvName(envName)) values.set(envName, configMapValue(cm, key) ?? '');
      }
    } else if (from.secretRef) {
      const name = from.secretRef.name ?? '';
      const secret = await ctx.source.secret(ns, name);
      if (!secret) {
        if (from.secretRef.optional) continue;
        throw new EnvError(`secret "${name}" not found`);
      }
      const keys = new Set([...Object.keys(secret.data ?? {}), ...Object.keys(secret.stringData ?? {})]);
      for (const key of keys) {
        const envName = prefix + key;
        if (isValidEnvName(envName)) values.set(envName, decodeSecretValue(secret, key) ?? '');
      }
    }
  }
  const lookup = (name: string): string | undefined => values.get(name);
  for (const env of container.env ?? []) {
    const source = env.valueFrom;
    if (!source) {
      values.set(env.name, expand(env.value ?? '', lookup));
      continue;
    }
    if (source.fieldRef) {
      values.set(env.name, fieldRefValue(source.fieldRef.fieldPath, ctx));
    } else if (source.configMapKeyRef) {
      const { name = '', key, optional } = source.configMapKeyRef;
      const cm = await ctx.source.configMap(ns, name);
      if (!cm) {
        if (optional) continue;
        throw new EnvError(`configmap "${name}" not found`);
      }
      const value = configMapValue(cm, key);
      if (value === undefined) {
        if (optional) continue;
        throw new EnvError(`couldn't find key ${key} in ConfigMap ${ns}/${name}`);
      }
      values.set(env.name, value);
    } else if (source.secretKeyRef) {
      const { name = '', key, optional } = source.secretKeyRef;
      const secret = await ctx.source.secret(ns, name);
      if (!secret) {
        if (optional) continue;
        throw new EnvError(`secret "${name}" not found`);
      }
      const value = decodeSecretValue(secret, key);
      if (value === undefined) {
        if (optional) continue;
        throw new EnvError(`couldn't find key ${key} in Secret ${ns}/${name}`);
      }
      values.set(env.name, value);
    } else if (source.resourceFieldRef) {
      throw new EnvError(`env ${env.name}: resourceFieldRef is not supported by kubelet-lite`);
    }
  }
  return [...values].map(([key, value]) => ({ key, value }));
}
