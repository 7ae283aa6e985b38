import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { McpConfigError, parseMcpServers, type McpServerConfig, type McpTrustDecision } from '@infinity-code/mcp/config';
// The light subpath: this module is read before the TUI's first frame.
import { DEFAULT_MODEL, EFFORTS, isEffort, type Effort } from '@infinity-code/runtime/models';
import { EXIT, UserError } from './exit-codes.js';
import { retiredModelMessage } from './model-choice.js';
import { checkProjectPrices, parsePriceSettings } from './price-config.js';
import { Pricing, type PriceSettings } from './pricing.js';
import {
  DEFAULT_SANDBOX_CONFIG,
  mergeSandboxConfig,
  narrowSandboxConfig,
  parseSandboxConfig,
  wideningKey,
  type SandboxConfig,
} from './sandbox-config.js';

/** Settings from the user's and the project's config files (the project's win). */
export interface Config {
  /** A model id or alias (resolved when the session is set up: see chooseModel). */
  model: string;
  /** `output_config.effort`; unset, the model's default applies. */
  effort?: Effort;
  /** The file that set `effort`, for messages about it. */
  effortFile?: string;
  /** Tokens; compaction starts at 75% of it. */
  /** Set: overrides the model table's window (status line, compaction at 75%). */
  contextWindow?: number;
  /** How long an `execute_command` call waits for its command (unless the model asks otherwise) before it goes on in the background (ms). */
  commandTimeoutMs: number;
  /** Environment variables never passed to commands (ANTHROPIC_API_KEY always is removed). */
  secretEnv: string[];
  /** What commands may reach and for how long (see sandbox-config.ts). */
  sandbox: SandboxConfig;
  /** The user's token prices (USD per million tokens): win over the built-in ones. */
  prices: PriceSettings;
  /** The project's: only for models nothing else prices (see checkProjectPrices). */
  projectPrices: PriceSettings;
  /** Tool calls run from one model reply; the model is asked to split the rest. */
  maxToolCallsPerReply: number;
  /** MCP servers the user defined (`mcpServers` of the user's config): they start in every session. */
  mcpServers: Record<string, McpServerConfig>;
  /** MCP servers of the project's config: like `.mcp.json`'s, they start once the user approved them. */
  projectMcpServers: Record<string, McpServerConfig>;
  /** The longest an MCP tool call may take (ms). */
  mcpToolTimeoutMs: number;
  /**
   * How long an MCP server may take to start and list its tools. A headless run waits for its
   * servers (up to this long) before its first request: a conversation's tools are fixed then.
   */
  mcpStartupTimeoutMs: number;
  /**
   * The user's answers about repositories' MCP servers (`.mcp.json`, a project config): by
   * repository root, then server name. Only the user's own config holds them.
   */
  mcpProjectServers: Record<string, Record<string, McpTrustDecision>>;
}

/** One file's settings: any key may be missing, `sandbox` key by key too. */
export type ConfigFile = Partial<Omit<Config, 'sandbox' | 'projectPrices' | 'projectMcpServers' | 'effortFile'>> & {
  sandbox?: Partial<SandboxConfig>;
};

const KNOWN_KEYS =
  'model, effort, contextWindow, commandTimeoutMs, secretEnv, sandbox, prices, maxToolCallsPerReply, mcpServers, mcpToolTimeoutMs, mcpStartupTimeoutMs, mcpProjectServers';

export const DEFAULT_CONFIG: Config = {
  model: DEFAULT_MODEL,
  commandTimeoutMs: 120_000,
  secretEnv: [],
  sandbox: DEFAULT_SANDBOX_CONFIG,
  prices: {},
  projectPrices: {},
  // The runtime's default too (DEFAULT_LIMITS.maxCallsPerReply); not imported, to keep start-up light.
  maxToolCallsPerReply: 16,
  mcpServers: {},
  projectMcpServers: {},
  mcpToolTimeoutMs: 10 * 60_000,
  mcpStartupTimeoutMs: 30_000,
  mcpProjectServers: {},
};

/** The prices displays and results use: the user's, then the built-in ones, then the project's. */
export function pricingOf(config: Pick<Config, 'prices' | 'projectPrices'>): Pricing {
  return new Pricing({ user: config.prices, project: config.projectPrices });
}

export function userConfigPath(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return join(base, 'infinity-code', 'config.json');
}

