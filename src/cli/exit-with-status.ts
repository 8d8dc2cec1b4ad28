// What each long-lived binary does around its main function: the process's arguments and streams in, its exit
// status out.

/** The process's streams and environment, as the binaries' main functions take them. */
const processIo = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env };

/**
 * Run `main` on the process's arguments and streams and exit with the status it returns. Exiting explicitly keeps a
 * finished tool's or agent's leftover handles from holding the process alive (writes to files and pipes are
 * synchronous on Linux, so nothing is lost). Whatever `main` throws is printed as `<name>: <stack>`, status 1.
 */
export async function exitWithStatusOf(
  name: string,
  main: (argv: string[], io: typeof processIo) => Promise<number>,
): Promise<never> {
  try {
    process.exit(await main(process.argv.slice(2), processIo));
  } catch (err) {
    process.stderr.write(`${name}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  }
}
