// The pull-credentials endpoint of kruise-controller, as the agent and the controller both see it: an agent asks,
// with its own pod-bound ServiceAccount token, for the pull secrets of one tag of its node's NodeImage, and gets only
// those the tag's owners may use (src/api/pull-secret-use.ts). HTTPS with the controller's serving certificate, whose
// CA the controller publishes in a ConfigMap of kruise-daemon-config that agents may read by name.

/**
 * `GET <base>/pull-credentials/v1?image=<NodeImage image key>&tag=<tag>[&generation=<n>]`, `Authorization: Bearer
 * <token>`.
 */
export const PULL_CREDENTIALS_PATH = '/pull-credentials/v1';
/** The NodeImage's metadata.generation the agent read the tag from: answers come from a cache at least that new. */
export const PULL_CREDENTIALS_GENERATION_PARAM = 'generation';
/** Port the controller serves it on by default (its own listener, not the admission webhooks'). */
export const DEFAULT_PULL_CREDENTIALS_PORT = 9443;
/** ConfigMap of kruise-daemon-config holding the CA of the controller's serving certificate. */
export const CONTROLLER_CA_CONFIGMAP = 'kruise-controller-ca';
export const CONTROLLER_CA_KEY = 'ca.crt';

/** One secret the tag may use: what the agent needs to build registry credentials, nothing more. */
export interface PullCredentialsSecret {
  name: string;
  type?: string | undefined;
  data: Record<string, string>;
}

/** 200 answer. */
export interface PullCredentialsAnswer {
  secrets: PullCredentialsSecret[];
  /** Secrets the image names that do not exist (not named: they may be another tenant's). */
  missing: number;
  /** Named missing secrets (only for a tag without owners: a NodeImage written by hand). */
  missingNames?: string[];
}

/** Any other answer: `{"message": "..."}`. */
export interface PullCredentialsError {
  message: string;
}
