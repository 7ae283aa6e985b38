// Claude Code's tool permission flags (--allowedTools, --disallowedTools, --permission-mode) as
// decisions on our tools. Pure: the runtime asks `withheld` of every tool it would offer and
// `decide` of every call it would run (SystemOptions.withhold and .permit).
//
// What is honoured:
// - Names: ours (read_file, execute_command, ...), Claude Code's (mapped below; those we have no
//   counterpart of, such as WebFetch, are accepted and change nothing), `mcp__server__tool`, and
//   `mcp__server` for every tool of that server. Several rules may share one argument,
//   separated by commas or spaces outside parentheses.
// - --disallowedTools NAME: the tool is not offered to the model at all. NAME(spec): the tool
//   stays; its calls that match are denied.
// - --allowedTools, when given: tools that change things (create_file, edit_file,
//   execute_command, spawn_thread, MCP tools, any tool not listed as read-only below) run only
//   when a rule allows the call. Reads (read_file, grep, list_files) and the threads' own
//   coordination (sleep, report_to_parent, ...) always run, as reads need no permission in
//   Claude Code. Without --allowedTools every tool runs: the sandbox is our permission model.
// - Bash/execute_command specs: `Bash(npm run test)` is that exact command, `Bash(git diff:*)` (or
//   `Bash(git diff *)`) the command and the command with arguments, `*` elsewhere any text. To be
//   allowed by a spec, every part of a compound command (`a && b; c | d`) must be allowed, and
//   a command substitution or output redirection to a file is allowed only by a bare `Bash`.
//   A deny spec is matched against every part, after leading `VAR=x` assignments and wrappers
//   (sudo, env, timeout, xargs, `sh -c`, eval...); it is best-effort against a model rephrasing
//   a command (`find -delete` for `rm`): the sandbox, not the pattern, is what contains commands.
// - Path specs (`Edit(src/**)`, `Read(secrets/**)`): a glob over the path argument of file tools
//   (read_file, create_file, edit_file; grep and list_files for Read, Grep, Glob, LS), relative
//   to where the user started us; `/p` is from the repository root, `//p` an absolute path, `~/p`
//   under the home. Coarse: a search of a directory is judged by that directory, not by every
//   file it reaches, and commands are not judged by the paths they touch.
// - --permission-mode plan: read-only. create_file, edit_file and spawn_thread are denied, and
//   MCP tools unless --allowedTools names them (they act outside the sandbox); commands still
//   run in the sandbox, whose changes the CLI never applies nor saves in this mode.
//   acceptEdits: file edits need no rule (commands still do, under --allowedTools);
//   bypassPermissions: --allowedTools restricts nothing. --disallowedTools holds in every mode.
import path from 'node:path';
import type { ToolCall } from '@infinity-code/runtime';
import { EXIT, UserError } from './exit-codes.js';
import type { SessionExtras } from './session-setup.js';

export type PermissionMode = NonNullable<SessionExtras['permissionMode']>;
type Flag = '--allowedTools' | '--disallowedTools';

/** Claude Code's tool names, as the tools of ours that do the same job (none: we have no such tool). */
export const CLAUDE_CODE_TOOLS: Readonly<Record<string, readonly string[]>> = {
  Read: ['read_file'],
  // Claude Code's Edit rules cover every tool that edits files.
  Edit: ['edit_file', 'create_file'],
  MultiEdit: ['edit_file'],
  Write: ['create_file'],
  Glob: ['list_files'],
  LS: ['list_files'],
  Grep: ['grep'],
  Bash: ['execute_command'],
  Task: ['spawn_thread'],
  Agent: ['spawn_thread'],
  KillShell: ['cancel_subscription'],
  BashOutput: [],
  NotebookEdit: [],
  NotebookRead: [],
  WebFetch: [],
  WebSearch: [],
  TodoWrite: [],
  TodoRead: [],
  ExitPlanMode: [],
  SlashCommand: [],
};

/**
 * Tools that only read, or coordinate the session's own threads: they run whatever
 * --allowedTools says (a child exists only if spawn_thread was allowed).
 */
