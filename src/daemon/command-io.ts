// What a command of `kruise-daemon` (and the agent itself) is handed: its standard streams and environment. Its own
// module, so that the command table (which loads commands) and the commands (which use this) do not import each other.

export interface CommandIo {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
}
