// What every subcommand module exports and what it is given: the contract between the cli and its commands.

/** Where a command writes; injected so tests can capture it. */
export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream;
  env: NodeJS.ProcessEnv;
}

/** A subcommand: returns the process exit code (0 ok, 2 usage or configuration error). */
export type Command = (args: string[], io: CliIo) => Promise<number>;
