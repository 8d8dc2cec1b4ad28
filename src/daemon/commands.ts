// The kruise-daemon binary is the agent and a few tools: `kruise-daemon [flags]` runs the agent,
// `kruise-daemon <command> ...` runs a tool. Tools are a table; each is loaded only when chosen, so the agent
// never loads command-line code and a tool never loads the agent.
import { errorMessage } from '../util/error-message.js';
import type { CommandIo } from './command-io.js';

/** A command's entry point: argv after the command's name; resolves with the exit code. */
export type CommandMain = (argv: string[], io: CommandIo) => Promise<number>;

export interface Command {
  name: string;
  /** One line for --help. */
  summary: string;
  load(): Promise<CommandMain>;
}

/** The agent's entry point; also given the Commands section of its --help. */
export type AgentMain = (argv: string[], io: CommandIo, commandsHelp: string) => Promise<number>;

export const COMMANDS: readonly Command[] = [
  {
    name: 'cri',
    summary: "query the node's container runtime: info, images, pull, ps (kruise-daemon cri --help)",
    load: async () => (await import('./cri-command.js')).runCriCommand,
  },
  {
    name: 'ipam',
    summary: "kruise-ipam's allocations and reservations on this node: ipam ls [--json] (kruise-daemon ipam --help)",
    load: async () => (await import('./ipreservation/ls-command.js')).runIpamCommand,
  },
  {
    name: 'pins',
    summary: 'the images the agent pinned in the runtime: pins ls|release (kruise-daemon pins --help)',
    load: async () => (await import('./imagepuller/pins-command.js')).runPinsCommand,
  },
];

export const loadAgent = async (): Promise<AgentMain> => (await import('./main.js')).runDaemon;

export type Route =
  | { kind: 'agent'; args: string[] }
  | { kind: 'command'; command: Command; args: string[] }
  | { kind: 'unknown'; name: string };

/** Pick what to run: a first argument that is not a flag names a command. */
export function route(argv: readonly string[], commands: readonly Command[]): Route {
  const first = argv[0];
  if (first === undefined || first.startsWith('-')) return { kind: 'agent', args: [...argv] };
  if (first === 'help') return { kind: 'agent', args: ['--help'] };
  const command = commands.find((c) => c.name === first);
  if (!command) return { kind: 'unknown', name: first };
  return { kind: 'command', command, args: argv.slice(1) };
}

export function commandsHelp(commands: readonly Command[]): string {
  const width = Math.max(0, ...commands.map((c) => c.name.length));
  return ['Commands:', ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`)].join('\n');
}

/** Run what argv asks for; resolves with the process's exit code. */
export async function dispatch(
  argv: readonly string[],
  io: CommandIo,
  commands: readonly Command[] = COMMANDS,
  agent: () => Promise<AgentMain> = loadAgent,
): Promise<number> {
  const chosen = route(argv, commands);
  switch (chosen.kind) {
    case 'unknown':
      io.stderr.write(
        `kruise-daemon: unknown command ${JSON.stringify(chosen.name)}; commands: ${commands.map((c) => c.name).join(', ')} (see kruise-daemon --help)\n`,
      );
      return 2;
    case 'agent':
      return (await agent())(chosen.args, io, commandsHelp(commands));
    case 'command': {
      let main: CommandMain;
      try {
        main = await chosen.command.load();
      } catch (err) {
        io.stderr.write(`kruise-daemon: cannot load command ${chosen.command.name}: ${errorMessage(err)}\n`);
        return 1;
      }
      return main(chosen.args, io);
    }
  }
}
