// How every run begins, the TUI and headless alike: the project, its config, the settings of
// model calls, and which session to run. Cheap and synchronous (the TUI does it before its first
// frame): nothing here loads the runtime, SQLite or the sandboxes; AgentSession.open does.
import { join } from 'node:path';
import { takeFolderNotice } from '@infinity-code/sandbox/repo-problems';
import type { ModelProvider, RetryPolicy } from '@infinity-code/runtime';
import { resolveModelId, retirement, type Effort } from '@infinity-code/runtime/models';
import { loadConfig, retryFromEnv, type Config } from './config.js';
import { chooseEffort } from './effort.js';
import { chooseModel } from './model-choice.js';
import { EXIT, UserError } from './exit-codes.js';
import { projectGitArgs, requireProject, type Project } from './project.js';
import { anthropicEnv, type AnthropicCredentials } from './provider-env.js';
import { sessionInstructions, type ProjectInstructions } from './instructions.js';
import { mcpSessionOptions, type McpSessionOptions } from './mcp-setup.js';
import type { NetworkSetting } from './sandbox-config.js';
import { SessionRegistry, type SessionInfo } from './sessions.js';
import { toolPermissions } from './tool-permissions.js';

export interface SessionRequest {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** --model (an id or alias); else ANTHROPIC_MODEL, else the config's (see chooseModel). */
  model?: string;
  /** --effort; the config's otherwise (see chooseEffort). */
  effort?: Effort;
  /** -c: the latest session of the project (a new one when there is none). */
  continueLatest?: boolean;
  /** -r: a session by id or unique id prefix. */
  resume?: string;
  /** The title of a session created now: the task, or what the TUI calls its sessions. */
  title: string;
  /** A model that needs no credentials (the demo's); the Anthropic API otherwise. */
  provider?: ModelProvider;
  /** --max-turns: completions per thread. */
  maxTurns?: number;
  /** --network: instead of the config's `sandbox.network`. */
  network?: NetworkSetting;
  /** --unsandboxed: commands run where the sandbox cannot confine them. */
  unsandboxed?: boolean;
  /** --mcp-config files or JSON strings (MCP servers, `.mcp.json` format). */
  mcpConfig?: readonly string[];
  /** --strict-mcp-config: the --mcp-config servers only (not .mcp.json's, nor the configs'). */
  strictMcpConfig?: boolean;
  /** What Claude Code's flags ask of tools and the prompt (see SessionExtras). */
  extras?: SessionExtras;
}

/**
 * Claude Code's headless flags beyond ours, as a session is asked to honour them. Each is
 * optional; absent means our default behaviour.
 */
export interface SessionExtras {
  /** --system-prompt: replaces our base prompt (the environment and project instructions stay). */
  systemPrompt?: string;
  /** --append-system-prompt: added at the end of the system prompt. */
  appendSystemPrompt?: string;
  /** --allowedTools: only these (our names or Claude Code's, `Bash(git diff:*)` patterns) run; others are denied. */
  allowedTools?: readonly string[];
  /** --disallowedTools: these are not offered to the model at all. */
  disallowedTools?: readonly string[];
  /** --permission-mode: `plan` is read-only; `acceptEdits`/`bypassPermissions` mean --yes (handled by the CLI). */
  permissionMode?: 'default' | 'acceptEdits' | 'bypassPermissions' | 'plan';
  /** --add-dir: extra directories commands may read (absolute, resolved by the CLI). */
  addDirs?: readonly string[];
  /** --session-id: the id of the session created now (a UUID). */
  sessionId?: string;
  /** --fallback-model: used when the model is overloaded or unavailable. */
  fallbackModel?: string;
  /** --max-budget-usd: the run stops (like --max-turns) once its cost reaches this. */
  maxBudgetUsd?: number;
}

/** Everything a session is opened with (see AgentSession.open), the same for both front ends. */
export interface SessionSetup {
  /** The repository's root (or the folder's, see `folder`). */
  root: string;
  /**
   * Set when the project is a folder in no git repository (see Project.folder), with what the
   * user is told about that the first time in this folder (`notice`, once per folder).
   */
  folder?: NonNullable<Project['folder']> & { notice?: string };
  /** Where the user started us (the root or a directory under it). */
  cwd: string;
  config: Config;
  /** The model's id (an alias given is resolved; a retired model was refused). */
  model: string;
  /** `output_config.effort` to send; unset, none is sent and the model's default applies. */
  effort?: Effort;
  /** From INFINITY_CODE_RETRY: retry and timeout settings of model calls. */
  retry?: Partial<RetryPolicy>;
  /** The project's sessions: where a session's sandboxes are recorded for -c. */
  registry: SessionRegistry;
  /** The session to run first; its id is its root thread's. */
  session: SessionInfo;
  /** The project instructions of its system prompt, as the session first read them. */
  instructions: { id: string; project: ProjectInstructions | undefined };
  /** The model provider given (the demo's)... */
  provider?: ModelProvider;
  /** ...or else the Anthropic API's credentials (checked here, used when the session opens). */
  credentials?: AnthropicCredentials;
  maxTurns?: number;
  network?: NetworkSetting;
  unsandboxed: boolean;
  /** The session's MCP servers (see mcp-setup.ts), when it has any. */
  mcp?: McpSessionOptions;
  /** Definitions left out (a wrong entry of the repository's .mcp.json): for the user. */
  mcpWarnings: string[];
  /** Claude Code's extra flags (see SessionExtras); empty when none was given. */
  extras: SessionExtras;
}

