#!/usr/bin/env node
import { createRequire } from 'node:module';
import { Command, CommanderError } from 'commander';
import { EXIT, UserError } from './exit-codes.js';

const pkg = createRequire(import.meta.url)('../package.json') as { version: string };
export const DEFAULT_MODEL = 'claude-sonnet-4-5';

async function main(argv: string[]): Promise<number> {
  const program = new Command()
    .name('infinity-code')
    .description('A terminal coding agent on a time-sliced agent runtime.')
    .version(pkg.version, '-v, --version')
    .option('-p, --print <task>', 'run the task headless: progress on stderr, the answer on stdout')
    .option('--model <id>', 'model to use', DEFAULT_MODEL)
    .option('--demo', 'run a scripted demonstration (no API key needed)')
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });
  try {
    program.parse(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version exit through here with code 0.
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    throw err;
  }
  const opts = program.opts<{ print?: string; model: string; demo?: boolean }>();
  const task = opts.print ?? (opts.demo ? 'Show me the runtime at work.' : undefined);
  if (task === undefined) {
    throw new UserError(
      'The interactive terminal UI is not built yet. Run a task headless with ' +
        '`infinity-code -p "<task>"`, or see the runtime at work with `infinity-code --demo`.',
      EXIT.usage,
    );
  }
  if (task.trim() === '') throw new UserError('The task is empty: say what you want done.', EXIT.usage);
  const controller = new AbortController();
  process.once('SIGINT', () => controller.abort());
  // Loaded only now: --version and --help must not pay for the runtime, SQLite and the SDK.
  const { runHeadless } = await import('./run-headless.js');
  return runHeadless({
    task,
    model: opts.model,
    demo: opts.demo === true,
    cwd: process.cwd(),
    env: process.env,
    writers: { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s) },
    signal: controller.signal,
  });
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof UserError) {
      process.stderr.write(`infinity-code: ${err.message}\n`);
      process.exitCode = err.exitCode;
      return;
    }
    process.stderr.write(`infinity-code: unexpected failure: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = EXIT.failed;
  },
);
