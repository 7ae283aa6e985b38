// The instruction files of subdirectories (AGENTS.md or CLAUDE.md, and CLAUDE.local.md), shown to
// a thread the first time it works under each: appended to the result of its first file tool call
// there, once per thread and directory. Not in the system prompt, which stays the same for a whole
// session (the model's thinking is bound to it, and every thread of the session shares its cache).
import path from 'node:path';
import type { ThreadRecord, ToolOutput } from '@infinity-code/runtime';
import type { Sandbox } from '@infinity-code/sandbox';
import { clipRead, hostReader, LOCAL_INSTRUCTIONS, readInstructions, type InstructionFile, type Reader } from './instruction-files.js';
import { lexicalPath } from './path-guard.js';

export interface NestedInstructionsOptions {
  /** Threads whose shown directories are remembered; the least recently active is forgotten first (default 256). */
  maxThreads?: number;
  /** Directories remembered per thread; the oldest is forgotten first (default 512). */
  maxDirsPerThread?: number;
}

/** Directories never looked into: git's, and installed packages (whose instructions are not the project's). */
const NEVER = new Set(['.git', 'node_modules']);

/** A sandbox file bigger than this is not read for instructions (the sandbox reads whole files). */
const MAX_SANDBOX_FILE_BYTES = 1024 * 1024;

/** What ShownDirs looks at of the calling thread (ToolContext.thread). */
export type ShownThread = Pick<Readonly<ThreadRecord>, 'id' | 'contextTokens'>;

interface ThreadShown {
  contextTokens: number;
  dirs: Set<string>;
}

/**
 * Which directories each thread has been shown the instructions of, bounded: forgetting only
 * means showing a directory's instructions again (as after a restart), which is harmless. Plain
 * sets in a map, nothing per thread that runs or waits.
 *
 * A thread whose history was compacted may have lost what it was shown with it. Nothing says so
 * directly, but its context size does: without compaction it only grows, and applying a summary
 * makes it drop. A drop forgets what the thread was shown.
 */
export class ShownDirs {
  private readonly threads = new Map<string, ThreadShown>();

  constructor(
    private readonly maxThreads = 256,
    private readonly maxDirsPerThread = 512,
  ) {}

  /** Of `dirs`, those the thread was not shown yet; all of them count as shown from now on. */
  take(thread: ShownThread, dirs: readonly string[]): string[] {
    let t = this.threads.get(thread.id);
    // Most recently active last: the first key is the one to forget.
    if (t) this.threads.delete(thread.id);
    if (!t || thread.contextTokens < t.contextTokens) t = { contextTokens: thread.contextTokens, dirs: new Set() };
    else t.contextTokens = thread.contextTokens;
    this.threads.set(thread.id, t);
    if (this.threads.size > this.maxThreads) this.threads.delete(this.threads.keys().next().value!);
    const shown = t.dirs;
    const fresh = dirs.filter((d) => !shown.has(d));
    for (const d of fresh) {
      if (shown.size >= this.maxDirsPerThread) shown.delete(shown.values().next().value!);
      shown.add(d);
    }
    return fresh;
  }

  /** Threads and directories remembered (for tests of the bound). */
  get size(): { threads: number; dirs: number } {
    let dirs = 0;
    for (const t of this.threads.values()) dirs += t.dirs.size;
    return { threads: this.threads.size, dirs };
  }
}

/**
 * Finds, for a successful file tool call, the instruction files between the repository root
 * (exclusive: its own are in the system prompt) and the directory the call's path is in (or is,
 * for a directory) that the calling thread has not been shown, and appends them to the result.
 * Files are read through the thread's sandbox, so its own edits count. A CLAUDE.local.md the
 * sandbox lacks (the user's own notes are git-ignored, and ignored files never reach a sandbox)
 * comes from the user's working tree, and so do the files it imports that the sandbox lacks. Only
 * for such a file: an instruction file of the repository's own never brings an ignored file of the
 * user's (`.env`) to the model, which the sandbox keeps from it.
 */
export class NestedInstructions {
  private readonly shown: ShownDirs;
  private readonly host: Reader | undefined;

