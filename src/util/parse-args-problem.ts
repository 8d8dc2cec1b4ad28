// node:util parseArgs errors as one short line for a command-line user: "unknown flag --x" instead of Node's
// "Unknown option '--x'. To specify a positional argument starting with a '-', place it at the end ...".
import { errorMessage } from './error-message.js';

/** One line naming what is wrong with the command line, from an error thrown by node:util parseArgs. */
export function parseArgsProblem(err: unknown): string {
  const message = errorMessage(err).split('\n')[0] ?? '';
  const code = err instanceof Error && 'code' in err ? err.code : undefined;
  const quoted = /'([^']*)'/.exec(message)?.[1] ?? '';
  // "-c, --container <value>" names the flag by its long name
  const flag =
    quoted
      .replace(/\s*<value>$/, '')
      .split(/,\s*/)
      .pop() ?? quoted;
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown flag ${quoted}`;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument ${JSON.stringify(quoted)}`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return /argument missing/.test(message) ? `${flag} needs a value` : `${flag} takes no value`;
    default:
      return message;
  }
}
