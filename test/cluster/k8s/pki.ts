// Component "pki" (real cluster): a CA and every certificate and kubeconfig the cluster needs, made with openssl
// (ECDSA P-256, fast to generate) on the first up and kept; a certificate whose subject or SANs changed is made
// again. Keys are 0600. Identities: the API server (serving; SANs: host address, `kubernetes` Service IP and names),
// kubernetes-admin (system:masters, the user's kubeconfig), system:kube-controller-manager, system:kube-scheduler,
// system:kube-proxy, the API server's kubelet client, and per node system:node:<name> (client) plus a kubelet
// serving certificate for the node's address. Service-account tokens are signed with sa.key. A second CA
// (webhook-client-ca) signs only the client certificate the API server presents to admission webhooks
// (kube-apiserver-webhook-client, given to it by admission-config.yaml's WebhookAdmission kubeconfig), so the
// controller's webhook port, trusting that CA alone, answers the API server and nobody else.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { ClusterComponent, ClusterContext } from '../component.js';
import { runChecked } from '../runtime/exec.js';
import { readTextIfExists, writeAtomic, writeIfChanged } from '../runtime/files.js';
import { layoutFromContext } from './context.js';
import type { K8sLayout } from './layout.js';

const DAYS = '3650';

interface CertSpec {
  /** File stem: <stem>.crt / <stem>.key. */
  stem: string;
  /** Stem of the CA that signs it (default `ca`, the cluster CA). */
  ca?: string;
  /** A client identity of the API server itself (a kubeconfig is written)? Default: yes for client certificates. */
  apiClient?: boolean;
  cn: string;
  org?: string;
  /** Subject alternative names ("IP:1.2.3.4", "DNS:name"); present = a serving certificate. */
  sans?: string[];
}

function subject(spec: CertSpec): string {
  return `/CN=${spec.cn}${spec.org ? `/O=${spec.org}` : ''}`;
}

function extensions(spec: CertSpec): string {
  const lines = ['basicConstraints=critical,CA:FALSE', 'keyUsage=critical,digitalSignature,keyEncipherment'];
  if (spec.sans && spec.sans.length > 0) {
    lines.push('extendedKeyUsage=serverAuth,clientAuth', `subjectAltName=${spec.sans.join(',')}`);
  } else {
    lines.push('extendedKeyUsage=clientAuth');
  }
  return `${lines.join('\n')}\n`;
}

/** The cluster CA and the webhook client CA: stem and subject. */
const CAS = [
  { stem: 'ca', cn: 'kruise-daemon-test-ca' },
  { stem: 'webhook-client-ca', cn: 'kruise-daemon-test-webhook-client-ca' },
];

