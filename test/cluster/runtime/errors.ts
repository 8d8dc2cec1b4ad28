// Errors of the local cluster tooling. A PrerequisiteError means the machine lacks something the cluster needs
// (root, Debian packages): the CLI prints its message and exits with code 2.

export class PrerequisiteError extends Error {
  readonly exitCode = 2;

  constructor(message: string) {
    super(message);
    this.name = 'PrerequisiteError';
  }
}

/** A step of bringing the cluster up or down failed; the message says which and where the log is. */
export class ClusterError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ClusterError';
  }
}

export { errorMessage } from '../../../src/util/error-message.js';
