// MCP server definitions in Claude Code's `.mcp.json` format, parsed and checked. No SDK here:
// the CLI reads its config files with this before anything starts (subpath `@infinity-code/mcp/config`).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { shellWord } from '@infinity-code/sandbox/shell-word';

/**
 * A server the agent talks to: a program started over stdio, or a streamable HTTP endpoint. A
 * stdio server has the network commands have unless `network` (`"network": "on"`) gives it the
 * machine's.
 */
export type McpServerConfig =
  | { type: 'stdio'; command: string; args: string[]; env: Record<string, string>; network?: true }
  | { type: 'http'; url: string; headers: Record<string, string> };

/** Where a server was defined: it decides whether it may start without asking (see trust.ts). */
export type McpSourceKind = 'user-config' | 'project-config' | 'mcp-json' | 'flag';

export interface McpServerEntry {
  name: string;
  config: McpServerConfig;
  source: McpSourceKind;
  /** The file it came from, for messages. */
  file: string;
}

/** A definition file the user named (--mcp-config) is unreadable or wrong as a whole. */
export class McpConfigError extends Error {
  override readonly name = 'McpConfigError';
}

export interface ParsedServers {
  servers: Record<string, McpServerConfig>;
  /** Entries left out, each with what is wrong with it (the others are usable). */
  problems: Array<{ server: string; problem: string }>;
}

/** A problem as a sentence: `<where>: MCP server "<name>" is left out: <problem>.` */
export function problemText(where: string, p: { server: string; problem: string }): string {
  return `${where}: MCP server "${p.server}" is left out: ${p.problem}.`;
}

/** A server name: it becomes part of tool names (`mcp__<name>__<tool>`). */
export const SERVER_NAME = /^[A-Za-z0-9_-]{1,40}$/;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The `mcpServers` object of a `.mcp.json` or config file: `{"name": {"command", "args", "env"}}`
 * (stdio; `"type": "stdio"` optional) or `{"name": {"type": "http", "url", "headers"}}`.
 * `${VAR}` and `${VAR:-default}` in the command, arguments, environment values, URL and header
 * values are replaced from `env`. Keys this client doesn't use are ignored, as Claude Code
 * files may carry more. `where` names the place in messages about the whole.
 */
export function parseMcpServers(value: unknown, where: string, env: NodeJS.ProcessEnv): ParsedServers {
  if (!isRecord(value)) {
    throw new McpConfigError(`${where}: "mcpServers" must be an object of servers by name, like {"files": {"command": "npx", "args": ["my-server"]}}.`);
  }
  const servers: Record<string, McpServerConfig> = {};
  const problems: ParsedServers['problems'] = [];
  for (const [name, raw] of Object.entries(value)) {
    try {
      if (!SERVER_NAME.test(name)) throw new Error('its name must be 1 to 40 letters, digits, "_" or "-" (it becomes part of the tool names)');
      servers[name] = parseServer(raw, env);
    } catch (err) {
      problems.push({ server: name, problem: (err as Error).message });
    }
  }
  return { servers, problems };
}

function parseServer(raw: unknown, env: NodeJS.ProcessEnv): McpServerConfig {
  if (!isRecord(raw)) throw new Error('its definition must be an object');
  const type = raw.type ?? (raw.url !== undefined && raw.command === undefined ? 'http' : 'stdio');
  const expand = (s: string, what: string) => expandVars(s, env, what);
  if (type === 'stdio') {
    if (typeof raw.command !== 'string' || raw.command.trim() === '') throw new Error('"command" must be a non-empty string');
    const args = raw.args ?? [];
    if (!Array.isArray(args) || args.some((a) => typeof a !== 'string')) throw new Error('"args" must be a list of strings');
    // Not a Claude Code key (it ignores what it doesn't know, so the file still works there).
    if (raw.network !== undefined && raw.network !== 'on') {
      throw new Error(`"network" must be "on" (the machine's network), not ${JSON.stringify(raw.network)}; without it the server has the network commands have`);
    }
    return {
      type: 'stdio',
      command: expand(raw.command, 'command'),
      args: (args as string[]).map((a) => expand(a, 'args')),
      env: stringMap(raw.env, '"env"', expand),
      ...(raw.network === 'on' ? { network: true as const } : {}),
    };
  }
  if (type === 'http' || type === 'streamable-http') {
    if (typeof raw.url !== 'string') throw new Error('"url" must be a string');
    const url = expand(raw.url, 'url');
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new Error(`"url" is not a URL: ${url}`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(`"url" must be http or https, not ${parsed.protocol}`);
    return { type: 'http', url, headers: stringMap(raw.headers, '"headers"', expand) };
  }
  if (type === 'sse') throw new Error('the SSE transport is not supported; servers that speak streamable HTTP take "type": "http"');
  throw new Error(`"type" must be "stdio" or "http", not ${JSON.stringify(type)}`);
}

function stringMap(raw: unknown, what: string, expand: (s: string, what: string) => string): Record<string, string> {
  if (raw === undefined) return {};
  if (!isRecord(raw) || Object.values(raw).some((v) => typeof v !== 'string')) throw new Error(`${what} must be an object of strings`);
  return Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, expand(v as string, `${what}.${k}`)]));
}

/** `${VAR}` and `${VAR:-default}` replaced from `env`; a variable unset without a default is an error. */
export function expandVars(s: string, env: NodeJS.ProcessEnv, what: string): string {
  return s.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_, name: string, fallback: string | undefined) => {
    const value = env[name];
    if (value !== undefined && value !== '') return value;
    if (fallback !== undefined) return fallback;
    throw new Error(`${what} uses \${${name}}, which is not set`);
  });
}

/**
 * Reads a definition file: `{"mcpServers": {...}}` (Claude Code's `.mcp.json` format). A file
 * that can't be read or isn't such an object throws McpConfigError; bad entries are `problems`.
 */
export function readMcpFile(file: string, env: NodeJS.ProcessEnv): ParsedServers {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new McpConfigError(`The MCP config file ${file} ${code === 'ENOENT' ? 'does not exist' : `cannot be read (${code})`}.`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new McpConfigError(`The MCP config file ${file} is not valid JSON (${(err as Error).message}).`);
  }
  if (!isRecord(raw) || raw.mcpServers === undefined) {
    throw new McpConfigError(`The MCP config file ${file} must hold {"mcpServers": {"<name>": {"command": ..., "args": [...]}}}.`);
  }
  return parseMcpServers(raw.mcpServers, file, env);
}


/**
 * What the server runs or reaches, for people: the command line with the names (not the
 * values) of the variables it sets and whether it gets the machine's network, or the URL with
 * its header names.
 */
export function describeServer(config: McpServerConfig): string {
  if (config.type === 'http') {
    const headers = Object.keys(config.headers);
    return `${config.url}${headers.length > 0 ? ` (headers: ${headers.join(', ')})` : ''}`;
  }
  const vars = Object.keys(config.env).map((k) => `${k}=…`);
  const line = [...vars, config.command, ...config.args].map((w) => (w.endsWith('=…') ? w : shellWord(w))).join(' ');
  return config.network ? `${line} (with the machine's network)` : line;
}

/** Identifies a definition exactly (values included): an approval holds for this one only. */
export function fingerprint(config: McpServerConfig): string {
  // The network only when asked for, so approvals given before the key existed still hold.
  const canonical =
    config.type === 'http'
      ? ['http', config.url, Object.entries(config.headers).sort()]
      : ['stdio', config.command, config.args, Object.entries(config.env).sort(), ...(config.network ? ['network'] : [])];
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex').slice(0, 16);
}