  constructor(
    private readonly repoRoot: string | undefined,
    o: NestedInstructionsOptions = {},
  ) {
    this.shown = new ShownDirs(o.maxThreads, o.maxDirsPerThread);
    this.host = repoRoot === undefined ? undefined : hostReader(repoRoot);
  }

  /** `output` with the instructions the call reached appended; `output` itself on any failure. */
  async addTo(output: ToolOutput, input: Record<string, unknown>, sb: Sandbox, thread: ShownThread): Promise<ToolOutput> {
    if (output.isError || output.subscription || typeof input.path !== 'string') return output;
    try {
      const files = await this.forPath(input.path, sb, thread);
      return files.length === 0 ? output : appended(output, render(files));
    } catch {
      return output;
    }
  }

  /** The instruction files `thread` has not been shown on the way to `raw` (a path argument). */
  async forPath(raw: string, sb: Sandbox, thread: ShownThread): Promise<InstructionFile[]> {
    const rel = lexicalPath(raw, [sb.root, ...(this.repoRoot !== undefined ? [this.repoRoot] : [])]);
    if (rel === '') return [];
    const st = await sb.stat(rel).catch(() => undefined);
    const dir = st?.type === 'dir' ? rel : path.posix.dirname(rel);
    const fresh = this.shown.take(thread, dirsOf(dir === '.' ? '' : dir));
    if (fresh.length === 0) return [];
    return readInstructions(fresh, this.reader(sb), {
      root: this.repoRoot ?? sb.root,
      // A call that read (or wrote) an instruction file has it in its result already.
      shown: [rel],
    });
  }

  /** Reads through the sandbox; see the class comment for what comes from the working tree. */
  private reader(sb: Sandbox): Reader {
    const host = this.host;
    // The CLAUDE.local.md files of this delivery that came from the working tree.
    const fromHost = new Set<string>();
    return async (request) => {
      const text = await readSandboxFile(sb, request.path);
      if (text !== undefined || !host) return text;
      if (request.path !== request.top) return fromHost.has(request.top) ? host(request) : undefined;
      if (path.posix.basename(request.top) !== LOCAL_INSTRUCTIONS) return undefined;
      const own = await host(request);
      if (own !== undefined) fromHost.add(request.top);
      return own;
    };
  }
}

/** 'a/b/c' → ['a', 'a/b', 'a/b/c'], outermost first; none at or under .git or node_modules. */
export function dirsOf(dir: string): string[] {
  if (dir === '') return [];
  const out: string[] = [];
  const parts = dir.split('/');
  for (let i = 0; i < parts.length; i++) {
    if (NEVER.has(parts[i])) break;
    out.push(parts.slice(0, i + 1).join('/'));
  }
  return out;
}

/**
 * A file of the sandbox as text, or undefined: only regular files (or links to them, which the
 * sandbox never follows out of the repository), and none over MAX_SANDBOX_FILE_BYTES.
 */
async function readSandboxFile(sb: Sandbox, rel: string): Promise<string | undefined> {
  try {
    const st = await sb.stat(rel);
    if (st.type !== 'file' && st.type !== 'symlink') return undefined;
    if (st.size > MAX_SANDBOX_FILE_BYTES) return undefined;
    const bytes = await sb.readFile(rel);
    if (bytes.length > MAX_SANDBOX_FILE_BYTES) return undefined;
    return clipRead(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** The instructions as appended to a result: each file in its own block, saying where it applies. */
export function render(files: readonly InstructionFile[]): string {
  return files
    .map((f) => {
      const dir = path.posix.dirname(f.file);
      return `<instructions from="${f.file}" applies-to="${dir}/">\n${f.text}\n</instructions>`;
    })
    .join('\n\n');
}

function appended(output: ToolOutput, text: string): ToolOutput {
  const intro = 'Instructions for the directories this call reached (shown once; follow them for work there):';
  const block = `${intro}\n\n${text}`;
  if (typeof output.content === 'string') return { ...output, content: `${output.content}\n\n${block}` };
  return { ...output, content: [...output.content, { type: 'text', text: block }] };
}
