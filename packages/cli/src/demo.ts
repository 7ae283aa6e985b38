import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScriptedProvider } from '@infinity-code/runtime';
import { DEMO_FILES, demoBrain } from './demo-brain.js';
import type { ExitCode } from './exit-codes.js';
import type { HeadlessWriters } from './headless.js';
import { requireGit } from './project.js';

export const DEMO_TASK = 'Make greet() say "Hello, <name>!" and add a farewell(name) function; run the tests.';

/**
 * The model id the demo runs under: the scripted brain is no priced model, so no price shows
 * (an id the model table knows would be priced as that model).
 */
export const DEMO_MODEL = 'scripted-demo';

const PREFIX = 'infinity-code-demo-';
/** In the repository's .git (never in its tree or a diff): the pid of the demo that owns it. */
const OWNER_FILE = 'infinity-code-demo-owner';

/** A throwaway git repository with the demo's sample project, owned by this process. */
export function createDemoRepo(): string {
  requireGit(tmpdir());
  const dir = mkdtempSync(join(tmpdir(), PREFIX));
  for (const [name, content] of Object.entries(DEMO_FILES)) writeFileSync(join(dir, name), content);
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.email=demo@infinity-code', '-c', 'user.name=demo', ...args], { cwd: dir, stdio: 'ignore' });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'demo project');
  writeFileSync(join(dir, '.git', OWNER_FILE), `${process.pid}\n`);
  return dir;
}

/**
 * Removes the repositories of earlier demos whose process is gone (killed before it could clean
 * up); a demo still running elsewhere keeps its own.
 */
export function removeAbandonedDemoRepos(base = tmpdir()): void {
  let names: string[];
  try {
    names = readdirSync(base).filter((n) => n.startsWith(PREFIX));
  } catch {
    return;
  }
  for (const name of names) {
    const dir = join(base, name);
    let pid: number;
    try {
      pid = Number.parseInt(readFileSync(join(dir, '.git', OWNER_FILE), 'utf8'), 10);
    } catch {
      continue; // Not one of ours (or made by an older version): left alone.
    }
    if (Number.isInteger(pid) && pid > 0 && !isAlive(pid)) rmSync(dir, { recursive: true, force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it runs, as another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The whole flow with a scripted model and no API key: in a terminal, the TUI (you review the
 * children's diffs); otherwise headless with every diff accepted and applied to the demo repo.
 * The demo repository and the session's sandboxes are removed when it ends.
 */
export async function runDemo(o: { writers: HeadlessWriters; signal: AbortSignal; interactive: boolean }): Promise<ExitCode> {
  removeAbandonedDemoRepos();
  const dir = createDemoRepo();
  try {
    o.writers.err(`Demo repository: ${dir} (a throwaway, removed when the demo ends)\n`);
    const provider = new ScriptedProvider(demoBrain);
    // The demo's only command is its own test script (`node test.js` on the files it wrote), not a
    // model's choice: it runs even where the sandbox cannot confine commands.
    if (o.interactive) {
      const { runInteractive } = await import('./run-tui.js');
      return await runInteractive({
        cwd: dir,
        env: process.env,
        flags: { unsandboxed: true, model: DEMO_MODEL },
        provider,
        firstMessage: DEMO_TASK,
        throwaway: true,
      });
    }
    const { runHeadless } = await import('./run-headless.js');
    const code = await runHeadless({
      task: DEMO_TASK,
      model: DEMO_MODEL,
      yes: true,
      outputFormat: 'text',
      // A demonstration: what the agent does is the point.
      verbose: true,
      continueLatest: false,
      cwd: dir,
      env: process.env,
      writers: o.writers,
      signal: o.signal,
      unsandboxed: true,
      provider,
      throwaway: true,
    });
    o.writers.err(`\ngreet.js in the demo repository now reads:\n${readFileSync(join(dir, 'greet.js'), 'utf8')}`);
    return code;
  } finally {
    rmSync(dir, { recursive: true, force: true });
    o.writers.err(`Removed the demo repository ${dir}.\n`);
  }
}
