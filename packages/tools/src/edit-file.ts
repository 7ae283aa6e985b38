import type { AsyncTool, ToolContext, ToolOutput } from '@infinity-code/runtime';
import type { Sandbox } from '@infinity-code/sandbox';
import { diffLines } from 'diff';
import { classify } from './content-kind.js';
import { ToolError } from './errors.js';
import { applyEdit } from './edit-match.js';
import { guardPath, refuseGitDir } from './path-guard.js';
import { editReport } from './edit-report.js';
import { readMemoryOf } from './read-memory.js';
import { plural } from './text-lines.js';
import { optBool, sandboxTool, short, shown, str, type ToolEnv } from './tool-kit.js';
import { changeSummary, fileDiff } from './unified-diff.js';

export function editFileTool(env: ToolEnv): AsyncTool {
  return sandboxTool(env, {
    name: 'edit_file',
    description:
      'Replace text in a file of the repository. old_str must match exactly one place in the file ' +
      '(include enough surrounding lines to make it unique), or set replace_all to replace every match. ' +
      'Copy old_str from the file without the line-number prefix read_file shows (number and tab). If it ' +
      'matches nowhere exactly, a match ignoring leading and trailing whitespace on each line is tried.',
    access: 'write',
    input_schema: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'File path relative to the repository root.' },
        old_str: { type: 'string', description: 'The text to replace, copied from the file.' },
        new_str: { type: 'string', description: 'The replacement text.' },
        replace_all: { type: 'boolean', description: 'Replace every match of old_str (default false).' },
      },
      required: ['path', 'old_str', 'new_str'],
      additionalProperties: false,
    },
    display(input) {
      // The edit replaces old_str by new_str, so their line diff is the file's (the display has
      // only the input to go on).
      let added = 0;
      let removed = 0;
      for (const c of diffLines(shown(input.old_str), shown(input.new_str))) {
        if (c.added) added += c.count ?? 0;
        else if (c.removed) removed += c.count ?? 0;
      }
      return `Edit ${short(input.path)} (${changeSummary({ added, removed })}${input.replace_all === true ? ', every match' : ''})`;
    },
    run: (input, sb, ctx) => editFile(sb, env, input, ctx),
  });
}

async function editFile(sb: Sandbox, env: ToolEnv, input: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutput> {
  const raw = str(input, 'path');
  const oldStr = str(input, 'old_str');
  const newStr = str(input, 'new_str');
  const replaceAll = optBool(input, 'replace_all') === true;
  const rel = await guardPath(sb, raw, { repoRoot: env.repoRoot });
  refuseGitDir(rel, raw);
  if (!(await sb.exists(rel))) {
    throw new ToolError(`${rel} does not exist. Use create_file to create it, or list_files to find the right path.`);
  }
  const st = await sb.stat(rel);
  if (st.type === 'dir') throw new ToolError(`"${rel}" is a directory, not a file.`);
  const content = classify(await sb.readFile(rel));
  if (content.kind !== 'text') {
    throw new ToolError(`"${rel}" is not a text file (${content.kind === 'image' ? 'an image' : content.why}); edit_file changes text files only.`);
  }
  const edit = applyEdit(rel, content.text, oldStr, newStr, replaceAll);
  await sb.writeFile(rel, edit.text);
  readMemoryOf(env).forget(ctx.threadId, rel);
  const diff = fileDiff(rel, content.text, edit.text);
  const report = editReport(edit.text, edit.spans);
  const count = edit.spans.length;
  const what = count === 1 ? ` at ${report.where}` : `: ${count} replacements, at ${report.where}`;
  const how = edit.how === 'whitespace' ? '; old_str matched ignoring leading and trailing whitespace' : '';
  return {
    content: `Edited ${rel}${what} (${changeSummary(diff)}${how}):\n${report.snippet}`,
    display: {
      title: `Edit ${rel}`,
      summary: [count > 1 ? plural(count, 'replacement') : '', changeSummary(diff), edit.how === 'whitespace' ? 'matched ignoring indentation' : '']
        .filter((x) => x !== '')
        .join(', '),
      diff: diff.text,
    },
  };
}
