import type { AsyncTool, ToolOutput } from '@infinity-code/runtime';
import type { Sandbox } from '@infinity-code/sandbox';
import { SandboxError } from '@infinity-code/sandbox/patches';
import { ToolError } from './errors.js';
import { guardPath, refuseGitDir } from './path-guard.js';
import { splitLines, plural } from './text-lines.js';
import { sandboxTool, short, shown, str, type ToolEnv } from './tool-kit.js';
import { fileDiff } from './unified-diff.js';

export function createFileTool(env: ToolEnv): AsyncTool {
  return sandboxTool(env, {
    name: 'create_file',
    description:
      'Create a new file in the repository with the given content (missing parent directories are ' +
      'created). Fails if the file already exists: change existing files with edit_file.',
    access: 'write',
    input_schema: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'File path relative to the repository root.' },
        content: { type: 'string', description: 'The whole content of the new file.' },
      },
      required: ['path', 'content'],
      additionalProperties: false,
    },
    display: (input) => `Create ${short(input.path)} (${plural(splitLines(shown(input.content)).length, 'line')})`,
    run: (input, sb) => createFile(sb, env, input),
  });
}

async function createFile(sb: Sandbox, env: ToolEnv, input: Record<string, unknown>): Promise<ToolOutput> {
  const raw = str(input, 'path');
  const content = str(input, 'content');
  const rel = await guardPath(sb, raw, { repoRoot: env.repoRoot });
  refuseGitDir(rel, raw);
  // stat, not exists: a dangling symlink is an existing entry too, and must not be written through.
  const existing = await sb.stat(rel).catch((err: unknown) => {
    if (err instanceof SandboxError && err.code === 'not-found') return undefined;
    throw err;
  });
  if (existing) {
    throw new ToolError(
      existing.type === 'dir'
        ? `"${rel}" is an existing directory. Choose a file path inside it.`
        : `${rel} already exists. Use edit_file to change it (read_file shows its content).`,
    );
  }
  await sb.writeFile(rel, content).catch((err: unknown) => {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOTDIR' || code === 'EEXIST') {
      throw new ToolError(`Cannot create ${rel}: a parent of it is a file, not a directory. Choose another path.`);
    }
    throw err;
  });
  const diff = fileDiff(rel, null, content);
  const lines = plural(splitLines(content).length, 'line');
  return {
    content: `Created file ${rel} (${lines}).\n\n${diff.text}`,
    display: { title: `Create ${rel}`, summary: lines, diff: diff.text },
  };
}
