import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
// The subpath, not the package: this runs before the TUI's first frame, and the tools need not load then.
import {
  hostReaderSync,
  LOCAL_INSTRUCTIONS,
  readInstructionsSync,
  type InstructionFile,
  type ReadRequest,
} from '@infinity-code/tools/instruction-files';

const GIT_LINE = `- Git in your sandbox: HEAD, branches and git log are the user's; git status and git diff show the
  user's uncommitted changes as well as yours. Don't commit, push or switch branches: your changes
  reach the user as a diff they review, and they commit. Read history freely (log, show, blame).`;

/** GIT_LINE's place in a folder without a repository: no git facts that are not there. */
const FOLDER_LINE = `- This project is a plain folder, not a git repository ("the repository" means this folder): there is
  no history, and your sandbox has no .git. Your changes reach the user as a diff they review.`;

const BASE = `You are Infinity Code, a coding agent working in the user's repository through tools.
You work in threads. Your edits and commands happen in your thread's private copy-on-write sandbox
of the repository, never in the user's working tree: the user reviews your changes and applies them.
Paths are relative to the repository root.

How to work:
- Read before you edit; keep edits minimal and in the style of the code around them.
- Make independent tool calls together in one reply (read several files, edit several files, start
  several children): they run together and their results come back together, which saves the user
  time and money. Reads run in parallel; edits of one reply apply in order. You continue when every
  result is in.
- execute_command waits for a command up to its timeout and returns its
  output. Start servers, watchers and long builds with run_in_background, and give notify_on to be
  woken by a line such as "listening on"; meanwhile keep working, or sleep.
- What ends or reports later reaches you as a receive_event__injected call, which you never make
  yourself: a background command's exit or notify_on match (with its output since), a child's
  report, a message from your parent. Its arguments name the original call (original_tool_call_id,
  original_tool_name, original_args); its result holds the news.
${GIT_LINE}
- For independent parts of a task, spawn child threads (spawn_thread) that work in parallel, each in
  its own sandbox stacked on yours. Tell each child exactly what to do, and what you will do.
  A child ends with close_thread and a report; its changes are then reviewed and merged into your
  sandbox. Do not redo a child's work.
- Run the project's tests or build when you have changed code, and fix what fails.
- Finish with a short summary of what you changed and why.`;

export interface ProjectInstructions {
  /** In prompt order, each with what it imports after it; none empty. */
  files: InstructionFile[];
}

/**
 * The project's instructions at its root: AGENTS.md, or CLAUDE.md when there is none (Codex reads
 * AGENTS.md, Claude Code CLAUDE.md), then CLAUDE.local.md (the user's own notes, not shared with
 * the repository), each with the files it imports (`@docs/style.md`) after it. Read from the
 * working tree; instruction files of subdirectories reach threads through the tools, with the
 * result of their first call there (see NestedInstructions), never this prompt.
 */
export function projectInstructions(root: string, gitArgs: readonly string[] = []): ProjectInstructions | undefined {
  const files = readFromWorkingTree(root, gitArgs);
  return files.length > 0 ? { files } : undefined;
}

/**
 * The root's instruction files, read from the working tree: files inside the repository only
 * (see resolveImport and hostReaderSync). A git-ignored file (`.env`, a local config) is imported
 * only by an instruction file that is ignored too: the user's own notes (CLAUDE.local.md, as
 * usual). AGENTS.md and CLAUDE.md, or a CLAUDE.local.md the repository commits, come with the
 * repository, which anyone may have written; ignored files never reach the agent's sandbox, and
 * an import must not bring them to the model either. Links are judged by where they lead.
 *
 * Asking git costs a process (~15 ms), so it is asked once, for every file imported: the walk
 * reads as if nothing were ignored and notes what it would need to know, git answers for all of
 * it, and the walk runs again with the answers (again, if refusing a file let it reach others).
 * Instructions that import nothing ask nothing.
 */
function readFromWorkingTree(root: string, gitArgs: readonly string[]): InstructionFile[] {
  const ignored = new Map<string, boolean>();
  for (let round = 0; ; round++) {
    const unknown = new Set<string>();
    const last = round === 3;
    const allow = (realRel: string, request: ReadRequest): boolean => {
      if (request.path === request.top) return true;
      if (ignored.get(request.top) === true || ignored.get(realRel) === false) return true;
      if (ignored.get(request.top) === false && ignored.get(realRel) === true) return false;
      for (const p of [realRel, request.top]) if (!ignored.has(p)) unknown.add(p);
      return !last;
    };
    const files = readInstructionsSync([''], hostReaderSync(root, allow), { root });
    if (unknown.size === 0 || last) return files;
    const answer = gitIgnored(root, [...unknown], gitArgs);
    for (const p of unknown) ignored.set(p, answer === undefined || answer.has(p));
  }
}