/**
 * Checks what can be checked before anything starts (a git repository, valid config and
 * INFINITY_CODE_RETRY, a model that is not retired, an effort it accepts, credentials), then
 * picks the session: -r's, -c's, or a new one. Throws UserError with what to do.
 */
export function setUpSession(o: SessionRequest): SessionSetup {
  const project = requireProject(o.cwd, o.env);
  const { root } = project;
  const config = loadConfig({ env: o.env, projectRoot: root });
  const retry = retryFromEnv(o.env);
  const model = chooseModel({ ...(o.model !== undefined ? { flag: o.model } : {}), env: o.env, config: config.model });
  const effort = chooseEffort({
    ...(o.effort !== undefined ? { flag: o.effort } : {}),
    ...(config.effort !== undefined ? { config: config.effort } : {}),
    ...(config.effortFile !== undefined ? { configFile: config.effortFile } : {}),
    model,
  });
  const provider = o.provider ? { provider: o.provider } : { credentials: anthropicEnv(o.env) };
  const registry = new SessionRegistry(join(root, '.infinity'));
  const extras = checkedExtras(o.extras ?? {}, model, registry);
  // A malformed --allowedTools or --disallowedTools rule is a usage error before anything starts.
  toolPermissions(extras, { root, cwd: o.cwd });
  // A new session unless -c or -r names one; that one must not be running in another process.
  const earlier = o.resume ? registry.find(o.resume) : o.continueLatest ? registry.latest() : undefined;
  const session = earlier ? registry.claim(earlier) : registry.create(o.title, undefined, extras.sessionId);
  const kept = sessionInstructions(root, session.instructions, projectGitArgs(project));
  registry.touch(session.id, kept.id);
  // A wrong --mcp-config file is an error now; a wrong .mcp.json entry a warning.
  const mcpWarnings: string[] = [];
  const mcp = mcpSessionOptions({
    root,
    cwd: o.cwd,
    env: o.env,
    config,
    files: o.mcpConfig ?? [],
    strict: o.strictMcpConfig === true,
    warn: (message) => mcpWarnings.push(message),
  });
  // Last: told only once everything above held (the run goes on to say it).
  const notice = project.folder ? takeFolderNotice(project.folder.stateDir, root) : undefined;
  return {
    root,
    ...(project.folder ? { folder: { ...project.folder, ...(notice !== undefined ? { notice } : {}) } } : {}),
    cwd: o.cwd,
    config,
    model,
    ...(effort !== undefined ? { effort } : {}),
    ...provider,
    ...(retry ? { retry } : {}),
    registry,
    session,
    instructions: { id: kept.id, project: kept.instructions },
    ...(o.maxTurns !== undefined ? { maxTurns: o.maxTurns } : {}),
    ...(o.network !== undefined ? { network: o.network } : {}),
    unsandboxed: o.unsandboxed === true,
    ...(mcp ? { mcp } : {}),
    mcpWarnings,
    extras,
  };
}

/**
 * Claude Code's flags checked against the project: --session-id names no session it has yet;
 * --fallback-model resolved like --model (an alias to its id, a retired model refused) and
 * another model than the session's.
 */
function checkedExtras(extras: SessionExtras, model: string, registry: SessionRegistry): SessionExtras {
  if (extras.sessionId !== undefined && registry.get(extras.sessionId)) {
    throw new UserError(
      `--session-id ${extras.sessionId}: this project has a session with that id already. Continue it with -r ${extras.sessionId}, or choose another id.`,
      EXIT.usage,
    );
  }
  if (extras.fallbackModel === undefined) return extras;
  const gone = retirement(extras.fallbackModel);
  if (gone) {
    throw new UserError(`--fallback-model ${extras.fallbackModel} names a model retired on ${gone.retired}: requests to it fail. Its replacement is ${gone.replacement}.`, EXIT.config);
  }
  const fallbackModel = resolveModelId(extras.fallbackModel);
  if (fallbackModel === model) {
    throw new UserError(`--fallback-model ${extras.fallbackModel} is the session's model (${model}) already: choose another model to fall back to.`, EXIT.usage);
  }
  return { ...extras, fallbackModel };
}
