// The session's MCP servers as the CLI finds them: where each is defined, whether it may start,
// and the user's answers about a repository's servers, remembered in the user's config.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { SECRET_ENV_VARS } from '@infinity-code/sandbox/secret-env';
import type { McpServerStatus, StartMcpOptions } from '@infinity-code/mcp';
import {
  describeServer,
  fingerprint,
  McpConfigError,
  parseMcpServers,
  problemText,
  readMcpFile,
  trustOf,
  type McpServerConfig,
  type McpServerEntry,
  type McpSourceKind,
} from '@infinity-code/mcp/config';
import { projectConfigPath, userConfigPath, type Config } from './config.js';
import type { CommandApprovals } from './tui/command-approvals.js';
import { EXIT, UserError } from './exit-codes.js';

/**
 * What AgentSession starts its servers with: it adds the sandbox, the runtime and, in the TUI,
 * the question about a repository's server (headless runs can't ask).
 */
export type McpSessionOptions = Omit<StartMcpOptions, 'sandbox' | 'addTools' | 'askApproval'>;

export interface McpSetupInput {
  root: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  config: Config;
  /** --mcp-config values: files, or JSON text (a value starting with `{`) in the same format. */
  files: readonly string[];
  /** --strict-mcp-config: the --mcp-config servers only. */
  strict?: boolean;
  /** Told of definitions left out (a wrong entry in the repository's .mcp.json). */
  warn: (message: string) => void;
}

/** The CLI's version, told to servers: its package.json is one level up from tsc's output, two from the bundle's chunks. */
function cliVersion(): string {
  for (const rel of ['../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'infinity-code' && pkg.version) return pkg.version;
    } catch {
      // Not here: the other place.
    }
  }
  return '0.0.0';
}

/**
 * Every server of the session, by name, the later definition winning: the user's config, the
 * repository's `.mcp.json`, the project config, then each `--mcp-config` file or JSON string (only
 * those with --strict-mcp-config). What --mcp-config names must be right as a whole (a config
 * error otherwise); a wrong `.mcp.json` only warns.
 */
export function mcpServerEntries(i: McpSetupInput): McpServerEntry[] {
  const byName = new Map<string, McpServerEntry>();
  const add = (servers: Record<string, McpServerConfig>, source: McpSourceKind, file: string) => {
    for (const [name, config] of Object.entries(servers)) {
      byName.delete(name);
      byName.set(name, { name, config, source, file });
    }
  };
  if (!i.strict) add(i.config.mcpServers, 'user-config', userConfigPath(i.env));
  const mcpJson = join(i.root, '.mcp.json');
  if (!i.strict && existsSync(mcpJson)) {
    try {
      const { servers, problems } = readMcpFile(mcpJson, i.env);
      for (const p of problems) i.warn(problemText(mcpJson, p));
      add(servers, 'mcp-json', mcpJson);
    } catch (err) {
      if (!(err instanceof McpConfigError)) throw err;
      i.warn(`${err.message} None of its MCP servers is started.`);
    }
  }
  if (!i.strict) add(i.config.projectMcpServers, 'project-config', projectConfigPath(i.root));
  for (const [n, f] of i.files.entries()) {
    // Claude Code's --mcp-config takes JSON as well as file names: no file name starts with `{`.
    const json = f.trimStart().startsWith('{');
    const file = json ? `--mcp-config (JSON value ${n + 1})` : resolve(i.cwd, f);
    try {
      const { servers, problems } = json ? readMcpJson(f, file, i.env) : readMcpFile(file, i.env);
      const first = problems[0];
      if (first) throw new McpConfigError(`${problemText(file, first)} Fix it, or leave the server out.`);
      add(servers, 'flag', file);
    } catch (err) {
      if (err instanceof McpConfigError) throw new UserError(err.message, EXIT.config);
      throw err;
    }
  }
  return [...byName.values()];
}

/** An --mcp-config value given as JSON text: `{"mcpServers": {...}}`, as a file would hold. */
function readMcpJson(text: string, where: string, env: NodeJS.ProcessEnv): ReturnType<typeof readMcpFile> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new McpConfigError(`${where} is not valid JSON (${(err as Error).message}).`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw) || (raw as { mcpServers?: unknown }).mcpServers === undefined) {
    throw new McpConfigError(`${where} must be {"mcpServers": {"<name>": {"command": ..., "args": [...]}}}.`);
  }
  return parseMcpServers((raw as { mcpServers: unknown }).mcpServers, where, env);
}