const ALWAYS_ALLOWED: ReadonlySet<string> = new Set([
  'read_file',
  'grep',
  'list_files',
  'report_to_parent',
  'close_thread',
  'send_message_to_child',
  'cancel_subscription',
  'sleep',
  'sleep_until',
  'sleep_until_event_or_input',
]);
const FILE_WRITERS: ReadonlySet<string> = new Set(['create_file', 'edit_file']);
/** Denied in plan mode whatever --allowedTools says. */
const PLAN_DENIED: ReadonlySet<string> = new Set(['create_file', 'edit_file', 'spawn_thread']);
/** Which of our tools a path spec judges, by the input property holding the path. */
const PATH_TOOLS: Readonly<Record<string, string>> = { read_file: 'path', create_file: 'path', edit_file: 'path', grep: 'path', list_files: 'path' };
/** Claude Code's Read rules govern its searches too (Grep, Glob). */
const READ_RULE_TOOLS = ['read_file', 'grep', 'list_files'];

type Target = { kind: 'tool'; name: string } | { kind: 'server'; prefix: string };

export interface ToolRule {
  /** The rule as the user wrote it. */
  text: string;
  /** The tools it names; empty when we have none that does that job. */
  targets: readonly Target[];
  /** What it asks of a call, beyond the tool: undefined for every call. */
  spec?:
    | { kind: 'command'; text: string }
    | { kind: 'path'; text: string; match: RegExp }
    /** One we can't judge (`Task(Explore)`): allows no call, denies every call of the tool. */
    | { kind: 'opaque'; text: string };
}

export type Decision = { allowed: true } | { allowed: false; reason: string };

export interface ToolPermissions {
  /** False when no flag restricts anything: the session then needs no check at all. */
  readonly active: boolean;
  /** The tool is not offered (--disallowedTools naming it whole). */
  withheld(name: string): boolean;
  /** Whether this call may run, and if not why, in words the model can act on. */
  decide(call: Pick<ToolCall, 'name' | 'input'>): Decision;
  /**
   * Rules naming only tools we don't have (WebFetch...), accepted without effect, and rules with a
   * specifier we can't judge (allowing no call, denying every one): for a note to the user.
   */
  readonly ignored: readonly string[];
}

export interface PermissionPlaces {
  /** The repository root: tool paths are relative to it. */
  root: string;
  /** Where the user started us: relative path specs are from here. */
  cwd: string;
  home?: string;
}

/** Splits flag values into rules: commas and spaces separate them, except inside parentheses. */
export function splitRules(values: readonly string[], flag: Flag): string[] {
  const out: string[] = [];
  for (const value of values) {
    let depth = 0;
    let current = '';
    for (const ch of value) {
      if (ch === '(') depth++;
      if (ch === ')') depth--;
      if (depth < 0) throw ruleError(flag, value, 'has a ")" without its "("');
      if (depth === 0 && (ch === ',' || /\s/.test(ch))) {
        if (current !== '') out.push(current);
        current = '';
        continue;
      }
      current += ch;
    }
    if (depth !== 0) throw ruleError(flag, value, 'has a "(" without its ")"');
    if (current !== '') out.push(current);
  }
  return out;
}

/** Parses one flag's values; a malformed rule is a usage error naming it. */
export function parseToolRules(values: readonly string[], flag: Flag, places: PermissionPlaces): ToolRule[] {
  return splitRules(values, flag).map((text) => parseRule(text, flag, places));
}

