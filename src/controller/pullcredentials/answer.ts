// The answer to an agent that asks for the pull secrets of one tag: only when the tag is in its own node's NodeImage
// spec, and only the secrets of that image the tag's owners may use (src/api/pull-secret-use.ts). Pure: it reads the
// controller's caches through a lookup, so an answer costs no API request. When the agent says which generation of
// its NodeImage it read the tag from, a cache older than that is not answered from (503: the owners or secrets the
// agent saw may not be in it yet).
import { KRUISE_DAEMON_CONFIG_NAMESPACE, SECRET_SOURCE_KEY_ANNOTATION } from '../../api/constants.js';
import type { NodeImage } from '../../api/nodeimage.js';
import type { PullCredentialsAnswer, PullCredentialsError } from '../../api/pull-credentials.js';
import { ownerNamespaces, secretReferences, tagMayUseSecret, tagOwnerKeys } from '../../api/pull-secret-use.js';
import { isRecord } from '../../util/is-record.js';
import type { SecretObject } from '../resources.js';

export interface CredentialsLookup {
  nodeImage(node: string): NodeImage | undefined;
  /** A secret of kruise-daemon-config by name. */
  secret(name: string): SecretObject | undefined;
}

export type CredentialsReply =
  | {
      status: 200;
      body: PullCredentialsAnswer;
      /**
       * The answer left out a secret the caches may not have caught up with: one the spec names that the secret cache
       * has not seen, or a copy of an owner's namespace whose references do not name the owner yet. Never sent.
       */
      unsettled?: true;
    }
  | { status: 400 | 403 | 503; body: PullCredentialsError };

export interface CredentialsQuestion {
  image: string;
  tag: string;
  /** metadata.generation of the NodeImage the agent read the tag from, when it said. */
  generation?: number | undefined;
}

export function answerFor(node: string, question: CredentialsQuestion, lookup: CredentialsLookup): CredentialsReply {
  const { image, tag, generation } = question;
  if (image === '' || tag === '') return { status: 400, body: { message: 'the query needs image and tag' } };
  const nodeImage = lookup.nodeImage(node);
  if (!nodeImage) return refuse(`node ${node} has no NodeImage`);
  const cached = nodeImage.metadata.generation ?? 0;
  if (generation !== undefined && cached < generation) {
    return {
      status: 503,
      body: {
        message: `this replica has seen generation ${cached} of NodeImage ${node}, the agent read ${generation}; ask again`,
      },
    };
  }
  const images = isRecord(nodeImage.spec?.images) ? nodeImage.spec.images : {};
  const spec = Object.hasOwn(images, image) ? images[image] : undefined;
  if (!isRecord(spec)) return refuse(`image ${image} is not in the spec of NodeImage ${node}`);
  const tags = Array.isArray(spec.tags) ? spec.tags : [];
  const tagSpec = tags.find((t) => isRecord(t) && t.tag === tag);
  if (!tagSpec) return refuse(`tag ${image}:${tag} is not in the spec of NodeImage ${node}`);
  const owners = tagOwnerKeys(Array.isArray(tagSpec.ownerReferences) ? tagSpec.ownerReferences : undefined);
  const body: PullCredentialsAnswer = { secrets: [], missing: 0 };
  let unsettled: true | undefined;
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
      unsettled = true;
      continue;
    }
    if (!tagMayUseSecret(owners, secretReferences(secret.metadata?.annotations))) {
      const source = secret.metadata?.annotations?.[SECRET_SOURCE_KEY_ANNOTATION] ?? '';
      if (ownerNamespaces(owners).has(source.slice(0, source.indexOf('/')))) unsettled = true;
      continue;
    }
    body.secrets.push({ name: ref.name, ...(secret.type && { type: secret.type }), data: { ...(secret.data ?? {}) } });
  }
  return unsettled ? { status: 200, body, unsettled } : { status: 200, body };
}

/**
 * An answer that caches catching up with the agent's view could change: a refusal of a tag just written, a cache
 * behind the agent's generation, a secret left out that may be usable once the secret cache has its last write.
 */
export function cacheMayCatchUp(reply: CredentialsReply): boolean {
  return reply.status === 403 || reply.status === 503 || (reply.status === 200 && reply.unsettled === true);
}

function refuse(message: string): CredentialsReply {
  return { status: 403, body: { message } };
}
