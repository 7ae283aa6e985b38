import type { AsyncTool, ToolOutput } from '@infinity-code/runtime';
import type { Sandbox } from '@infinity-code/sandbox';
import { addedSearchPath } from './added-dirs.js';
import { ToolError } from './errors.js';
import { ContentMatches, FileMatches, GREP_LIMITS, MatchCounts, type GrepCollector, type OutputMode } from './grep-results.js';
import { guardPath } from './path-guard.js';
import { runRipgrep } from './ripgrep.js';
import { optBool, optInt, optStr, sandboxTool, short, str, type ToolEnv } from './tool-kit.js';

const MODES: readonly OutputMode[] = ['files_with_matches', 'content', 'count'];
/** Claude Code's context parameters, as ripgrep's flags (ripgrep lets -A and -B override -C). */
const CONTEXT_FLAGS = { '-A': '--after-context', '-B': '--before-context', '-C': '--context' } as const;

export function grepTool(env: ToolEnv): AsyncTool {
  return sandboxTool(env, {
    name: 'grep',
    description:
      'Search file contents with a regular expression (ripgrep syntax, look-around works; escape literal braces: ' +
      '`interface\\{\\}`), skipping what .gitignore ignores. Case-sensitive unless -i. output_mode: ' +
      '"files_with_matches" (default: the matching files, sorted by path), "content" (matching lines as `N:line` ' +
      'under each file; -A/-B/-C add context lines as `N-line`), "count" (matching lines per file). Capped at ' +
      `${GREP_LIMITS.defaultHead} files or counts, ${GREP_LIMITS.defaultContentLines} lines and ${GREP_LIMITS.maxChars} ` +
      'characters unless head_limit is given; offset pages on.',
    access: 'read',
    input_schema: {
      type: 'object',
      properties: {
        pattern: { type: 'string', description: 'Regular expression to search for.' },
        path: { type: 'string', description: 'File or directory to search (default: the repository root).' },
        glob: { type: 'string', description: 'Only files matching this glob, e.g. `*.ts`, `src/**/*.{ts,tsx}`.' },
        type: { type: 'string', description: 'Only files of this type (rg --type: ts, py, rust...).' },
        output_mode: { type: 'string', enum: [...MODES] },
        '-A': { type: 'integer', minimum: 0, description: 'Lines after each match.' },
        '-B': { type: 'integer', minimum: 0, description: 'Lines before each match.' },
        '-C': { type: 'integer', minimum: 0, description: 'Lines before and after each match.' },
        '-n': { type: 'boolean', description: 'Line numbers (default true).' },
        '-i': { type: 'boolean', description: 'Ignore case.' },
        multiline: { type: 'boolean', description: 'Patterns may span lines; `.` matches newlines.' },
        head_limit: { type: 'integer', minimum: 1, description: 'At most this many files, counts or lines.' },
        offset: { type: 'integer', minimum: 0, description: 'Skip this many first.' },
        include: { type: 'string', description: 'Same as glob.' },
        exclude: { type: 'string', description: 'Skip files matching this glob.' },
      },
      required: ['pattern'],
      additionalProperties: false,
    },
    display(input) {
      const where = [input.path, input.glob ?? input.include, input.type === undefined ? undefined : `type ${short(input.type)}`]
        .filter((x) => x !== undefined && x !== null && x !== '')
        .map((x) => short(x))
        .join(' ');
      return `Grep ${JSON.stringify(short(input.pattern, 60))}${where ? ` in ${where}` : ''}`;
    },
    run: (input, sb) => grep(sb, env, input),
  });
}

