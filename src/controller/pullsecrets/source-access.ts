// Why a job's pull secret could not be copied, in words an admin can act on. The controller holds no cluster-wide
// secret rights: it reads a source secret only where an admin bound the ClusterRole
// kruise-controller-pull-secret-reader (secrets: get, list, watch) to its service account, or granted those verbs on
// the named secrets (resourceNames). A 403 names the namespace and the exact command that grants it; a 404 names the
// secrets that do not exist.

/** The shipped ClusterRole (deploy/controller/pull-secret-reader.yaml), bound per namespace by an admin. */
export const PULL_SECRET_READER_CLUSTER_ROLE = 'kruise-controller-pull-secret-reader';

/** The controller's service account (deploy/controller/service-account.yaml). */
export const CONTROLLER_SERVICE_ACCOUNT = 'kruise-controller';

/** Event reasons on the ImagePullJob. */
export const PULL_SECRET_NOT_FOUND_REASON = 'PullSecretNotFound';
export const PULL_SECRET_FORBIDDEN_REASON = 'PullSecretForbidden';

export interface SecretProblems {
  /** The job's namespace (where its pull secrets live). */
  namespace: string;
  /** Names answered 404. */
  missing: readonly string[];
  /** Names answered 403: the controller may not read secrets in `namespace`. */
  forbidden: readonly string[];
}

/** `kubectl create rolebinding ...` granting the controller get, list, watch on secrets in `namespace`. */
export function grantCommand(namespace: string, controllerNamespace: string): string {
  return (
    `kubectl create rolebinding ${PULL_SECRET_READER_CLUSTER_ROLE} --clusterrole=${PULL_SECRET_READER_CLUSTER_ROLE} ` +
    `--serviceaccount=${controllerNamespace}:${CONTROLLER_SERVICE_ACCOUNT} -n ${namespace}`
  );
}

export function notFoundMessage(p: SecretProblems): string {
  return `pull secrets not found in namespace ${p.namespace}: ${p.missing.join(', ')}`;
}

export function forbiddenMessage(p: SecretProblems, controllerNamespace: string): string {
  return (
    `kruise-controller may not read pull secrets ${p.forbidden.join(', ')} in namespace ${p.namespace} ` +
    `(403 Forbidden); the job pulls without them. An admin grants it with: ` +
    grantCommand(p.namespace, controllerNamespace)
  );
}

/** The job's status message with what went wrong with its pull secrets appended (unchanged when nothing did). */
export function withSecretProblems(
  message: string | undefined,
  p: SecretProblems,
  controllerNamespace: string,
): string {
  const notes: string[] = [];
  if (p.missing.length > 0) notes.push(notFoundMessage(p));
  if (p.forbidden.length > 0) notes.push(forbiddenMessage(p, controllerNamespace));
  return [message ?? '', ...notes].filter((s) => s !== '').join('; ');
}
