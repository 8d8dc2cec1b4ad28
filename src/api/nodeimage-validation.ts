// NodeImage validation: OpenKruise's webhook rules (with its messages), reported as field errors,
// plus two checks of our own that a pull would otherwise fail on later: each image name + tag must
// form a valid image reference, and imagePullPolicy must be Always or IfNotPresent. Unlike OpenKruise,
// a tag without pullPolicy.ttlSecondsAfterFinished is admitted (it stays until removed, as OpenKruise's
// controller keeps such a tag too). Status is not validated (as OpenKruise). Takes raw input; never throws.

import { IMAGE_PULL_POLICIES, MAX_IMAGES_PER_NODE_IMAGE } from './constants.js';
import { childPath, indexPath, keyPath, type FieldError } from './field-errors.js';
import {
  fieldError,
  jsonTypeName,
  notSupportedError,
  optionalInteger,
  typeError,
  type JsonObject,
} from './field-checks.js';
import { tryParseNameAndTag } from './image-reference.js';
import { isRecord } from '../util/is-record.js';

export function validateNodeImage(nodeImage: unknown): FieldError[] {
  if (!isRecord(nodeImage)) {
    return [
      fieldError('FieldValueTypeInvalid', '<nil>', `NodeImage must be an object, got ${jsonTypeName(nodeImage)}`),
    ];
  }
  const errors: FieldError[] = [];
  const add = (error: FieldError | undefined): void => {
    if (error) errors.push(error);
  };
  const spec = nodeImage['spec'];
  add(typeError('spec', spec, 'object'));
  if (!isRecord(spec)) return errors;
  const images = spec['images'];
  add(typeError('spec.images', images, 'object'));
  if (!isRecord(images)) return errors;

  const names = Object.keys(images);
  if (names.length > MAX_IMAGES_PER_NODE_IMAGE) {
    errors.push(
      fieldError(
        'FieldValueTooMany',
        'spec.images',
        `spec images length ${names.length} can not be more than ${MAX_IMAGES_PER_NODE_IMAGE}`,
      ),
    );
  }
  for (const name of names) {
    const path = keyPath('spec.images', name);
    if (name === '') {
      errors.push(fieldError('FieldValueRequired', path, 'image name can not be empty'));
      continue;
    }
    const image = images[name];
    add(typeError(path, image, 'object'));
    if (isRecord(image)) errors.push(...validateImageSpec(name, image, path));
  }
  return errors;
}

function validateImageSpec(name: string, image: JsonObject, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const add = (error: FieldError | undefined): void => {
    if (error) errors.push(error);
  };
  errors.push(...validatePullSecrets(image['pullSecrets'], childPath(path, 'pullSecrets')));
  errors.push(...validateSandboxConfig(image['sandboxConfig'], childPath(path, 'sandboxConfig')));

  const tagsPath = childPath(path, 'tags');
  const tags = image['tags'];
  if (tags === undefined || tags === null) {
    errors.push(fieldError('FieldValueRequired', tagsPath, `tags for image ${name} must be set`));
    return errors;
  }
  add(typeError(tagsPath, tags, 'array'));
  if (!Array.isArray(tags)) return errors;

  const seen = new Set<string>();
  tags.forEach((tagSpec: unknown, index) => {
    const tagPath = indexPath(tagsPath, index);
    add(typeError(tagPath, tagSpec, 'object'));
    if (!isRecord(tagSpec)) return;
    const tag = tagSpec['tag'];
    add(typeError(childPath(tagPath, 'tag'), tag, 'string'));
    if (typeof tag !== 'string' || tag === '') {
      errors.push(
        fieldError('FieldValueRequired', childPath(tagPath, 'tag'), `tag for image ${name} can not be empty`),
      );
      return;
    }
    if (seen.has(tag)) {
      errors.push(
        fieldError('FieldValueDuplicate', childPath(tagPath, 'tag'), `duplicated tag ${tag} for image ${name}`),
      );
      return;
    }
    seen.add(tag);
    errors.push(...validateTagSpec(name, tag, tagSpec, tagPath));
  });
  return errors;
}

