import type { AsyncTool, ToolContext, ToolOutput } from '@infinity-code/runtime';
import type { Sandbox } from '@infinity-code/sandbox';
import { SandboxError } from '@infinity-code/sandbox/patches';
import { classify } from './content-kind.js';
import { ToolError } from './errors.js';
import { guardPath, refuseGitDir } from './path-guard.js';
import { readMemoryOf } from './read-memory.js';
import { splitLines, plural } from './text-lines.js';
import { optBool, sandboxTool, short, shown, str, type ToolEnv } from './tool-kit.js';
import { fileDiff, type FileDiff } from './unified-diff.js';

/** Above this, an overwritten file's old content is not diffed for UIs (the diff would cost more than it shows). */
const MAX_DIFF_BYTES = 1024 * 1024;

export function createFileTool(env: ToolEnv): AsyncTool {
  return sandboxTool(env, {
    name: 'create_file',
    description:
      'Create a file in the repository with the given content (missing parent directories are created). ' +
      'Fails if the file exists, unless overwrite is true, which replaces its whole content (read it first); ' +
      'to change part of a file use edit_file.',
    access: 'write',
    input_schema: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'File path relative to the repository root.' },
        content: { type: 'string', description: 'The whole content of the file.' },
        overwrite: { type: 'boolean', description: 'Replace the file if it exists (default false).' },
      },
      required: ['path', 'content'],
      additionalProperties: false,
    },
    display: (input) =>
      `${input.overwrite === true ? 'Write' : 'Create'} ${short(input.path)} (${plural(splitLines(shown(input.content)).length, 'line')})`,
    run: (input, sb, ctx) => createFile(sb, env, input, ctx),
  });
}

async function createFile(sb: Sandbox, env: ToolEnv, input: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutput> {
  const raw = str(input, 'path');
  const content = str(input, 'content');
  const overwrite = optBool(input, 'overwrite') === true;
  const rel = await guardPath(sb, raw, { repoRoot: env.repoRoot });
  refuseGitDir(rel, raw);
  // stat, not exists: a dangling symlink is an existing entry too, and must not be written through.
  const existing = await sb.stat(rel).catch((err: unknown) => {
    if (err instanceof SandboxError && err.code === 'not-found') return undefined;
    throw err;
  });
  if (existing?.type === 'dir') throw new ToolError(`"${rel}" is an existing directory. Choose a file path inside it.`);
  if (existing && !overwrite) {
    throw new ToolError(
      `${rel} already exists. To replace its whole content pass overwrite: true (read it first, with read_file); ` +
        'to change part of it use edit_file.',
    );
  }
  // The old content: for the result's line count and the UI's diff.
  const before = existing ? await sb.readFile(rel).catch(() => undefined) : undefined;
  await sb.writeFile(rel, content).catch((err: unknown) => {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOTDIR' || code === 'EEXIST') {
      throw new ToolError(`Cannot create ${rel}: a parent of it is a file, not a directory. Choose another path.`);
    }
    throw err;
  });
  readMemoryOf(env).forget(ctx.threadId, rel);
  const lines = plural(splitLines(content).length, 'line');
  if (!existing) {
    const diff = fileDiff(rel, null, content);
    return { content: `Created ${rel} (${lines}).`, display: { title: `Create ${rel}`, summary: lines, diff: diff.text } };
  }
  let was = '';
  let diff: FileDiff | undefined;
  if (before !== undefined) {
    const old = classify(before);
    if (old.kind !== 'text') was = `, was ${plural(before.length, 'byte')} of ${old.kind === 'image' ? 'image' : 'binary'} data`;
    else {
      was = `, was ${splitLines(old.text).length}`;
      if (before.length <= MAX_DIFF_BYTES && content.length <= MAX_DIFF_BYTES) diff = fileDiff(rel, old.text, content);
    }
  }
  return {
    content: `Overwrote ${rel} (${lines}${was}).`,
    display: {
      title: `Overwrite ${rel}`,
      summary: diff ? `${lines}, +${diff.added} -${diff.removed}` : lines,
      ...(diff ? { diff: diff.text } : {}),
    },
  };
}
