// The one error for a configuration a binary cannot start with (a flag, a variable, a file): `message` is one line
// for a human, naming what is wrong; the entry point prints it and exits 2.
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}