export function projectConfigPath(root: string): string {
  return join(root, '.infinity', 'config.json');
}

/**
 * Reads both files; a file that exists but is wrong is a config error naming the file and key.
 * The project's file may narrow the user's sandbox settings but not widen them (see wideningKey).
 */
export function loadConfig(opts: { env: NodeJS.ProcessEnv; projectRoot: string }): Config {
  let config: Config = { ...DEFAULT_CONFIG, secretEnv: [...DEFAULT_CONFIG.secretEnv] };
  const userFile = userConfigPath(opts.env);
  const projectFile = projectConfigPath(opts.projectRoot);
  for (const file of [userFile, projectFile]) {
    if (!existsSync(file)) continue;
    const { sandbox, prices, mcpServers, mcpProjectServers, ...rest } = parseConfigFile(file, opts.env);
    if (file === projectFile && mcpProjectServers) {
      throw new UserError(
        `In ${file}, "mcpProjectServers" approves MCP servers, which only your own config may do (a cloned repository ` +
          `could carry this file). Move it to ${userFile}, or remove it here.`,
        EXIT.config,
      );
    }
    if (mcpServers && file === projectFile) config.projectMcpServers = mcpServers;
    else if (mcpServers) config.mcpServers = mcpServers;
    if (mcpProjectServers) config.mcpProjectServers = mcpProjectServers;
    if (file === projectFile && sandbox) {
      const widens = wideningKey(config.sandbox, sandbox);
      if (widens) {
        throw new UserError(
          `In ${file}, "sandbox.${widens.key}" widens what the agent's commands may reach: ${widens.why}. A ` +
            "repository's config may only narrow your own (a cloned repository could carry one). Put the setting " +
            `in your own config, ${userFile}, or remove it here.`,
          EXIT.config,
        );
      }
    }
    const fromProject = file === projectFile;
    // A repository's file narrows (see narrowSandboxConfig); variables kept from commands add up.
    const secretEnv = fromProject && rest.secretEnv ? [...new Set([...config.secretEnv, ...rest.secretEnv])] : (rest.secretEnv ?? config.secretEnv);
    const sandboxNow = !sandbox ? config.sandbox : fromProject ? narrowSandboxConfig(config.sandbox, sandbox) : mergeSandboxConfig(config.sandbox, sandbox);
    config = { ...config, ...rest, secretEnv, sandbox: sandboxNow };
    if (rest.effort !== undefined) config.effortFile = file;
    if (prices && file === projectFile) {
      checkProjectPrices(prices, config.prices, file, userFile);
      config.projectPrices = prices;
    } else if (prices) {
      config.prices = prices;
    }
  }
  return config;
}

export function parseConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): ConfigFile {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new UserError(`The config file ${file} is not valid JSON (${(err as Error).message}). Fix or delete it.`, EXIT.config);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new UserError(`The config file ${file} must hold a JSON object, like {"model": "${DEFAULT_MODEL}"}.`, EXIT.config);
  }
  const out: ConfigFile = {};
  const bad = (key: string, want: string) =>
    new UserError(`In ${file}, "${key}" must be ${want}. Fix the value or remove the key.`, EXIT.config);
  for (const [key, value] of Object.entries(raw)) {
    switch (key) {
      case 'model': {
        if (typeof value !== 'string' || value === '') throw bad(key, 'a model id or alias (opus, sonnet, haiku, fable)');
        // Requests to a retired model only fail: said now, naming the file, before any is sent.
        const retired = retiredModelMessage(value, { kind: 'config', file });
        if (retired) throw new UserError(retired, EXIT.config);
        out.model = value;
        break;
      }
      case 'effort':
        if (typeof value !== 'string' || !isEffort(value)) throw bad(key, `one of ${EFFORTS.join(', ')}`);
        out.effort = value;
        break;
      case 'contextWindow':
        if (!Number.isInteger(value) || (value as number) < 0) throw bad(key, 'a whole number of tokens');
        out.contextWindow = value as number;
        break;
      case 'commandTimeoutMs':
        if (!Number.isInteger(value) || (value as number) < 0) throw bad(key, 'a whole number of milliseconds');
        out.commandTimeoutMs = value as number;
        break;
      case 'secretEnv':
        if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) throw bad(key, 'a list of variable names');
        out.secretEnv = value as string[];
        break;
      case 'sandbox':
        out.sandbox = parseSandboxConfig(value, file);
        break;
      case 'prices':
        out.prices = parsePriceSettings(value, file);
        break;
      case 'maxToolCallsPerReply':
        if (!Number.isInteger(value) || (value as number) < 1) throw bad(key, 'a whole number of calls, at least 1');
        out.maxToolCallsPerReply = value as number;
        break;
      case 'mcpServers':
        out.mcpServers = parseServers(value, file, env);
        break;
      case 'mcpToolTimeoutMs':
        if (!Number.isInteger(value) || (value as number) < 1) throw bad(key, 'a whole number of milliseconds, at least 1');
        out.mcpToolTimeoutMs = value as number;
        break;
      case 'mcpStartupTimeoutMs':
        if (!Number.isInteger(value) || (value as number) < 1) throw bad(key, 'a whole number of milliseconds, at least 1');
        out.mcpStartupTimeoutMs = value as number;
        break;
      case 'mcpProjectServers':
        out.mcpProjectServers = parseTrust(value, () =>
          bad(key, 'an object of repository roots, each an object of server names, each {"allow": true|false}'),
        );
        break;
      default:
        throw new UserError(`The config file ${file} has an unknown key "${key}". Known keys: ${KNOWN_KEYS}.`, EXIT.config);
    }
  }
  return out;
}

