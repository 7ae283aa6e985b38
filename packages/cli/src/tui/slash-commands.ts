// Slash commands: parsing and Tab completion, pure. What a command does is the App's business.

export type SlashCommand =
  | { name: 'help' }
  | { name: 'quit' }
  | { name: 'new' }
  | { name: 'sessions' }
  | { name: 'model'; id?: string }
  | { name: 'cost' }
  | { name: 'stop' }
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
  { name: 'model', args: '[id]', help: 'show or switch the model' },
  { name: 'cost', help: 'tokens and estimated cost per thread and model' },
  { name: 'stop', help: 'stop what the agent is doing now' },
  { name: 'diff', help: "review the session's changes and apply them to your working tree" },
  { name: 'compact', help: 'summarise the conversation to free context' },
  { name: 'refresh', help: 'let the agent see the files you edited since the session began' },
  { name: 'mcp', help: 'list the MCP servers with their state and tools' },
];

const ALIASES: Readonly<Record<string, SlashName>> = { exit: 'quit', q: 'quit', clear: 'new', '?': 'help' };

export type ParseResult =
  | { kind: 'command'; command: SlashCommand }
  | { kind: 'error'; message: string }
  /** Not a command: send it as a message. */
  | { kind: 'text' };

export function parseSlash(input: string): ParseResult {
  const text = input.trim();
  // "//foo" sends "/foo" literally, and a path such as "/etc/hosts is odd" isn't a command.
  if (!text.startsWith('/') || text.startsWith('//')) return { kind: 'text' };
  const [head = '', ...rest] = text.slice(1).split(/\s+/);
  if (head.includes('/')) return { kind: 'text' };
  const name = (COMMANDS.find((c) => c.name === head)?.name ?? ALIASES[head]) as SlashName | undefined;
  if (!name) {
    const near = complete(`/${head}`).candidates;
    const hint = near.length > 0 ? ` Did you mean ${near.map((c) => `/${c}`).join(' or ')}?` : '';
    return { kind: 'error', message: `Unknown command /${head}.${hint} Type /help for the list.` };
  }
  const arg = rest.join(' ').trim();
  if (name === 'model') return { kind: 'command', command: arg ? { name, id: arg } : { name } };
  if (arg) return { kind: 'error', message: `/${name} takes no arguments.` };
  return { kind: 'command', command: { name } as SlashCommand };
}

/** The line a Tab press turns `input` into, and the commands it could still become. */
export function complete(input: string): { value: string; candidates: SlashName[] } {
  if (!/^\/[a-z]*$/.test(input)) return { value: input, candidates: [] };
  const prefix = input.slice(1);
  const candidates = COMMANDS.map((c) => c.name).filter((n) => n.startsWith(prefix));
  if (candidates.length === 1) return { value: `/${candidates[0]} `, candidates };
  if (candidates.length === 0) return { value: input, candidates };
  // Several: extend to their common prefix, as shells do.
  let common: string = candidates[0];
  for (const c of candidates) while (!c.startsWith(common)) common = common.slice(0, -1);
  return { value: `/${common}`, candidates };
}

export function helpText(): string {
  const width = Math.max(...COMMANDS.map((c) => `/${c.name}${c.args ? ` ${c.args}` : ''}`.length));
  const lines = COMMANDS.map((c) => `  ${`/${c.name}${c.args ? ` ${c.args}` : ''}`.padEnd(width)}  ${c.help}`);
  return [
    'Commands:',
    ...lines,
    'Keys:',
    '  Enter send · Shift+Enter, Alt+Enter or a trailing \\ new line · ↑/↓ history · Tab complete',
    '  Esc or Ctrl+C stop the agent · Ctrl+C twice quit',
  ].join('\n');
}
