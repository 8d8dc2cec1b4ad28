// Checks of one NodeImage tag entry (and its image's shared fields) that the agent makes before pulling, for
// specs the schema or the webhook let through. A problem becomes that tag's Failed message; other tags carry on.

/** Why this tag cannot be pulled as written, or undefined. */
export function tagSpecProblem(
  imageName: string,
  image: Record<string, unknown>,
  tag: Record<string, unknown>,
): string | undefined {
  const where = `${imageName}:${String(tag.tag)}`;
  const version = tag.version;
  if (version !== undefined && (typeof version !== 'number' || !Number.isInteger(version) || version < 0)) {
    return `invalid spec for ${where}: version must be a whole number >= 0, got ${JSON.stringify(version)}`;
  }
  const policy = tag.imagePullPolicy;
  if (policy !== undefined && policy !== '' && policy !== 'Always' && policy !== 'IfNotPresent') {
    return `invalid spec for ${where}: imagePullPolicy must be Always or IfNotPresent, got ${JSON.stringify(policy)}`;
  }
  const pullPolicy = tag.pullPolicy;
  if (pullPolicy !== undefined && pullPolicy !== null) {
    if (typeof pullPolicy !== 'object' || Array.isArray(pullPolicy)) {
      return `invalid spec for ${where}: pullPolicy must be an object`;
    }
    for (const field of ['timeoutSeconds', 'backoffLimit', 'activeDeadlineSeconds', 'ttlSecondsAfterFinished']) {
      const value = (pullPolicy as Record<string, unknown>)[field];
      if (value !== undefined && value !== null && (typeof value !== 'number' || !Number.isInteger(value))) {
        return `invalid spec for ${where}: pullPolicy.${field} must be a whole number, got ${JSON.stringify(value)}`;
      }
    }
  }
  const owners = tag.ownerReferences;
  if (owners !== undefined && owners !== null && !Array.isArray(owners)) {
    return `invalid spec for ${where}: ownerReferences must be a list`;
  }
  const secrets = image.pullSecrets;
  if (secrets !== undefined && secrets !== null) {
    if (
      !Array.isArray(secrets) ||
      !secrets.every((s) => typeof s === 'object' && s !== null && typeof (s as { name?: unknown }).name === 'string')
    ) {
      return `invalid spec for image ${imageName}: pullSecrets must be a list of {namespace, name}`;
    }
  }
  const sandbox = image.sandboxConfig;
  if (sandbox !== undefined && sandbox !== null) {
    if (typeof sandbox !== 'object' || Array.isArray(sandbox)) {
      return `invalid spec for image ${imageName}: sandboxConfig must be an object`;
    }
    for (const field of ['labels', 'annotations']) {
      const map = (sandbox as Record<string, unknown>)[field];
      if (map === undefined || map === null) continue;
      if (typeof map !== 'object' || Array.isArray(map) || !Object.values(map).every((v) => typeof v === 'string')) {
        return `invalid spec for image ${imageName}: sandboxConfig.${field} must map strings to strings`;
      }
    }
  }
  return undefined;
}
