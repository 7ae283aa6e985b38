import type { AsyncTool, ToolOutput } from '@infinity-code/runtime';
import type { Sandbox } from '@infinity-code/sandbox';
import { addedSearchPath } from './added-dirs.js';
import { ToolError } from './errors.js';
import { guardPath } from './path-guard.js';
import { runRipgrep } from './ripgrep.js';
import { compareCodePoints, plural } from './text-lines.js';
import { optStr, sandboxTool, short, type ToolEnv } from './tool-kit.js';

export const LIST_LIMIT = 1_000;

export function listFilesTool(env: ToolEnv): AsyncTool {
  return sandboxTool(env, {
    name: 'list_files',
    description:
      'List the files of the repository (or of a directory in it), sorted, skipping what .gitignore ' +
      `ignores and .git itself; at most ${LIST_LIMIT} are shown. pattern is a glob: \`*.ts\` matches ` +
      'names at any depth, `src/**/*.test.ts` paths from the listed directory; use braces for ' +
      'alternatives (`*.{ts,tsx}`).',
    access: 'read',
    input_schema: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'Directory relative to the repository root (default: the root).' },
        pattern: { type: 'string', description: 'Glob the files must match.' },
      },
      additionalProperties: false,
    },
    display: (input) => `List ${short(input.path || '.')}${input.pattern ? ` ${short(input.pattern)}` : ''}`,
    run: (input, sb) => listFiles(sb, env, input),
  });
}

async function listFiles(sb: Sandbox, env: ToolEnv, input: Record<string, unknown>): Promise<ToolOutput> {
  const raw = optStr(input, 'path') ?? '';
  const pattern = optStr(input, 'pattern');
  const added = await addedSearchPath(sb, env, raw);
  const rel = added ?? (await guardPath(sb, raw, { repoRoot: env.repoRoot, allowRoot: true }));
  if (added === undefined && rel !== '' && !(await sb.exists(rel))) {
    throw new ToolError(`"${rel}" does not exist. List its parent directory to see what is there.`);
  }
  const files: string[] = [];
  const run = await runRipgrep(
    sb,
    { flags: ['--files', ...(pattern ? [`--glob=${pattern}`] : [])], paths: rel === '' ? [] : [rel] },
    (line) => {
      if (line !== '') files.push(line);
    },
  );
  // Exit code 1 means "nothing listed"; 2 with output means some entries could not be read.
  if (run.exitCode === 2 && files.length === 0) throw new ToolError(`Listing failed: ${run.stderr || 'ripgrep gave no reason'}.`);
  // Sorted here, not by ripgrep: --sort makes it single-threaded, slow on big trees.
  files.sort(compareCodePoints);
  const where = rel === '' ? 'the repository' : rel;
  const what = pattern ? ` matching ${pattern}` : '';
  if (files.length === 0) {
    return { content: `No files${what} in ${where} (files ignored by .gitignore are not listed).`, display: { summary: 'no files' } };
  }
  const shown = files.slice(0, LIST_LIMIT);
  const lines = [`${plural(files.length, 'file')}${what} in ${where}:`, ...shown];
  if (files.length > shown.length) {
    lines.push(`[Showing the first ${shown.length} of ${files.length} files. Narrow the listing with path or pattern.]`);
  }
  const summary = files.length > shown.length ? `${files.length} files, the first ${shown.length} shown` : plural(files.length, 'file');
  return { content: lines.join('\n'), display: { summary } };
}
