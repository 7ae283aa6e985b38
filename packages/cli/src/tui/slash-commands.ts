// Slash commands: parsing and Tab completion, pure. What a command does is the App's business.
// The project's own commands (project-commands.ts) are passed in; a built-in wins a name both have.
import type { ProjectCommand, ProjectCommands } from '../project-commands.js';

export type SlashCommand =
  | { name: 'help' }
  | { name: 'quit' }
  | { name: 'new' }
  | { name: 'sessions' }
  | { name: 'model'; id?: string }
  | { name: 'effort'; level?: string }
  | { name: 'notes' }
  | { name: 'cost' }
  | { name: 'stop' }
  | { name: 'bg' }
  | { name: 'diff' }
  | { name: 'compact' }
  | { name: 'refresh' }
  | { name: 'mcp' };

export type SlashName = SlashCommand['name'];

export const COMMANDS: ReadonlyArray<{ name: SlashName; args?: string; help: string }> = [
  { name: 'help', help: 'show the commands and keys' },
  { name: 'quit', help: 'leave (the session is kept; resume it with -c)' },
  { name: 'new', help: 'start a new session' },
  { name: 'sessions', help: 'list the sessions of this repository' },
  { name: 'model', args: '[alias|id]', help: 'show the models, or switch (opus, sonnet, haiku, fable or an id)' },
  { name: 'effort', args: '[level]', help: 'show or set how hard the model works (low, medium, high, xhigh, max, default)' },
  { name: 'notes', help: "fold or unfold the model's progress notes (its thinking between tool calls)" },
  { name: 'cost', help: 'tokens and estimated cost per thread and model' },
  { name: 'stop', help: 'stop what the agent is doing now, and its commands in the background' },
  { name: 'bg', help: 'list the commands running in the background' },
  { name: 'diff', help: "review the session's changes and apply them to your working tree" },
  { name: 'compact', help: 'summarise the conversation to free context' },
  { name: 'refresh', help: 'let the agent see the files you edited since the session began' },
  { name: 'mcp', help: 'list the MCP servers with their state and tools' },
];

const ALIASES: Readonly<Record<string, SlashName>> = { exit: 'quit', q: 'quit', clear: 'new', '?': 'help' };

export type ParseResult =
  | { kind: 'command'; command: SlashCommand }
  /** A project command, with the text after its name. */
  | { kind: 'project'; name: string; args: string }
  | { kind: 'error'; message: string }
  /** Not a command: send it as a message. */
  | { kind: 'text' };

/** What the slash layer needs of a project command. */
export type ProjectCommandInfo = Pick<ProjectCommand, 'name' | 'description' | 'argumentHint' | 'file'>;

function isBuiltIn(name: string): boolean {
  return COMMANDS.some((c) => c.name === name) || name in ALIASES;
}

export function parseSlash(input: string, project: readonly ProjectCommandInfo[] = []): ParseResult {
  const text = input.trim();
  // "//foo" sends "/foo" literally, and a path such as "/etc/hosts is odd" isn't a command.
  if (!text.startsWith('/') || text.startsWith('//')) return { kind: 'text' };
  const [head = '', ...rest] = text.slice(1).split(/\s+/);
  if (head.includes('/')) return { kind: 'text' };
  const name = (COMMANDS.find((c) => c.name === head)?.name ?? ALIASES[head]) as SlashName | undefined;
  if (!name) {
    if (project.some((c) => c.name === head)) return { kind: 'project', name: head, args: text.slice(1 + head.length).trim() };
    const near = complete(`/${head}`, project).candidates;
    const hint = near.length > 0 ? ` Did you mean ${near.map((c) => `/${c}`).join(' or ')}?` : '';
    return { kind: 'error', message: `Unknown command /${head}.${hint} Type /help for the list.` };
  }
  const arg = rest.join(' ').trim();
  if (name === 'model') return { kind: 'command', command: arg ? { name, id: arg } : { name } };
  if (name === 'effort') return { kind: 'command', command: arg ? { name, level: arg } : { name } };
  if (arg) return { kind: 'error', message: `/${name} takes no arguments.` };
  return { kind: 'command', command: { name } as SlashCommand };
}

/** The line a Tab press turns `input` into, and the commands (built-in, then the project's) it could still become. */
export function complete(input: string, project: readonly ProjectCommandInfo[] = []): { value: string; candidates: string[] } {
  if (!/^\/[\w.:-]*$/.test(input)) return { value: input, candidates: [] };
  const prefix = input.slice(1);
  const names = [...COMMANDS.map((c) => c.name as string), ...project.map((c) => c.name).filter((n) => !isBuiltIn(n))];
  const candidates = names.filter((n) => n.startsWith(prefix));
  if (candidates.length === 1) return { value: `/${candidates[0]} `, candidates };
  if (candidates.length === 0) return { value: input, candidates };
  // Several: extend to their common prefix, as shells do.
  let common: string = candidates[0];
  for (const c of candidates) while (!c.startsWith(common)) common = common.slice(0, -1);
  return { value: `/${common}`, candidates };
}

/** The commands (the project's too, with where each comes from), what is wrong with its command files, and the keys. */
export function helpText(project: Pick<ProjectCommands, 'problems'> & { commands: readonly ProjectCommandInfo[] } = { commands: [], problems: [] }): string {
  const usable = project.commands.filter((c) => !isBuiltIn(c.name));
  const shadowed = project.commands.filter((c) => isBuiltIn(c.name));
  const rows = [
    ...COMMANDS.map((c) => ({ usage: `/${c.name}${c.args ? ` ${c.args}` : ''}`, help: c.help })),
    ...usable.map((c) => ({
      usage: `/${c.name}${c.argumentHint ? ` ${c.argumentHint}` : ''}`,
      help: `${c.description ?? 'project command'} (${folderOf(c.file)})`,
    })),
  ];
  const width = Math.max(...rows.map((r) => r.usage.length));
  const line = (r: { usage: string; help: string }) => `  ${r.usage.padEnd(width)}  ${r.help}`;
  const projectPart =
    usable.length + shadowed.length + project.problems.length === 0
      ? ['Project commands: none (Markdown prompts in .infinity/commands/ or .claude/commands/ become /name)']
      : [
          'Project commands:',
          ...(usable.length > 0 ? rows.slice(COMMANDS.length).map(line) : ['  none usable']),
          ...shadowed.map((c) => `  ${c.file} is not used: /${c.name} is a built-in command.`),
          ...project.problems.map((p) => `  ${p.message}`),
        ];
  return [
    'Commands:',
    ...rows.slice(0, COMMANDS.length).map(line),
    ...projectPart,
    'Keys:',
    '  Enter send · Shift+Enter, Alt+Enter or a trailing \\ new line · ↑/↓ history · Tab complete',
    '  @path attaches a file (Tab completes it) · Esc closes a /diff review',
    '  Esc or Ctrl+C stop the agent, and pressed again its commands in the background',
    '  Ctrl+C twice or Ctrl+D quit (asking first what becomes of changes not in your working tree)',
  ].join('\n');
}

/** `.claude/commands/frontend/build.md` → `.claude/commands`. */
function folderOf(file: string): string {
  return file.split('/').slice(0, 2).join('/');
}
