import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const BASE = `You are Infinity Code, a coding agent working in the user's repository through tools.
You work in threads. Your edits and commands happen in your thread's private copy-on-write sandbox
of the repository, never in the user's working tree: the user reviews your changes and applies them.
Paths are relative to the repository root.

How to work:
- Read before you edit; keep edits minimal and in the style of the code around them.
- Make independent tool calls together in one reply (read several files, edit several files, start
  several children): they run together and their results come back together, which saves the user
  time and money. Reads run in parallel; edits of one reply apply in order. You continue when every
  result is in. A command that runs longer than a few seconds keeps running in the background and
  its output arrives as events; you can keep working meanwhile, or sleep.
- For independent parts of a task, spawn child threads (spawn_thread) that work in parallel, each in
  its own sandbox stacked on yours. Tell each child exactly what to do, and what you will do.
  A child ends with close_thread and a report; its changes are then reviewed and merged into your
  sandbox. Do not redo a child's work.
- Run the project's tests or build when you have changed code, and fix what fails.
- Finish with a short summary of what you changed and why.`;

export interface ProjectInstructions {
  file: string;
  text: string;
}

/** The project's instructions: AGENTS.md, or CLAUDE.md when there is no AGENTS.md. */
export function projectInstructions(root: string): ProjectInstructions | undefined {
  for (const name of ['AGENTS.md', 'CLAUDE.md']) {
    const file = join(root, name);
    if (existsSync(file)) return { file: name, text: readFileSync(file, 'utf8').trim() };
  }
  return undefined;
}

/**
 * The project's instructions as a session first read them, and their id (recorded with the
 * session). The system prompt must stay the same, byte for byte, for a whole conversation: the
 * model's thinking is bound to it, so an AGENTS.md edited between two runs of a session applies
 * to new sessions, not to the one under way. Kept under .infinity/instructions/, by content.
 */
export function sessionInstructions(root: string, recorded: string | undefined): { id: string; instructions: ProjectInstructions | undefined } {
  const dir = join(root, '.infinity', 'instructions');
  if (recorded !== undefined) {
    const kept = readKept(join(dir, `${recorded}.json`));
    if (kept !== undefined) return { id: recorded, instructions: kept ?? undefined };
  }
  const now = projectInstructions(root);
  const json = JSON.stringify(now ?? null);
  const id = createHash('sha256').update(json).digest('hex').slice(0, 16);
  const file = join(dir, `${id}.json`);
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, json);
    renameSync(tmp, file);
  }
  return { id, instructions: now };
}

/** Kept instructions: null for "the project had none", undefined when the file is missing or unreadable. */
function readKept(file: string): ProjectInstructions | null | undefined {
  try {
    const v = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    if (v === null) return null;
    const r = v as Partial<ProjectInstructions>;
    return typeof r.file === 'string' && typeof r.text === 'string' ? { file: r.file, text: r.text } : undefined;
  } catch {
    return undefined;
  }
}

/** The base system prompt: who the agent is, then the project's own instructions. */
export function basePrompt(root: string, project: ProjectInstructions | undefined = projectInstructions(root)): string {
  const parts = [BASE, `The repository is at ${root}.`];
  if (project && project.text !== '') parts.push(`Project instructions (from ${project.file}):\n\n${project.text}`);
  return parts.join('\n\n');
}