function parseRule(text: string, flag: Flag, places: PermissionPlaces): ToolRule {
  const m = /^([A-Za-z0-9_.-]+)(?:\(([\s\S]*)\))?$/.exec(text);
  if (!m) {
    throw ruleError(flag, text, 'is not a tool name or Name(specifier)');
  }
  const name = m[1];
  const spec = m[2]?.trim();
  const mcp = name.startsWith('mcp__');
  let targets: Target[];
  if (mcp) {
    // Server and tool names are cleaned as the MCP package names tools (see modelToolName).
    const clean = name.replace(/[^A-Za-z0-9_-]/g, '_');
    targets = clean.slice('mcp__'.length).includes('__') ? [{ kind: 'tool', name: clean }] : [{ kind: 'server', prefix: `${clean}__` }];
  } else {
    targets = (CLAUDE_CODE_TOOLS[name] ?? [name]).map((n) => ({ kind: 'tool' as const, name: n }));
  }
  if (spec === undefined || spec === '' || spec === '*') return { text, targets };
  if (mcp) throw ruleError(flag, text, 'gives an MCP tool a specifier, which MCP rules do not take (name the tool or the server alone)');
  const names = targets.map((t) => (t.kind === 'tool' ? t.name : ''));
  if (names.includes('execute_command')) return { text, targets, spec: { kind: 'command', text: spec } };
  if (names.some((n) => n in PATH_TOOLS)) {
    // A Read rule judges the searches too.
    const all = name === 'Read' ? READ_RULE_TOOLS.map((n) => ({ kind: 'tool' as const, name: n })) : targets;
    return { text, targets: all, spec: { kind: 'path', text: spec, match: pathPattern(spec, places) } };
  }
  // A tool we have no counterpart of (WebFetch(domain:x)): nothing to judge.
  if (targets.length === 0) return { text, targets };
  // Nothing in our calls to match it against (Task(Explore)): read the narrow way either side.
  return { text, targets, spec: { kind: 'opaque', text: spec } };
}

function ruleError(flag: Flag, rule: string, why: string): UserError {
  return new UserError(
    `${flag}: the rule "${rule}" ${why}. Write rules as Tool or Tool(specifier), e.g. Read, Edit, ` +
      '"Bash(git diff:*)", "Edit(src/**)", mcp__server or mcp__server__tool; separate them with commas or spaces.',
    EXIT.usage,
  );
}

/** The flags of a session (see SessionExtras) as decisions; throws UserError for a malformed rule. */
export function toolPermissions(extras: SessionExtras, places: PermissionPlaces): ToolPermissions {
  const mode: PermissionMode = extras.permissionMode ?? 'default';
  const allow = extras.allowedTools === undefined ? undefined : parseToolRules(extras.allowedTools, '--allowedTools', places);
  const deny = parseToolRules(extras.disallowedTools ?? [], '--disallowedTools', places);
  const ignored = [...(allow ?? []), ...deny].filter((r) => r.targets.length === 0 || r.spec?.kind === 'opaque').map((r) => r.text);
  // An allow list restricts unless every prompt is bypassed; an empty one (`--allowedTools ""`)
  // allows nothing beyond reads.
  const restricting = allow !== undefined && mode !== 'bypassPermissions';
  const hidden = deny.filter((r) => r.spec === undefined);
  const denyCalls = deny.filter((r) => r.spec !== undefined);
  const active = restricting || deny.length > 0 || mode === 'plan';
  const allowText = allow === undefined ? '' : allow.map((r) => r.text).join(' ');

  const decide = (call: Pick<ToolCall, 'name' | 'input'>): Decision => {
    for (const rule of denyCalls) {
      if (!names(rule, call.name)) continue;
      if (matchesDeny(rule, call, places)) {
        return denied(`${describe(call)} is not permitted: --disallowedTools "${rule.text}" forbids it. It was not run; do the task without it.`);
      }
    }
    const allowedByRule = allow !== undefined && allowedBy(allow, call, places);
    if (mode === 'plan') {
      if (PLAN_DENIED.has(call.name)) {
        return denied(
          `${describe(call)} is not permitted: the session runs with --permission-mode plan, which is read-only ` +
            '(no file edits, no child threads). Nothing was changed. Investigate with reads and commands, then present your plan.',
        );
      }
      if (isMcp(call.name) && !allowedByRule) {
        return denied(
          `${call.name} is not permitted: the session runs with --permission-mode plan, which is read-only, and MCP tools ` +
            `act outside the sandbox; --allowedTools would have to name it. It was not run.`,
        );
      }
    }
    if (!restricting || ALWAYS_ALLOWED.has(call.name) || allowedByRule) return { allowed: true };
    if (mode === 'acceptEdits' && FILE_WRITERS.has(call.name)) return { allowed: true };
    return denied(
      `${describe(call)} is not permitted: the session runs with --allowedTools ${allowText === '' ? '""' : JSON.stringify(allowText)}, ` +
        `which does not allow it. It was not run. Use the tools that are allowed (reads always are), or tell the user ` +
        `which permission the task needs (for example --allowedTools ${JSON.stringify(suggestion(call))}).`,
    );
  };
  return {
    active,
    ignored,
    withheld: (name) => hidden.some((r) => names(r, name)),
    decide,
  };
}

