// Component "host-packages": the Debian packages the local cluster runs on. As root on Debian it installs what
// is missing (apt-get update first, only then); anywhere else it says what is needed (PrerequisiteError, exit 2).
import { existsSync } from 'node:fs';
import { appendFile, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { ClusterComponent, ClusterContext } from '../component.js';
import { clusterPaths } from '../paths.js';
import { PrerequisiteError } from './errors.js';
import { run } from './exec.js';
import { stackOf, type Stack } from '../stack.js';

/**
 * Debian package -> a file it installs that every cluster uses: what no Go module serves (the registry, skopeo and
 * umoci for the test images, busybox for their contents, htpasswd, iproute2, iptables), and what building runc
 * needs (gcc for its cgo nsenter, libseccomp-dev for seccomp).
 */
export const REQUIRED_PACKAGES: Readonly<Record<string, string>> = {
  'docker-registry': '/usr/bin/docker-registry',
  skopeo: '/usr/bin/skopeo',
  umoci: '/usr/bin/umoci',
  'busybox-static': '/bin/busybox',
  'apache2-utils': '/usr/bin/htpasswd',
  iproute2: '/usr/sbin/ip',
  iptables: '/usr/sbin/iptables',
  gcc: '/usr/bin/gcc',
  'libseccomp-dev': '/usr/include/seccomp.h',
};

/** The old cell (Kubernetes 1.33 on containerd-1.6) runs Debian's containerd, runc and CNI plugins. */
export const DEBIAN_RUNTIME_PACKAGES: Readonly<Record<string, string>> = {
  containerd: '/usr/bin/containerd',
  runc: '/usr/sbin/runc',
  'containernetworking-plugins': '/usr/lib/cni/bridge',
};

/** CRI-O's cell: its container monitor conmon (2.1.6 in Debian 12), which no Go module serves (it is C). */
export const CRIO_RUNTIME_PACKAGES: Readonly<Record<string, string>> = {
  conmon: '/usr/bin/conmon',
};

/** The packages the cluster in `dir` needs (its stack's). */
export function requiredPackages(dir: string): Record<string, string> {
  return stackPackages(stackOf(dir));
}

/** The packages a stack's cluster needs. */
export function stackPackages(stack: Stack): Record<string, string> {
  switch (stack.runtime) {
    case 'containerd-1.6':
      return { ...REQUIRED_PACKAGES, ...DEBIAN_RUNTIME_PACKAGES };
    case 'cri-o':
      return { ...REQUIRED_PACKAGES, ...CRIO_RUNTIME_PACKAGES };
    default:
      return { ...REQUIRED_PACKAGES };
  }
}

export function isDebian(): boolean {
  return existsSync('/etc/debian_version') && existsSync('/usr/bin/apt-get') && existsSync('/usr/bin/dpkg-query');
}

/** Packages of `names` that dpkg does not report as installed. */
export async function missingPackages(names: readonly string[]): Promise<string[]> {
  // dpkg-query exits 1 when some name is unknown, but still prints the others.
  const result = await run('dpkg-query', ['-W', '-f=${Package} ${Status}\\n', ...names]);
  const installed = new Set(
    result.stdout
      .split('\n')
      .filter((line) => line.endsWith(' install ok installed'))
      .map((line) => line.split(' ')[0]),
  );
  return names.filter((name) => !installed.has(name));
}

async function aptGet(args: string[], logFile: string): Promise<void> {
  const result = await run('apt-get', ['-o', 'DPkg::Lock::Timeout=300', ...args], {
    env: { DEBIAN_FRONTEND: 'noninteractive' },
    timeoutMs: 900_000,
  });
  await appendFile(logFile, `$ apt-get ${args.join(' ')}\n${result.stdout}${result.stderr}\n`);
  if (result.code !== 0) {
    throw new PrerequisiteError(
      `apt-get ${args[0]} failed (exit ${String(result.code)}); see ${logFile}. ` +
        `Install by hand: apt-get install ${Object.keys(REQUIRED_PACKAGES).join(' ')}`,
    );
  }
}

/**
 * Install what `required` names and is missing (as root on Debian; elsewhere say what is missing), apt-get's output
 * in `logFile`.
 */
export async function ensureHostPackages(
  required: Record<string, string>,
  logFile: string,
  log: (message: string) => void,
): Promise<void> {
  const names = Object.keys(required);
  if (process.getuid?.() !== 0) {
    throw new PrerequisiteError(
      `the local cluster needs root (it runs containerd, creates a bridge and mounts); ` +
        `run as root on Debian 12, where it installs: ${names.join(' ')}`,
    );
  }
  if (!isDebian()) {
    const absent = Object.entries(required).filter(([, file]) => !existsSync(file));
    if (absent.length > 0) {
      throw new PrerequisiteError(
        `not a Debian machine, so nothing is installed automatically; missing: ` +
          absent.map(([pkg, file]) => `${file} (Debian package ${pkg})`).join(', '),
      );
    }
    return;
  }
  const missing = await missingPackages(names);
  if (missing.length === 0) return;
  await mkdir(dirname(logFile), { recursive: true });
  log(`installing Debian packages: ${missing.join(' ')} (log: ${logFile})`);
  await aptGet(['update', '-q'], logFile);
  await aptGet(['install', '-y', '-q', '--no-install-recommends', ...missing], logFile);
  const stillMissing = await missingPackages(missing);
  if (stillMissing.length > 0) {
    throw new PrerequisiteError(`packages still missing after apt-get install: ${stillMissing.join(' ')}`);
  }
}

export function hostPackages(): ClusterComponent {
  return {
    name: 'host-packages',
    async up(ctx: ClusterContext) {
      await ensureHostPackages(requiredPackages(ctx.dir), join(clusterPaths(ctx.dir).logDir, 'apt.log'), ctx.log);
      return {};
    },
    async down() {
      // packages stay installed
    },
  };
}