async function grep(sb: Sandbox, env: ToolEnv, input: Record<string, unknown>): Promise<ToolOutput> {
  const pattern = str(input, 'pattern');
  if (pattern === '') throw new ToolError('pattern is empty. Give a regular expression to search for.');
  const mode = (optStr(input, 'output_mode') ?? 'files_with_matches') as OutputMode;
  if (!MODES.includes(mode)) throw new ToolError(`output_mode must be one of ${MODES.map((m) => `"${m}"`).join(', ')}.`);
  const rawPath = optStr(input, 'path') ?? '';
  const added = await addedSearchPath(sb, env, rawPath);
  const rel = added ?? (await guardPath(sb, rawPath, { repoRoot: env.repoRoot, allowRoot: true }));
  if (added === undefined && rel !== '' && !(await sb.exists(rel))) {
    throw new ToolError(`"${rel}" does not exist. Give a file or directory relative to the repository root (list_files shows what is there).`);
  }
  const globs = [optStr(input, 'glob'), optStr(input, 'include')].filter((g): g is string => g !== undefined && g !== '');
  const exclude = optStr(input, 'exclude');
  const type = optStr(input, 'type');
  const context = Object.entries(CONTEXT_FLAGS).flatMap(([key, flag]) => {
    const n = optInt(input, key);
    return n === undefined ? [] : [{ flag: `${flag}=${n}`, n }];
  });
  const multiline = optBool(input, 'multiline') === true;
  // Line by line, a line break never matches (ripgrep's own error is lost to the PCRE2 fallback).
  if (pattern.includes('\n') && !multiline) throw new ToolError('The pattern contains a line break, which only matches with multiline: true.');
  const headLimit = optInt(input, 'head_limit');
  const offset = optInt(input, 'offset') ?? 0;

  const flags = [
    // Falls back to PCRE2 for look-around and backreferences, which the default engine lacks.
    '--engine=auto',
    optBool(input, '-i') === true ? '--ignore-case' : '--case-sensitive',
    ...(multiline ? ['--multiline', '--multiline-dotall'] : []),
    ...(type ? [`--type=${type}`] : []),
    ...globs.map((g) => `--glob=${g}`),
    ...(exclude ? [`--glob=!${exclude}`] : []),
  ];
  let results: GrepCollector;
  let separator: '\n' | '\0' = '\n';
  if (mode === 'files_with_matches') {
    results = new FileMatches();
    flags.push('--files-with-matches', '--null');
    separator = '\0';
  } else if (mode === 'count') {
    results = new MatchCounts();
    flags.push('--count', '--with-filename', '--null');
  } else {
    const lineNumbers = optBool(input, '-n') !== false;
    results = new ContentMatches({ lineNumbers, context: context.some((c) => c.n > 0) });
    flags.push('--json', ...context.map((c) => c.flag));
  }
  flags.push(`--regexp=${pattern}`);

  const run = await runRipgrep(sb, { flags, paths: rel === '' ? [] : [rel], separator }, (line) => results.add(line));
  if (run.exitCode === 2 && !results.found && !run.stopped) {
    if (/regex parse error|error parsing|PCRE2/i.test(run.stderr)) {
      throw new ToolError(
        `Invalid regular expression ${JSON.stringify(pattern)}:\n${run.stderr}\nEscape characters such as ( [ { . * + ? | \\ ` +
          'with a backslash to match them literally.',
      );
    }
    if (/unrecognized file type/i.test(run.stderr)) {
      throw new ToolError(`Unknown file type ${JSON.stringify(type)}. Use a ripgrep type name (js, ts, py, rust, go, java, c, cpp, md...) or a glob instead (glob: "*.ext").`);
    }
    if (/glob/i.test(run.stderr)) throw new ToolError(`Invalid glob: ${run.stderr}`);
    throw new ToolError(`The search failed: ${run.stderr || 'ripgrep gave no reason'}.`);
  }
  if (!results.found) {
    const where = rel === '' ? '' : ` in ${rel}`;
    return {
      content: `No matches found for ${JSON.stringify(pattern)}${where} (files ignored by .gitignore are not searched).`,
      display: { summary: 'no matches' },
    };
  }
  const head = headLimit ?? (mode === 'content' ? GREP_LIMITS.defaultContentLines : GREP_LIMITS.defaultHead);
  const maxChars = headLimit === undefined ? GREP_LIMITS.maxChars : GREP_LIMITS.maxCharsWithHead;
  const page = results.render({ offset, head, maxChars });
  return { content: page.text, display: { summary: page.summary } };
}
