// Run `fn` with some of this process's environment variables set, and put them back as they were after (set or
// unset), also when it throws. The cluster components read their knobs (CLUSTER_POD_IPAM, CLUSTER_IMAGE_FS_MIB) from
// process.env at `up`.
export async function withEnv<T>(overrides: Readonly<Record<string, string>>, fn: () => Promise<T>): Promise<T> {
  const previous = Object.fromEntries(Object.keys(overrides).map((key) => [key, process.env[key]]));
  Object.assign(process.env, overrides);
  try {
    return await fn();
  } finally {
    for (const [key, value] of Object.entries(previous)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }
}