function validateTagSpec(name: string, tag: string, tagSpec: JsonObject, tagPath: string): FieldError[] {
  const errors: FieldError[] = [];
  const add = (error: FieldError | undefined): void => {
    if (error) errors.push(error);
  };
  const fullName = `${name}/${tag}`;

  const parsed = tryParseNameAndTag(name, tag);
  if (!parsed.ok) errors.push(fieldError('FieldValueInvalid', childPath(tagPath, 'tag'), parsed.error));

  const createdAt = tagSpec['createdAt'];
  add(typeError(childPath(tagPath, 'createdAt'), createdAt, 'string'));
  if (createdAt === undefined || createdAt === null) {
    errors.push(
      fieldError(
        'FieldValueRequired',
        childPath(tagPath, 'createdAt'),
        `createAt field for ${fullName} can not be empty`,
      ),
    );
  }

  const version = tagSpec['version'];
  add(typeError(childPath(tagPath, 'version'), version, 'integer'));
  if ((optionalInteger(version) ?? 0) < 0) {
    errors.push(
      fieldError(
        'FieldValueInvalid',
        childPath(tagPath, 'version'),
        `version for ${fullName} can not be less than 0`,
        version,
      ),
    );
  }

  const policy = tagSpec['pullPolicy'];
  const policyPath = childPath(tagPath, 'pullPolicy');
  add(typeError(policyPath, policy, 'object'));
  if (policy === undefined || policy === null) {
    errors.push(fieldError('FieldValueRequired', policyPath, `pullPolicy field for ${fullName} must set`));
  } else if (isRecord(policy)) {
    for (const key of ['timeoutSeconds', 'backoffLimit', 'ttlSecondsAfterFinished', 'activeDeadlineSeconds']) {
      add(typeError(childPath(policyPath, key), policy[key], 'integer'));
    }
  }

  const pullPolicy = tagSpec['imagePullPolicy'];
  add(typeError(childPath(tagPath, 'imagePullPolicy'), pullPolicy, 'string'));
  add(notSupportedError(childPath(tagPath, 'imagePullPolicy'), pullPolicy, IMAGE_PULL_POLICIES));
  add(typeError(childPath(tagPath, 'ownerReferences'), tagSpec['ownerReferences'], 'array'));
  return errors;
}

function validatePullSecrets(value: unknown, path: string): FieldError[] {
  const error = typeError(path, value, 'array');
  if (error) return [error];
  if (!Array.isArray(value)) return [];
  const errors: FieldError[] = [];
  value.forEach((ref: unknown, index) => {
    const refPath = indexPath(path, index);
    const refError = typeError(refPath, ref, 'object');
    if (refError) errors.push(refError);
    if (!isRecord(ref)) return;
    for (const key of ['namespace', 'name', 'mode']) {
      const keyError = typeError(childPath(refPath, key), ref[key], 'string');
      if (keyError) errors.push(keyError);
    }
  });
  return errors;
}

/** Labels and annotations must be maps of strings (shared with the job kinds). */
export function validateSandboxConfig(value: unknown, path: string): FieldError[] {
  const error = typeError(path, value, 'object');
  if (error) return [error];
  if (!isRecord(value)) return [];
  const errors: FieldError[] = [];
  for (const key of ['labels', 'annotations']) {
    const mapPath = childPath(path, key);
    const map = value[key];
    const mapError = typeError(mapPath, map, 'object');
    if (mapError) errors.push(mapError);
    if (!isRecord(map)) continue;
    for (const [entry, entryValue] of Object.entries(map)) {
      const entryError = typeError(keyPath(mapPath, entry), entryValue, 'string');
      if (entryError) errors.push(entryError);
    }
  }
  return errors;
}
