import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AnthropicProvider,
  LocalSystem,
  ScriptedProvider,
  SqliteStore,
  type ModelProvider,
  type Tool,
} from '@infinity-code/runtime';
import { demoBrain, nodeVersionTool } from './demo.js';
import { EXIT, UserError, type ExitCode } from './exit-codes.js';
import { headlessPrinter, type HeadlessWriters } from './headless.js';
import { projectRoot, sessionStorePath } from './project.js';

export interface HeadlessOptions {
  task: string;
  model: string;
  demo: boolean;
  cwd: string;
  env: NodeJS.ProcessEnv;
  writers: HeadlessWriters;
  /** Aborted on Ctrl+C. */
  signal: AbortSignal;
}

/** Runs one task to quiescence without a TUI and returns the exit code. */
export async function runHeadless(o: HeadlessOptions): Promise<ExitCode> {
  let provider: ModelProvider;
  let tools: Tool[] = [];
  let dbPath: string;
  let cleanup = () => {};
  if (o.demo) {
    provider = new ScriptedProvider(demoBrain);
    tools = [nodeVersionTool];
    const dir = mkdtempSync(join(tmpdir(), 'infinity-code-demo-'));
    dbPath = join(dir, 'state.db');
    cleanup = () => rmSync(dir, { recursive: true, force: true });
  } else {
    const apiKey = o.env.ANTHROPIC_API_KEY;
    if (!apiKey) {
      throw new UserError(
        'ANTHROPIC_API_KEY is not set. Export your Anthropic API key (export ANTHROPIC_API_KEY=...) ' +
          'and run again, or try `infinity-code --demo`, which needs no key.',
        EXIT.config,
      );
    }
    const baseURL = o.env.ANTHROPIC_BASE_URL;
    provider = new AnthropicProvider({ apiKey, ...(baseURL ? { baseURL } : {}) });
    dbPath = sessionStorePath(projectRoot(o.cwd));
  }

  const system = new LocalSystem({
    store: new SqliteStore({ path: dbPath }),
    provider,
    tools,
    model: o.model,
  });
  const printer = headlessPrinter(o.writers);
  system.subscribe(printer.observe);
  const threadId = randomUUID();
  const onAbort = () => system.interrupt(threadId);
  o.signal.addEventListener('abort', onAbort);
  try {
    await system.start();
    await system.sendUserText(threadId, o.task);
    await system.whenIdle();
  } finally {
    o.signal.removeEventListener('abort', onAbort);
    await system.close();
    cleanup();
  }
  if (o.signal.aborted) return EXIT.interrupted;
  const errors = printer.state.errors;
  if (errors.some((e) => e.kind === 'auth')) return EXIT.config;
  return errors.length > 0 ? EXIT.failed : EXIT.ok;
}
