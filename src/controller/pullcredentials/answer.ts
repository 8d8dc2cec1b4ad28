// The answer to an agent that asks for the pull secrets of one tag: only when the tag is in its own node's NodeImage
// spec, and only the secrets of that image the tag's owners may use (src/api/pull-secret-use.ts). Pure: it reads the
// controller's caches through a lookup, so an answer costs no API request.
import { KRUISE_DAEMON_CONFIG_NAMESPACE } from '../../api/constants.js';
import type { NodeImage } from '../../api/nodeimage.js';
import type { PullCredentialsAnswer, PullCredentialsError } from '../../api/pull-credentials.js';
import { secretReferences, tagMayUseSecret, tagOwnerKeys } from '../../api/pull-secret-use.js';
import { isRecord } from '../../util/is-record.js';
import type { SecretObject } from '../resources.js';

export interface CredentialsLookup {
  nodeImage(node: string): NodeImage | undefined;
  /** A secret of kruise-daemon-config by name. */
  secret(name: string): SecretObject | undefined;
}

export type CredentialsReply =
  { status: 200; body: PullCredentialsAnswer } | { status: 400 | 403; body: PullCredentialsError };

export function answerFor(node: string, image: string, tag: string, lookup: CredentialsLookup): CredentialsReply {
  if (image === '' || tag === '') return { status: 400, body: { message: 'the query needs image and tag' } };
  const nodeImage = lookup.nodeImage(node);
  if (!nodeImage) return refuse(`node ${node} has no NodeImage`);
  const images = isRecord(nodeImage.spec?.images) ? nodeImage.spec.images : {};
  const spec = Object.hasOwn(images, image) ? images[image] : undefined;
  if (!isRecord(spec)) return refuse(`image ${image} is not in the spec of NodeImage ${node}`);
  const tags = Array.isArray(spec.tags) ? spec.tags : [];
  const tagSpec = tags.find((t) => isRecord(t) && t.tag === tag);
  if (!tagSpec) return refuse(`tag ${image}:${tag} is not in the spec of NodeImage ${node}`);
  const owners = tagOwnerKeys(Array.isArray(tagSpec.ownerReferences) ? tagSpec.ownerReferences : undefined);
  const body: PullCredentialsAnswer = { secrets: [], missing: 0 };
  for (const ref of Array.isArray(spec.pullSecrets) ? spec.pullSecrets : []) {
    if (!isRecord(ref) || typeof ref.name !== 'string' || ref.name === '') continue;
    const namespace =
      typeof ref.namespace === 'string' && ref.namespace !== '' ? ref.namespace : KRUISE_DAEMON_CONFIG_NAMESPACE;
    if (namespace !== KRUISE_DAEMON_CONFIG_NAMESPACE) {
      if (owners === undefined) {
        return refuse(
          `pull secret ${namespace}/${ref.name} of ${image} is not in namespace ${KRUISE_DAEMON_CONFIG_NAMESPACE}; ` +
            'only secrets there are served',
        );
      }
      continue;
    }
    const secret = lookup.secret(ref.name);
    if (!secret) {
      if (owners === undefined) (body.missingNames ??= []).push(ref.name);
      else body.missing++;
      continue;
    }
    if (!tagMayUseSecret(owners, secretReferences(secret.metadata?.annotations))) continue;
    body.secrets.push({ name: ref.name, ...(secret.type && { type: secret.type }), data: { ...(secret.data ?? {}) } });
  }
  return { status: 200, body };
}

function refuse(message: string): CredentialsReply {
  return { status: 403, body: { message } };
}
