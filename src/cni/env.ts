// The CNI call as the runtime passes it in the environment: CNI_COMMAND, CNI_CONTAINERID, CNI_NETNS, CNI_IFNAME,
// CNI_ARGS, CNI_PATH. Validated per command (SPEC.md "Parameters"); every problem is a CniError with code 4 ("invalid
// necessary environment variables"), whose message names the variable.
import { CniCode, CniError, quote } from './errors.js';

export type CniCommand = 'ADD' | 'DEL' | 'CHECK' | 'VERSION' | 'GC' | 'STATUS';

const COMMANDS: readonly CniCommand[] = ['ADD', 'DEL', 'CHECK', 'VERSION', 'GC', 'STATUS'];

export interface PodRef {
  namespace: string;
  name: string;
  uid: string | undefined;
}

export interface CniCall {
  command: CniCommand;
  containerId: string;
  netns: string;
  ifName: string;
  /** Every key of CNI_ARGS, as given. */
  args: Record<string, string>;
  /** From CNI_ARGS K8S_POD_NAMESPACE / K8S_POD_NAME / K8S_POD_UID, when both names are there. */
  pod: PodRef | undefined;
}

const CONTAINER_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function invalid(message: string): CniError {
  return new CniError(CniCode.invalidEnv, message);
}

/** Parse `K=V;K2=V2` (CNI_ARGS). */
export function parseCniArgs(text: string): Record<string, string> {
  const args: Record<string, string> = {};
  for (const pair of text.split(';')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    if (eq <= 0) throw invalid(`CNI_ARGS: ${quote(pair)} is not KEY=VALUE`);
    args[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return args;
}

export function validIfName(name: string): boolean {
  return (
    name.length > 0 && name.length <= 15 && name !== '.' && name !== '..' && !/[/:\s]/.test(name) // IFNAMSIZ
  );
}

function podOf(args: Record<string, string>): PodRef | undefined {
  const namespace = args.K8S_POD_NAMESPACE;
  const name = args.K8S_POD_NAME;
  if (!namespace || !name) return undefined;
  if (!DNS_LABEL.test(namespace) || namespace.length > 63) {
    throw invalid(`CNI_ARGS: K8S_POD_NAMESPACE=${quote(namespace)} is not a namespace name`);
  }
  if (!DNS_SUBDOMAIN.test(name) || name.length > 253) {
    throw invalid(`CNI_ARGS: K8S_POD_NAME=${quote(name)} is not a pod name`);
  }
  const uid = args.K8S_POD_UID;
  return { namespace, name, uid: uid ? uid : undefined };
}

function podOrUndefined(args: Record<string, string>): PodRef | undefined {
  try {
    return podOf(args);
  } catch {
    return undefined;
  }
}

/** Read and check the call from the environment. */
export function readCniCall(env: NodeJS.ProcessEnv): CniCall {
  const command = env.CNI_COMMAND ?? '';
  if (command === '') throw invalid(`CNI_COMMAND is required: one of ${COMMANDS.join(', ')}`);
  if (!(COMMANDS as readonly string[]).includes(command)) {
    throw invalid(`CNI_COMMAND=${quote(command)}: expected one of ${COMMANDS.join(', ')}`);
  }
  const cmd = command as CniCommand;
  const call: CniCall = {
    command: cmd,
    containerId: env.CNI_CONTAINERID ?? '',
    netns: env.CNI_NETNS ?? '',
    ifName: env.CNI_IFNAME ?? '',
    args: parseCniArgs(env.CNI_ARGS ?? ''),
    pod: undefined,
  };
  if (cmd === 'ADD' || cmd === 'DEL' || cmd === 'CHECK') {
    if (call.containerId === '') throw invalid(`CNI_CONTAINERID is required for ${cmd}`);
    if (!CONTAINER_ID.test(call.containerId)) {
      throw invalid(`CNI_CONTAINERID=${quote(call.containerId)}: expected [A-Za-z0-9][A-Za-z0-9_.-]*`);
    }
    if (call.ifName === '') throw invalid(`CNI_IFNAME is required for ${cmd}`);
    if (!validIfName(call.ifName)) {
      throw invalid(
        `CNI_IFNAME=${quote(call.ifName)} is not an interface name (1-15 characters, no '/', ':' or space)`,
      );
    }
    // DEL may come without a netns (containerd's second DEL, from RemovePodSandbox)
    if (cmd !== 'DEL' && call.netns === '') throw invalid(`CNI_NETNS is required for ${cmd}`);
    // a DEL must not fail over a pod name it only needs for a reservation: without one, the address is freed
    call.pod = cmd === 'DEL' ? podOrUndefined(call.args) : podOf(call.args);
  }
  return call;
}
