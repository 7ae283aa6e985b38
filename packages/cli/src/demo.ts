import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScriptedProvider } from '@infinity-code/runtime';
import { DEMO_FILES, demoBrain } from './demo-brain.js';
import type { ExitCode } from './exit-codes.js';
import type { HeadlessWriters } from './headless.js';

export const DEMO_TASK = 'Make greet() say "Hello, <name>!" and add a farewell(name) function; run the tests.';

/** A throwaway git repository with the demo's sample project. */
export function createDemoRepo(): string {
  const dir = mkdtempSync(join(tmpdir(), 'infinity-code-demo-'));
  for (const [name, content] of Object.entries(DEMO_FILES)) writeFileSync(join(dir, name), content);
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.email=demo@infinity-code', '-c', 'user.name=demo', ...args], { cwd: dir, stdio: 'ignore' });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'demo project');
  return dir;
}

/**
 * The whole flow with a scripted model and no API key: in a terminal, the TUI (you review the
 * children's diffs); otherwise headless with every diff accepted and applied to the demo repo.
 */
export async function runDemo(o: { writers: HeadlessWriters; signal: AbortSignal; interactive: boolean }): Promise<ExitCode> {
  const dir = createDemoRepo();
  o.writers.err(`Demo repository: ${dir}\n`);
  const provider = new ScriptedProvider(demoBrain);
  // The demo's only command is its own test script (`node test.js` on the files it wrote), not a
  // model's choice: it runs even where the sandbox cannot confine commands.
  if (o.interactive) {
    const { runInteractive } = await import('./run-tui.js');
    return runInteractive({ cwd: dir, env: process.env, flags: { unsandboxed: true }, provider, firstMessage: DEMO_TASK });
  }
  const { runHeadless } = await import('./run-headless.js');
  const code = await runHeadless({
    task: DEMO_TASK,
    yes: true,
    outputFormat: 'text',
    continueLatest: false,
    cwd: dir,
    env: process.env,
    writers: o.writers,
    signal: o.signal,
    unsandboxed: true,
    provider,
  });
  o.writers.err(`\ngreet.js in the demo repository now reads:\n${readFileSync(join(dir, 'greet.js'), 'utf8')}`);
  return code;
}
