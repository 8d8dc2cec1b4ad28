// Which of an image's pull secrets one tag may use. A NodeImage's `pullSecrets` are per image, a union over every
// job that wants any tag of it; a tag's ownerReferences name the ImagePullJobs that want that tag, and each copy in
// kruise-daemon-config lists in its annotation imagepulljobs.kruise.io/references the jobs (`ns/name`) it was made
// for (ours and OpenKruise's manager write the same annotation). A tag uses a copy only when one of its owners is
// among the copy's references, so a tenant's job never pulls with another tenant's credentials. Pure; shared by the
// agent (reading copies itself) and the controller (answering an agent for its node).
import { KRUISE_DAEMON_CONFIG_NAMESPACE, SECRET_REFERENCES_ANNOTATION } from './constants.js';
import type { ObjectReference } from './meta.js';

/**
 * The owners of a tag as `ns/name` keys, or undefined when the tag has no ownerReferences at all: a tag written
 * into the NodeImage by hand (only whoever may write NodeImages, a cluster admin) uses every secret of its image,
 * as written. An owner without a namespace or name matches nothing.
 */
export function tagOwnerKeys(owners: readonly ObjectReference[] | undefined): string[] | undefined {
  if (!owners || owners.length === 0) return undefined;
  return owners.flatMap((o) => (o.namespace && o.name ? [`${o.namespace}/${o.name}`] : []));
}

/** The references annotation of a secret, or undefined when it has none (a secret not made as a copy). */
export function secretReferences(annotations: Readonly<Record<string, string>> | undefined): string[] | undefined {
  const value = annotations?.[SECRET_REFERENCES_ANNOTATION];
  if (value === undefined) return undefined;
  return value.split(',').filter((s) => s !== '');
}

/**
 * May a tag owned by `owners` (tagOwnerKeys) use a secret of kruise-daemon-config with these `references`?
 * Unowned tag: yes. A copy (references present): when an owner is listed. A secret without references (put there by
 * hand): only jobs of kruise-daemon-config itself name such a secret directly, so only owners in that namespace.
 */
export function tagMayUseSecret(
  owners: readonly string[] | undefined,
  references: readonly string[] | undefined,
): boolean {
  if (owners === undefined) return true;
  if (references === undefined) return owners.some((o) => o.startsWith(`${KRUISE_DAEMON_CONFIG_NAMESPACE}/`));
  return owners.some((o) => references.includes(o));
}

/** The namespaces of a tag's owners (one tenant or several: messages name a secret only to a single tenant). */
export function ownerNamespaces(owners: readonly string[] | undefined): Set<string> {
  return new Set((owners ?? []).map((o) => o.slice(0, o.indexOf('/'))));
}
