import type { AsyncTool, ToolOutput } from '@infinity-code/runtime';
import type { Sandbox } from '@infinity-code/sandbox';
import { ToolError } from './errors.js';
import { GREP_LIMITS, GrepResults } from './grep-results.js';
import { runRipgrep } from './ripgrep.js';
import { optStr, sandboxTool, short, str, type ToolEnv } from './tool-kit.js';

export function grepTool(env: ToolEnv): AsyncTool {
  return sandboxTool(env, {
    name: 'grep',
    description:
      'Search the repository\'s files for a regular expression (Rust regex syntax; look-around works ' +
      'too), skipping what .gitignore ignores. Shows matching lines with their numbers and ' +
      `${GREP_LIMITS.contextLines} lines of context, at most ${GREP_LIMITS.perFile} matches per file and ` +
      `${GREP_LIMITS.total} overall. include and exclude are globs (\`*.ts\`, \`src/**\`, \`*.{ts,tsx}\`). ` +
      'Case-insensitive unless case_sensitive is true.',
    access: 'read',
    input_schema: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'Regular expression to search for.' },
        include: { type: 'string', description: 'Only search files matching this glob.' },
        exclude: { type: 'string', description: 'Skip files matching this glob.' },
        case_sensitive: { type: 'boolean', description: 'Match case exactly (default false).' },
      },
      required: ['query'],
      additionalProperties: false,
    },
    display: (input) => `Grep ${JSON.stringify(short(input.query, 60))}${input.include ? ` in ${short(input.include)}` : ''}`,
    run: (input, sb) => grep(sb, input),
  });
}

async function grep(sb: Sandbox, input: Record<string, unknown>): Promise<ToolOutput> {
  const query = str(input, 'query');
  if (query === '') throw new ToolError('query is empty. Give a regular expression to search for.');
  const include = optStr(input, 'include');
  const exclude = optStr(input, 'exclude');
  const flags = [
    '--json',
    `--max-count=${GREP_LIMITS.perFile}`,
    `--context=${GREP_LIMITS.contextLines}`,
    // Falls back to PCRE2 for look-around and backreferences, which the default engine lacks.
    '--engine=auto',
    input.case_sensitive === true ? '--case-sensitive' : '--ignore-case',
    ...(include ? [`--glob=${include}`] : []),
    ...(exclude ? [`--glob=!${exclude}`] : []),
    `--regexp=${query}`,
  ];
  const results = new GrepResults();
  const run = await runRipgrep(sb, { flags }, (line) => results.add(line));
  if (run.exitCode === 2 && results.matchCount === 0 && !run.stopped) {
    if (/regex parse error|error parsing|PCRE2/i.test(run.stderr)) {
      throw new ToolError(
        `Invalid regular expression ${JSON.stringify(query)}:\n${run.stderr}\nEscape characters such as ( [ { . * + ? | \\ ` +
          'with a backslash to match them literally.',
      );
    }
    if (/glob/i.test(run.stderr)) throw new ToolError(`Invalid include or exclude glob: ${run.stderr}`);
    throw new ToolError(`The search failed: ${run.stderr || 'ripgrep gave no reason'}.`);
  }
  return { content: results.render(query), display: { summary: results.summary() } };
}