/**
 * Of `paths`, those git ignores (a tracked file is not ignored); undefined when git can't say.
 * `gitArgs` name a folder's private git dir (see projectGitArgs): its rules and the folder's.
 */
function gitIgnored(root: string, paths: readonly string[], gitArgs: readonly string[]): Set<string> | undefined {
  try {
    const out = execFileSync('git', [...gitArgs, '-c', 'core.fsmonitor=false', 'check-ignore', '-z', '--stdin'], {
      cwd: root,
      input: paths.map((p) => `${p}\0`).join(''),
      encoding: 'utf8',
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    return new Set(out.split('\0').filter((p) => p !== ''));
  } catch (err) {
    // Exit status 1: none of them is ignored.
    return (err as { status?: unknown }).status === 1 ? new Set() : undefined;
  }
}

/**
 * The project's instructions as a session first read them, and their id (recorded with the
 * session). The system prompt must stay the same, byte for byte, for a whole conversation: the
 * model's thinking is bound to it, so an AGENTS.md (or a file it imports) edited between two runs
 * of a session applies to new sessions, not to the one under way. Kept under
 * .infinity/instructions/, by content, imports expanded.
 */
export function sessionInstructions(
  root: string,
  recorded: string | undefined,
  gitArgs: readonly string[] = [],
): { id: string; instructions: ProjectInstructions | undefined } {
  const dir = join(root, '.infinity', 'instructions');
  if (recorded !== undefined) {
    const kept = readKept(join(dir, `${recorded}.json`));
    if (kept !== undefined) return { id: recorded, instructions: kept ?? undefined };
  }
  const now = projectInstructions(root, gitArgs);
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

/**
 * Kept instructions: null for "the project had none", undefined when the file is missing or
 * unreadable. Files kept before CLAUDE.local.md and imports were read hold one file's
 * `{file, text}`; they read as that one file, and give the prompt they gave then.
 */
function readKept(file: string): ProjectInstructions | null | undefined {
  try {
    const v = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    if (v === null) return null;
    if (isFile(v)) return { files: [{ file: v.file, text: v.text }] };
    const files = (v as { files?: unknown }).files;
    if (!Array.isArray(files) || !files.every(isFile)) return undefined;
    return { files: files.map((f) => ({ file: f.file, text: f.text })) };
  } catch {
    return undefined;
  }
}

function isFile(v: unknown): v is InstructionFile {
  const r = v as Partial<InstructionFile> | null;
  return typeof r === 'object' && r !== null && typeof r.file === 'string' && typeof r.text === 'string';
}

/**
 * What the user's flags make of the system prompt: `replace` (--system-prompt) stands for our own
 * instructions, `append` (--append-system-prompt) goes at the end. The environment and the
 * project's instructions stay either way: the model needs them to work here at all.
 */
export interface PromptFlags {
  replace?: string;
  append?: string;
  /** The project is a folder in no git repository: our instructions say so instead of how git stands. */
  folder?: boolean;
}

/** The base system prompt: who the agent is, where it works, then the project's own instructions. */
export function basePrompt(
  root: string,
  project: ProjectInstructions | undefined = projectInstructions(root),
  environment?: string,
  flags: PromptFlags = {},
): string {
  // The environment (session-environment.ts) names the root among the session's other facts.
  const parts = [flags.replace ?? (flags.folder ? BASE.replace(GIT_LINE, FOLDER_LINE) : BASE), environment ?? `The repository is at ${root}.`];
  for (const f of project?.files ?? []) {
    if (f.text === '') continue;
    // One file alone (AGENTS.md) reads as it always did: a kept session's prompt is unchanged.
    const heading = f.file === LOCAL_INSTRUCTIONS ? `Local project instructions (from ${f.file})` : `Project instructions (from ${f.file})`;
    parts.push(`${heading}:\n\n${f.text}`);
  }
  if (flags.append !== undefined) parts.push(flags.append);
  // An empty --system-prompt or --append-system-prompt adds nothing, not a blank paragraph.
  return parts.filter((p) => p.trim() !== '').join('\n\n');
}