/** The options for the session's servers, or undefined when there are none. */
export function mcpSessionOptions(i: McpSetupInput): McpSessionOptions | undefined {
  const servers = mcpServerEntries(i);
  if (servers.length === 0) return undefined;
  const decisions = i.config.mcpProjectServers[i.root];
  const userFile = userConfigPath(i.env);
  // Servers run with the environment commands get, minus the user's secrets (config secretEnv).
  const env: Record<string, string | undefined> = {};
  for (const name of [...SECRET_ENV_VARS, ...i.config.secretEnv]) env[name] = undefined;
  return {
    servers,
    trust: (entry) => trustOf(entry, decisions),
    approvalHint: (entry) =>
      `to allow it, answer its question in the terminal UI, pass --mcp-config ${entry.file}, or set ` +
      `{"mcpProjectServers": {${JSON.stringify(i.root)}: {${JSON.stringify(entry.name)}: {"allow": true}}}} in ${userFile}`,
    toolTimeoutMs: i.config.mcpToolTimeoutMs,
    startTimeoutMs: i.config.mcpStartupTimeoutMs,
    timeoutHelp: `The user can raise the limit with "mcpToolTimeoutMs": <milliseconds> in ${userFile}.`,
    env,
    clientVersion: cliVersion(),
  };
}

/**
 * Remembers the user's answer about a repository's server in the user's config (this definition
 * only: a changed one is asked again), keeping everything else in the file as it was.
 */
export function rememberMcpDecision(env: NodeJS.ProcessEnv, root: string, entry: McpServerEntry, allow: boolean): void {
  const file = userConfigPath(env);
  let raw: Record<string, unknown> = {};
  if (existsSync(file)) {
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error(`${file} does not hold a JSON object`);
    raw = parsed as Record<string, unknown>;
  }
  const all = (typeof raw.mcpProjectServers === 'object' && raw.mcpProjectServers !== null ? raw.mcpProjectServers : {}) as Record<
    string,
    Record<string, unknown>
  >;
  all[root] = { ...all[root], [entry.name]: { allow, fingerprint: fingerprint(entry.config) } };
  raw.mcpProjectServers = all;
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(raw, null, 2)}\n`);
  renameSync(tmp, file);
}

/**
 * Asks through the TUI's approvals whether a repository's server may start, and remembers the
 * answer in the user's config. A question withdrawn (the session closed) is no answer.
 */
export function approvalAsker(o: {
  approvals: Pick<CommandApprovals, 'ask'>;
  /** The root thread, which the question is shown for. */
  threadId: string;
  env: NodeJS.ProcessEnv;
  root: string;
  /** Told when the answer can't be written (the user config is not JSON, say). */
  onRememberFailed?: (message: string) => void;
}): (entry: McpServerEntry, signal: AbortSignal) => Promise<boolean> {
  return async (entry, signal) => {
    const server = { name: entry.name, file: entry.file, transport: entry.config.type };
    const yes = await o.approvals.ask({ threadId: o.threadId, command: describeServer(entry.config), kind: 'mcp-server', server }, signal);
    if (signal.aborted) return false;
    try {
      rememberMcpDecision(o.env, o.root, entry, yes);
    } catch (err) {
      o.onRememberFailed?.(`Your answer about MCP server "${entry.name}" could not be saved (${(err as Error).message}); it holds for this session.`);
    }
    return yes;
  };
}

/** A server's change as one line of headless progress, or undefined when it isn't worth one. */
export function mcpProgressLine(s: McpServerStatus): string | undefined {
  const name = `MCP server "${s.name}"`;
  switch (s.state) {
    case 'ready':
      return `${name} is ready: ${s.tools.length} ${s.tools.length === 1 ? 'tool' : 'tools'}${s.restarts > 0 ? ` (${s.message ?? 'restarted'})` : ''}.`;
    case 'restarting':
      return `${name} is restarting: ${s.message ?? 'it stopped'}.`;
    case 'failed':
      return `${name} failed: ${s.message ?? 'it stopped'}`;
    case 'not-approved':
    case 'declined':
      return `${name} (${s.file}) is not started: ${s.message ?? 'not approved'}.`;
    default:
      return undefined;
  }
}
