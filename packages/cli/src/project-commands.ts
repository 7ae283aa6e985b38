// Project commands: Markdown prompts in `.infinity/commands/` and `.claude/commands/` (Claude Code's
// format) that the user runs as `/name args`. Naming, parsing and expansion, pure; the files are
// read by project-commands-load.ts.

/** Where project commands live, repository-relative; the first folder wins a name both define. */
export const COMMAND_FOLDERS = ['.infinity/commands', '.claude/commands'] as const;

export interface ProjectCommand {
  /** `build` for `build.md`, `frontend:build` for `frontend/build.md` (Claude Code's naming). */
  name: string;
  /** From the frontmatter: shown in /help. */
  description?: string;
  /** From the frontmatter (`argument-hint`): shown after the name in /help. */
  argumentHint?: string;
  /** The prompt: the file without its frontmatter. */
  body: string;
  /** The file, repository-relative with `/` separators. */
  file: string;
}

/** A file that defines no command, and why, in one line for the user. */
export interface CommandFileProblem {
  file: string;
  /** The command it would have defined, when its name could be read. */
  name?: string;
  message: string;
}

export interface ProjectCommands {
  commands: ProjectCommand[];
  problems: CommandFileProblem[];
}

export const NO_PROJECT_COMMANDS: ProjectCommands = { commands: [], problems: [] };

// Letters, digits, `_`, `-` and `.` per folder or file name: what can be typed after `/` and
// split from the arguments at the first space.
const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

/**
 * The command a file defines, from its path inside a commands folder (`frontend/build.md` is
 * `frontend:build`); undefined for a name that can't be typed as a command.
 */
export function commandNameOf(pathInFolder: string): string | undefined {
  if (!/\.md$/i.test(pathInFolder)) return undefined;
  const segments = pathInFolder.slice(0, -3).split('/');
  return segments.every((s) => SEGMENT.test(s)) ? segments.join(':') : undefined;
}

export type ParsedCommandFile = { ok: true; command: ProjectCommand } | { ok: false; message: string };

/**
 * A command file: optional frontmatter between `---` lines (`description` and `argument-hint`
 * are read; other keys, such as `allowed-tools` and `model`, are ignored), then the prompt.
 */
export function parseCommandFile(text: string, name: string, file: string): ParsedCommandFile {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  let bodyStart = 0;
  const fields = new Map<string, string>();
  if (lines[0]?.trim() === '---') {
    const end = lines.findIndex((l, i) => i > 0 && l.trim() === '---');
    if (end === -1) return { ok: false, message: 'its frontmatter (the --- line at the top) has no closing --- line' };
    const read = readFrontmatter(lines.slice(1, end));
    if (typeof read === 'string') return { ok: false, message: read };
    for (const [k, v] of read) fields.set(k, v);
    bodyStart = end + 1;
  }
  const body = lines.slice(bodyStart).join('\n').trim();
  if (body === '') return { ok: false, message: 'it has no prompt (the text after the frontmatter is empty)' };
  const description = fields.get('description');
  const argumentHint = fields.get('argument-hint');
  return {
    ok: true,
    command: { name, body, file, ...(description ? { description } : {}), ...(argumentHint ? { argumentHint } : {}) },
  };
}

/**
 * `key: value` lines, YAML-ish: quoted values unquoted, `>` and `|` blocks joined, indented lines
 * (a list under an ignored key) and comments skipped. A string is what is wrong.
 */
function readFrontmatter(lines: string[]): Map<string, string> | string {
  const fields = new Map<string, string>();
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.trim() === '' || line.trimStart().startsWith('#') || /^\s/.test(line)) continue;
    const m = /^([A-Za-z0-9_-]+)\s*:(.*)$/.exec(line);
    if (!m) return `line ${i + 2} of its frontmatter is not "key: value"`;
    let value = m[2].trim();
    if (value === '>' || value === '|' || /^[>|][+-]$/.test(value)) {
      const block: string[] = [];
      while (i + 1 < lines.length && (/^\s/.test(lines[i + 1]) || lines[i + 1].trim() === '')) block.push(lines[++i].trim());
      value = block.filter((l) => l !== '').join(value.startsWith('>') ? ' ' : '\n');
    }
    fields.set(m[1].toLowerCase(), unquote(value));
  }
  return fields;
}

function unquote(value: string): string {
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) return value.slice(1, -1).replace(/\\(["\\])/g, '$1');
  if (value.length >= 2 && value.startsWith("'") && value.endsWith("'")) return value.slice(1, -1).replace(/''/g, "'");
  return value;
}

/** `/name args` naming one of `commands`: the command and the text after its name. */
export function findProjectCommand(
  line: string,
  commands: readonly ProjectCommand[],
): { command: ProjectCommand; args: string } | undefined {
  const m = /^\/(\S+)(?:\s+([\s\S]*))?$/.exec(line.trim());
  if (!m) return undefined;
  const command = commands.find((c) => c.name === m[1]);
  return command && { command, args: (m[2] ?? '').trim() };
}

/**
 * The message a command sends: `$ARGUMENTS` is the text after its name, `$1`, `$2`... its words
 * (quotes group words). A prompt that uses neither gets the arguments appended, so none are lost.
 */
export function expandCommand(command: ProjectCommand, args: string): string {
  const words = splitWords(args);
  let used = false;
  const body = command.body.replace(/\$(ARGUMENTS|[1-9][0-9]*)/g, (_, key: string) => {
    used = true;
    return key === 'ARGUMENTS' ? args : (words[Number(key) - 1] ?? '');
  });
  return !used && args !== '' ? `${body}\n\nARGUMENTS: ${args}` : body;
}

/** Words split at spaces; "double" or 'single' quotes keep spaces inside one word. */
export function splitWords(text: string): string[] {
  const words: string[] = [];
  for (const m of text.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)) words.push(m[1] ?? m[2] ?? m[3]);
  return words;
}