function denied(reason: string): Decision {
  return { allowed: false, reason: `Permission denied: ${reason}` };
}

function names(rule: ToolRule, tool: string): boolean {
  return rule.targets.some((t) => (t.kind === 'tool' ? t.name === tool : tool.startsWith(t.prefix)));
}

function isMcp(name: string): boolean {
  return name.startsWith('mcp__');
}

/** The call in a few words: the tool, and its command or path. */
function describe(call: Pick<ToolCall, 'name' | 'input'>): string {
  const command = call.input.command;
  if (call.name === 'execute_command' && typeof command === 'string') return `execute_command (${clip(command)})`;
  const p = call.input.path;
  if (call.name in PATH_TOOLS && typeof p === 'string') return `${call.name} (${clip(p)})`;
  return call.name;
}

function clip(s: string): string {
  const line = s.split('\n')[0];
  return line.length > 80 || s.includes('\n') ? `${line.slice(0, 77)}...` : line;
}

/** The rule that would allow a call like this one, in Claude Code's words. */
function suggestion(call: Pick<ToolCall, 'name' | 'input'>): string {
  if (call.name === 'execute_command') {
    const first = typeof call.input.command === 'string' ? call.input.command.trim().split(/\s+/)[0] : undefined;
    return first ? `Bash(${first}:*)` : 'Bash';
  }
  const claude = Object.entries(CLAUDE_CODE_TOOLS).find(([, ours]) => ours.length === 1 && ours[0] === call.name)?.[0];
  return claude ?? call.name;
}

/** Whether the allow rules let this call run: one rule allows it, or (commands) each part has a rule. */
function allowedBy(rules: readonly ToolRule[], call: Pick<ToolCall, 'name' | 'input'>, places: PermissionPlaces): boolean {
  const mine = rules.filter((r) => names(r, call.name));
  if (mine.some((r) => r.spec === undefined)) return true;
  const abs = callPath(call, places);
  if (abs !== undefined && mine.some((r) => r.spec?.kind === 'path' && r.spec.match.test(abs))) return true;
  const command = call.input.command;
  const specs = mine.flatMap((r) => (r.spec?.kind === 'command' ? [r.spec.text] : []));
  return specs.length > 0 && typeof command === 'string' && commandAllowed(specs, command);
}

function matchesDeny(rule: ToolRule, call: Pick<ToolCall, 'name' | 'input'>, places: PermissionPlaces): boolean {
  const spec = rule.spec;
  if (!spec || spec.kind === 'opaque') return true;
  if (spec.kind === 'command') {
    const command = call.input.command;
    return typeof command === 'string' && commandDenied(spec.text, command);
  }
  const abs = callPath(call, places);
  return abs !== undefined && spec.match.test(abs);
}

/** The absolute path a file tool's call names (its default, the root, for searches without one). */
function callPath(call: Pick<ToolCall, 'name' | 'input'>, places: PermissionPlaces): string | undefined {
  const key = PATH_TOOLS[call.name];
  if (key === undefined) return undefined;
  const raw = call.input[key];
  const p = raw === undefined || raw === null || raw === '' ? '.' : raw;
  if (typeof p !== 'string') return undefined;
  return path.posix.resolve(places.root, p.replace(/\\/g, '/'));
}

// --- Commands ---

/** A spec as a test of one simple command: exact, prefix (`:*` or a trailing ` *`), or a wildcard. */
function commandMatcher(spec: string): (command: string) => boolean {
  const prefix = spec.endsWith(':*') ? spec.slice(0, -2) : spec.endsWith(' *') ? spec.slice(0, -2) : undefined;
  if (prefix !== undefined && !prefix.includes('*')) {
    const p = prefix.trim();
    return (c) => c === p || (c.startsWith(p) && /\s/.test(c[p.length] ?? ''));
  }
  if (!spec.includes('*')) return (c) => c === spec;
  const re = new RegExp(`^${spec.split('*').map(escapeRegExp).join('[\\s\\S]*')}$`);
  return (c) => re.test(c);
}