/** `mcpServers` of a config file: any entry wrong is an error, as for every other key. */
function parseServers(value: unknown, file: string, env: NodeJS.ProcessEnv): Record<string, McpServerConfig> {
  try {
    const { servers, problems } = parseMcpServers(value, `The config file ${file}`, env);
    const first = problems[0];
    if (first) throw new UserError(`In ${file}, MCP server "${first.server}": ${first.problem}. Fix the entry or remove it.`, EXIT.config);
    return servers;
  } catch (err) {
    if (err instanceof McpConfigError) throw new UserError(err.message, EXIT.config);
    throw err;
  }
}

function parseTrust(value: unknown, bad: () => UserError): Record<string, Record<string, McpTrustDecision>> {
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObject(value)) throw bad();
  const out: Record<string, Record<string, McpTrustDecision>> = {};
  for (const [root, servers] of Object.entries(value)) {
    if (!isObject(servers)) throw bad();
    out[root] = {};
    for (const [name, d] of Object.entries(servers)) {
      if (!isObject(d) || typeof d.allow !== 'boolean' || (d.fingerprint !== undefined && typeof d.fingerprint !== 'string')) throw bad();
      out[root][name] = { allow: d.allow, ...(typeof d.fingerprint === 'string' ? { fingerprint: d.fingerprint } : {}) };
    }
  }
  return out;
}

/** The keys INFINITY_CODE_RETRY may set (the runtime's RetryPolicy). */
export const RETRY_KEYS = [
  'maxRetries',
  'baseDelayMs',
  'maxDelayMs',
  'initTimeoutMs',
  'stallTimeoutMs',
  'stallRetries',
  'unreachableRetries',
  'unreachableBudgetMs',
] as const;

/**
 * Retry settings of model calls from INFINITY_CODE_RETRY (a JSON object, e.g.
 * {"baseDelayMs": 10, "stallTimeoutMs": 2000}): for tests and for unusual networks.
 */
export function retryFromEnv(env: NodeJS.ProcessEnv): Partial<Record<(typeof RETRY_KEYS)[number], number>> | undefined {
  const raw = env.INFINITY_CODE_RETRY;
  if (raw === undefined || raw === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    throw new UserError(`INFINITY_CODE_RETRY is not valid JSON (${(err as Error).message}).`, EXIT.config);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new UserError('INFINITY_CODE_RETRY must be a JSON object, like {"baseDelayMs": 100}.', EXIT.config);
  }
  const out: Partial<Record<(typeof RETRY_KEYS)[number], number>> = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (!(RETRY_KEYS as readonly string[]).includes(key)) {
      throw new UserError(`INFINITY_CODE_RETRY has an unknown key "${key}". Known keys: ${RETRY_KEYS.join(', ')}.`, EXIT.config);
    }
    if (!Number.isInteger(value) || (value as number) < 0) {
      throw new UserError(`In INFINITY_CODE_RETRY, "${key}" must be a whole number of 0 or more.`, EXIT.config);
    }
    out[key as (typeof RETRY_KEYS)[number]] = value as number;
  }
  return out;
}