async function ensureCa(dir: string, stem: string, cn: string): Promise<void> {
  const crt = join(dir, `${stem}.crt`);
  if ((await readTextIfExists(crt)) !== undefined) return;
  const key = join(dir, `${stem}.key`);
  await runChecked('openssl', ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', key]);
  await runChecked('openssl', [
    'req',
    '-x509',
    '-new',
    '-key',
    key,
    '-subj',
    `/CN=${cn}`,
    '-days',
    DAYS,
    '-out',
    crt,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign,digitalSignature',
  ]);
}

/** Make <stem>.crt/.key signed by the CA unless the same spec made them already. */
async function ensureCert(dir: string, spec: CertSpec): Promise<void> {
  const specFile = join(dir, `${spec.stem}.spec`);
  const ca = spec.ca ?? 'ca';
  const specText = `${subject(spec)}\n${extensions(spec)}${ca === 'ca' ? '' : `signed by ${ca}\n`}`;
  const crt = join(dir, `${spec.stem}.crt`);
  if ((await readTextIfExists(specFile)) === specText && (await readTextIfExists(crt)) !== undefined) return;
  const key = join(dir, `${spec.stem}.key`);
  const csr = join(dir, `${spec.stem}.csr`);
  const ext = join(dir, `${spec.stem}.ext`);
  await runChecked('openssl', ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', key]);
  await runChecked('openssl', ['req', '-new', '-key', key, '-subj', subject(spec), '-out', csr]);
  await writeAtomic(ext, extensions(spec));
  await runChecked('openssl', [
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    join(dir, `${ca}.crt`),
    '-CAkey',
    join(dir, `${ca}.key`),
    '-CAcreateserial',
    '-days',
    DAYS,
    '-extfile',
    ext,
    '-out',
    crt,
  ]);
  await writeAtomic(specFile, specText);
}

async function ensureServiceAccountKey(dir: string): Promise<void> {
  if ((await readTextIfExists(join(dir, 'sa.pub'))) !== undefined) return;
  await runChecked('openssl', ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', join(dir, 'sa.key')]);
  await runChecked('openssl', ['ec', '-in', join(dir, 'sa.key'), '-pubout', '-out', join(dir, 'sa.pub')]);
}

/** A kubeconfig for `user` with client certificate files (paths, not embedded: they stay 0600 in the pki dir). */
export function kubeconfig(server: string, caFile: string, user: string, certFile: string, keyFile: string): string {
  return `apiVersion: v1
kind: Config
clusters:
- name: kruise-daemon-test
  cluster:
    server: ${server}
    certificate-authority: ${caFile}
contexts:
- name: ${user}@kruise-daemon-test
  context: {cluster: kruise-daemon-test, user: ${user}}
current-context: ${user}@kruise-daemon-test
users:
- name: ${user}
  user:
    client-certificate: ${certFile}
    client-key: ${keyFile}
`;
}

export function certSpecs(layout: K8sLayout): CertSpec[] {
  return [
    {
      stem: 'apiserver',
      cn: 'kube-apiserver',
      sans: [
        `IP:${layout.hostIp}`,
        `IP:${layout.kubernetesServiceIp}`,
        'IP:127.0.0.1',
        'DNS:kubernetes',
        'DNS:kubernetes.default',
        'DNS:kubernetes.default.svc',
        'DNS:kubernetes.default.svc.cluster.local',
        'DNS:localhost',
      ],
    },
    { stem: 'admin', cn: 'kubernetes-admin', org: 'system:masters' },
    { stem: 'controller-manager', cn: 'system:kube-controller-manager' },
    { stem: 'scheduler', cn: 'system:kube-scheduler' },
    { stem: 'kube-proxy', cn: 'system:kube-proxy' },
    { stem: 'apiserver-kubelet-client', cn: 'kube-apiserver-kubelet-client', org: 'system:masters' },
    { stem: 'apiserver-webhook-client', cn: WEBHOOK_CLIENT_CN, ca: 'webhook-client-ca', apiClient: false },
    ...layout.nodes.flatMap((node) => [
      { stem: node.name, cn: `system:node:${node.name}`, org: 'system:nodes' },
      { stem: `${node.name}-serving`, cn: `system:node:${node.name}`, sans: [`IP:${node.ip}`, `DNS:${node.name}`] },
    ]),
  ];
}

/** Subject of the client certificate the API server presents to admission webhooks. */
export const WEBHOOK_CLIENT_CN = 'kube-apiserver-webhook-client';

/** The CA (PEM) a webhook trusts to know the API server: pass it as kruise-controller's --webhook-client-ca. */
export function webhookClientCaPath(layout: K8sLayout): string {
  return join(layout.pkiDir, 'webhook-client-ca.crt');
}

/** kube-apiserver's --admission-control-config-file. */
export function admissionConfigPath(layout: K8sLayout): string {
  return join(layout.pkiDir, 'admission-config.yaml');
}

/** The Service the in-cluster controller's webhooks are called through (deploy/controller/service.yaml, port 443). */
const WEBHOOK_SERVICE_HOST = 'kruise-controller-webhook.kruise-system.svc';

/**
 * The WebhookAdmission kubeconfig: which client certificate the API server presents to which webhook host. Users
 * are matched by the webhook's host: a Service as `<name>.<namespace>.svc` with its port (and without it when the
 * port is 443), a URL webhook by the host:port of its URL, `*` matching whatever else. A host-process controller is
 * called by URL at the host's address with a port chosen per run, so only `*` covers it; every other webhook in
 * this cluster may be shown the certificate too, which gives it nothing (a client certificate is no secret).
 */
export function webhookAdmissionKubeconfig(layout: K8sLayout): string {
  const user = `    client-certificate: ${join(layout.pkiDir, 'apiserver-webhook-client.crt')}
    client-key: ${join(layout.pkiDir, 'apiserver-webhook-client.key')}`;
  const names = [`${WEBHOOK_SERVICE_HOST}:443`, WEBHOOK_SERVICE_HOST, '*'];
  return `apiVersion: v1
kind: Config
users:
${names.map((name) => `- name: '${name}'\n  user:\n${user}`).join('\n')}
`;
}

/** The AdmissionConfiguration: both webhook admission plugins take the kubeconfig above. */
export function admissionConfiguration(layout: K8sLayout): string {
  const kubeconfigFile = join(layout.pkiDir, 'webhook-admission.kubeconfig');
  const plugin = (name: string): string => `- name: ${name}
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: ${kubeconfigFile}`;
  return `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
${plugin('ValidatingAdmissionWebhook')}
${plugin('MutatingAdmissionWebhook')}
`;
}

/** Kubeconfig file of a client identity (its certificate's stem) in the pki dir. */
export function kubeconfigPath(layout: K8sLayout, stem: string): string {
  return join(layout.pkiDir, `${stem}.kubeconfig`);
}

export function pki(): ClusterComponent {
  return {
    name: 'pki',
    async up(ctx: ClusterContext) {
      const layout = await layoutFromContext(ctx);
      if (!layout) throw new Error('pki needs CLUSTER_SUBNET_OCTET from host-network (start it first)');
      const dir = layout.pkiDir;
      await mkdir(dir, { recursive: true, mode: 0o700 });
      const previous = process.umask(0o077);
      try {
        for (const ca of CAS) await ensureCa(dir, ca.stem, ca.cn);
        await ensureServiceAccountKey(dir);
        for (const spec of certSpecs(layout)) {
          await ensureCert(dir, spec);
          if (spec.sans || spec.apiClient === false) continue;
          await writeIfChanged(
            kubeconfigPath(layout, spec.stem),
            kubeconfig(
              layout.apiServerUrl,
              join(dir, 'ca.crt'),
              spec.cn,
              join(dir, `${spec.stem}.crt`),
              join(dir, `${spec.stem}.key`),
            ),
            0o600,
          );
        }
        await writeIfChanged(join(dir, 'webhook-admission.kubeconfig'), webhookAdmissionKubeconfig(layout), 0o600);
        await writeIfChanged(admissionConfigPath(layout), admissionConfiguration(layout), 0o600);
      } finally {
        process.umask(previous);
      }
      return { KUBECONFIG: layout.adminKubeconfig, CLUSTER_CA: join(dir, 'ca.crt'), PKI_DIR: dir };
    },
    async down() {
      // certificates are kept: the next up of this directory reuses them (down --purge deletes them)
    },
  };
}