/** Control operators that join simple commands; their parts are judged one by one. */
const SEPARATORS = /\|\||&&|;|\||&|\n/;
/** Text in which a command runs another that a spec cannot see, or writes a file of its choice. */
const OPAQUE = /`|\$\(|<\(|>\(/;

/** Each part of a compound command, trimmed. */
function parts(command: string): string[] {
  return command
    .split(SEPARATORS)
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** Redirections that write no file of the command's choice: stripped before an allow spec is matched. */
function withoutHarmlessRedirects(part: string): string {
  return part
    .replace(/\s*\d*>&\d+/g, '')
    .replace(/\s*(?:\d*|&)>>?\s*\/dev\/null/g, '')
    .trim();
}

/** Every part must be allowed by one of `specs`, and none may hide a command or write a file by redirection. */
export function commandAllowed(specs: readonly string[], command: string): boolean {
  if (OPAQUE.test(command)) return false;
  const matchers = specs.map(commandMatcher);
  // `2>&1` would split at its `&`: the redirections go first.
  const list = parts(withoutHarmlessRedirects(command.trim()));
  return list.length > 0 && list.every((p) => !/>/.test(p) && matchers.some((match) => match(p)));
}

/** Prefixes that run the command after them: a deny spec looks past them. */
const WRAPPERS = /^(?:sudo(?:\s+-\S+)*|env(?:\s+-\S+)*|command|exec|nohup|nice(?:\s+-n\s*\S+|\s+-\S+)*|time|timeout(?:\s+-\S+)*\s+\S+|xargs(?:\s+-\S+)*|eval|(?:ba|z|da|k)?sh\s+-c)\s+/;

/** Any part (and the text inside substitutions and `sh -c '...'`) that the spec matches. */
export function commandDenied(spec: string, command: string): boolean {
  const match = commandMatcher(spec);
  // Substitutions and quoted scripts are split open: their commands are parts too.
  const opened = command.replace(/\$\(|<\(|>\(|[`(){}]/g, ';').replace(/['"]/g, ' ');
  for (const raw of parts(opened)) {
    let p = raw.replace(/\s+/g, ' ');
    for (;;) {
      if (match(p) || match(p.replace(/\s*\d*>.*$/, '').trim())) return true;
      // Assignments, a wrapper, or the directory of the program (`/bin/rm`) go, one at a time.
      const next = p.replace(/^(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)+/, '').replace(WRAPPERS, '').replace(/^[^\s/]*\/(?:[^\s/]*\/)*/, '');
      if (next === p) break;
      p = next;
    }
  }
  return false;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// --- Paths ---

/** A path spec as a test of absolute paths: a glob, or a path and everything under it. */
function pathPattern(spec: string, places: PermissionPlaces): RegExp {
  let base: string;
  let rest: string;
  if (spec.startsWith('//')) {
    base = '/';
    rest = spec.slice(2);
  } else if (spec.startsWith('~/')) {
    base = places.home ?? '/nonexistent-home';
    rest = spec.slice(2);
  } else if (spec.startsWith('/')) {
    base = places.root;
    rest = spec.slice(1);
  } else {
    base = places.cwd;
    rest = spec;
  }
  const full = path.posix.join(base, rest.replace(/^\.\//, ''));
  const glob = full.replace(/\/+$/, '') || '/';
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i];
    if (ch === '*' && glob[i + 1] === '*') {
      // `**/` is any number of directories (none too); `**` at the end anything below.
      if (glob[i + 2] === '/') {
        re += '(?:[^/]+/)*';
        i += 2;
      } else {
        re += '.*';
        i += 1;
      }
    } else if (ch === '*') re += '[^/]*';
    else if (ch === '?') re += '[^/]';
    else re += escapeRegExp(ch);
  }
  // A path without wildcards names a file, or a directory and everything under it.
  return new RegExp(/[*?]/.test(glob) ? `^${re}$` : `^${re}(?:/.*)?$`);
}
