import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import {
  AnthropicProvider,
  LocalSystem,
  REPORTING_TOOLS,
  SqliteStore,
  type HistoryMessage,
  type LocalSystemOptions,
  type ModelProvider,
  type ReportReviewer,
  type RuntimeEvent,
  type ThreadUsage,
  type Tool,
} from '@infinity-code/runtime';
import type { Effort } from '@infinity-code/runtime/models';
import type { ApplyResult, BackendName, BaseRefresh, ContainmentOptions, Sandbox, SandboxDiff, SandboxSession } from '@infinity-code/sandbox';
import { SandboxError } from '@infinity-code/sandbox/patches';
import { codingTools, type CommandRequest, type UncontainedPolicy } from '@infinity-code/tools';
import { startMcpServers, type McpServerEntry, type McpServers } from '@infinity-code/mcp';
import { withFallback } from './fallback-model.js';
import { capWasmTierUp } from './process-tuning.js';
import { toolChecks } from './tool-checks.js';
import { basePrompt, type PromptFlags } from './instructions.js';
import { gatherEnvironment, keepEnvironment, sessionEnvironment } from './session-environment.js';
import { containmentOf, maxDiffFileBytes } from './sandbox-config.js';
import type { SandboxMap } from './sandbox-map.js';
import { SessionSandboxes } from './session-sandboxes.js';
import type { SessionSetup } from './session-setup.js';
import { toolPermissions } from './tool-permissions.js';
import { contextWindowFor } from './model-choice.js';

/**
 * What differs between the front ends: how children's reports are reviewed and what happens to a
 * command the sandbox cannot confine. Everything else comes from the SessionSetup.
 */
export interface AgentSessionOptions {
  /** How children's reports are reviewed (auto-accept headless, the TUI's broker otherwise). */
  reviewer: (sandboxes: SessionSandboxes) => ReportReviewer;
  /** Extra tools (the demo's). */
  extraTools?: Tool[];
  /** Where sandbox sessions are stored (tests); the user's state directory otherwise. */
  sandboxStateDir?: string;
  backend?: BackendName;
  /**
   * Where the sandbox cannot confine commands, without --unsandboxed: ask the user before each
   * (`askUncontained`, the TUI); otherwise they are refused and `onCommandRefused` hears of each.
   */
  askUncontained?: (request: CommandRequest, signal: AbortSignal) => Promise<boolean>;
  /** Asks whether a command that failed for lack of network may run again with it (the TUI). */
  askNetwork?: (request: CommandRequest, signal: AbortSignal) => Promise<boolean>;
  onCommandRefused?: (request: CommandRequest) => void;
  /** Told when --fallback-model takes over from the session's model (see fallback-model.ts). */
  onModelFallback?: (from: string, to: string, why: string) => void;
  /** Asks whether a repository's MCP server nobody decided on may start (the TUI); else it doesn't. */
  askMcpApproval?: (entry: McpServerEntry, signal: AbortSignal) => Promise<boolean>;
  /**
   * Open the sandbox session only once the first model request is on its way (headless: the task
   * is sent at once). Its start-up (loading the sandbox code, the snapshot's processes, the base,
   * the root sandbox) then runs while the request goes out and the model writes, instead of
   * delaying the request; a tool that needs a sandbox earlier opens it at once. The TUI opens it
   * at start, while the user types.
   */
  sandboxesAfterFirstRequest?: boolean;
}

/** What the user is told about the time limit of commands. */
const TIME_LIMIT_HELP =
  'The user can raise the limit with "sandbox": {"commandTimeoutMs": <milliseconds>} in the Infinity Code config ' +
  '(~/.config/infinity-code/config.json).';

function uncontainedPolicy(setup: SessionSetup, o: AgentSessionOptions): UncontainedPolicy {
  // --unsandboxed wins over asking: the user said yes to all of them already.
  if (setup.unsandboxed) return { kind: 'allow' };
  if (o.askUncontained) return { kind: 'ask', ask: o.askUncontained };
  return {
    kind: 'refuse',
    hint: 'The user can let them run unconfined by starting Infinity Code with --unsandboxed.',
    ...(o.onCommandRefused ? { onRefused: o.onCommandRefused } : {}),
  };
}

/**
 * Opens a session's sandboxes: the ones recorded for it when there are any, else a fresh
 * snapshot; then records them, so the next run of this session (-c, -r) resumes them.
 */
async function openSandboxes(setup: SessionSetup, o: AgentSessionOptions, sessionId: string): Promise<SandboxSession> {
  const maxDiff = maxDiffFileBytes(setup.config.sandbox);
  // A folder's private git dir is in the state dir setUpSession found it in (see Project.folder).
  const stateDir = o.sandboxStateDir ?? setup.folder?.stateDir;
  const base = {
    repo: setup.root,
    ...(stateDir ? { stateDir } : {}),
    ...(setup.folder ? { allowFolder: true } : {}),
    ...(o.backend ? { backend: o.backend } : {}),
    containment: withAddedDirs(containmentOf(setup.config.sandbox, setup.network), setup.extras.addDirs),
    ...(maxDiff !== undefined ? { applyPolicy: { maxFileBytes: maxDiff } } : {}),
  };
  // Loaded here, not with this module: a headless run sends its first request before it opens
  // sandboxes (see sandboxesAfterFirstRequest), and this code need not load before that.
  const { openSession } = await import('@infinity-code/sandbox');
  const recorded = setup.registry.get(sessionId)?.sandboxSession;
  let opened: SandboxSession | undefined;
  if (recorded) {
    try {
      opened = await openSession({ ...base, resume: recorded });
    } catch (err) {
      // Gone (collected, or never completed): the session goes on over a fresh snapshot.
      if (!(err instanceof SandboxError && err.code === 'not-found')) throw err;
    }
  }
  // A fresh snapshot and base are made in the background: the first model request, which needs no
  // sandbox, goes out meanwhile; tool calls wait for them.
  opened ??= await openSession({ ...base, background: true });
  setup.registry.setSandboxSession(sessionId, opened.id);
  return opened;
}

/**
 * --add-dir: commands may read these too. Read-only, as `sandbox.readable` paths are, unless the
 * user's config makes them writable; credential locations in them stay hidden.
 */
function withAddedDirs(c: ContainmentOptions, addDirs: readonly string[] | undefined): ContainmentOptions {
  if (!addDirs || addDirs.length === 0) return c;
  return { ...c, readable: [...new Set([...(c.readable ?? []), ...addDirs])] };
}

/** --allowedTools, --disallowedTools and --permission-mode as the runtime's checks (none without them). */
function permissionOptions(setup: SessionSetup): Pick<LocalSystemOptions, 'withhold' | 'permit'> {
  const permissions = toolPermissions(setup.extras, { root: setup.root, cwd: setup.cwd, home: homedir() });
  if (!permissions.active) return {};
  return {
    withhold: (name) => permissions.withheld(name),
    permit: (_threadId, call) => {
      const d = permissions.decide(call);
      return d.allowed ? undefined : { deny: d.reason };
    },
  };
}

function providerOf(setup: SessionSetup, onRequest: () => void): ModelProvider {
  if (setup.provider) return setup.provider;
  if (!setup.credentials) throw new Error('a session needs a model provider or Anthropic credentials');
  // LocalSystem.start() warms it (the SDK loads while the queue is read).
  return new AnthropicProvider({ ...setup.credentials, onRequest, beforeFirstConnection: capWasmTierUp });
}

/** --fallback-model: the provider watched for the failures that move the session to it. */
function withSessionFallback(
  setup: SessionSetup,
  o: AgentSessionOptions,
  provider: ModelProvider,
  model: { current: string },
  effort: { current: Effort | undefined },
): ModelProvider {
  const fallback = setup.extras.fallbackModel;
  if (fallback === undefined) return provider;
  return withFallback(provider, { fallback, model, effort, onSwitch: (from, to, why) => o.onModelFallback?.(from, to, why) });
}

/** --system-prompt and --append-system-prompt, as basePrompt takes them, and whether the project is a folder. */
function promptFlags(setup: SessionSetup): PromptFlags {
  const { systemPrompt, appendSystemPrompt } = setup.extras;
  return {
    ...(systemPrompt !== undefined ? { replace: systemPrompt } : {}),
    ...(appendSystemPrompt !== undefined ? { append: appendSystemPrompt } : {}),
    ...(setup.folder ? { folder: true } : {}),
  };
}

/**
 * One agent session in a project: the runtime (SQLite under `.infinity/`), the sandboxes the
 * threads edit in, and the coding tools over them. The TUI and the headless printer both open it
 * from the same SessionSetup and read its event stream. It owns the current session (root
 * thread): `/new` moves it, and `/diff`, the review and `-c` all follow it.
 */
export class AgentSession {
  /** The session's MCP servers, when it has any. */
  mcp: McpServers | undefined;

  private constructor(
    readonly system: LocalSystem,
    private readonly setup: SessionSetup,
    private readonly sandboxes: SessionSandboxes,
    private current: { rootId: string },
    private readonly modelRef: { current: string },
    private readonly effortRef: { current: Effort | undefined },
    private readonly abortTools: AbortController,
    /** The environment part of this process's system prompt (recorded for sessions /new starts). */
    private readonly environment: string,
  ) {}

  static async open(setup: SessionSetup, o: AgentSessionOptions): Promise<AgentSession> {
    const infinityDir = join(setup.root, '.infinity');
    mkdirSync(infinityDir, { recursive: true });
    // Our own files must never be part of the sandbox snapshot or of a diff.
    const ignore = join(infinityDir, '.gitignore');
    if (!existsSync(ignore)) writeFileSync(ignore, '*\n');
    // See AgentSessionOptions.sandboxesAfterFirstRequest: settled once the HTTP client has the
    // first request (after one turn of the event loop, in which it connects and writes what it
    // can), or by the first completion's end (a provider that does not tell).
    let requested = (): void => undefined;
    const firstRequest = o.sandboxesAfterFirstRequest
      ? new Promise<void>((resolve) => {
          requested = () => {
            requested = () => undefined;
            setImmediate(resolve);
          };
        })
      : undefined;
    // Gathered (git status) while the sandboxes open; kept, so a resumed session is told the same.
    const environment = sessionEnvironment(infinityDir, setup.session.id, () =>
      gatherEnvironment({
        root: setup.root,
        cwd: setup.cwd,
        ...(setup.folder ? { folder: true } : {}),
        network: setup.network ?? setup.config.sandbox.network,
        writable: setup.config.sandbox.writable,
        readable: setup.extras.addDirs ?? [],
        networkRerun: o.askNetwork !== undefined,
      }),
    );
    // Settled either way below; a failure here must not go unhandled while the sandboxes open.
    environment.catch(() => undefined);
    // The store first: if it can't open, no sandbox session is left behind.
    const provider = providerOf(setup, () => requested());
    const store = new SqliteStore({ path: join(infinityDir, 'state.db') });
    const sandboxes: SessionSandboxes = new SessionSandboxes({
      open: (rootId) => openSandboxes(setup, o, rootId),
      // The runtime says where threads hang; it is made below, after the tools that need this,
      // and only ever asked once a thread runs.
      threads: { threadRecord: (id) => system.threadRecord(id) },
    });
    const rootId = setup.session.id;
    if (!firstRequest) {
      try {
        await sandboxes.forRoot(rootId);
      } catch (err) {
        await store.close();
        throw err;
      }
    }
    let environmentText: string;
    try {
      environmentText = await environment;
    } catch (err) {
      await store.close();
      throw err;
    }
    const abortTools = new AbortController();
    const modelRef = { current: setup.model };
    const effortRef: { current: Effort | undefined } = { current: setup.effort };
    const config = setup.config;
    const tools = codingTools({
      sandboxFor: (threadId) => sandboxes.sandboxFor(threadId),
      repoRoot: setup.root,
      commandTimeouts: { waitMs: config.commandTimeoutMs, maxRunMs: config.sandbox.commandTimeoutMs },
      timeLimitHelp: TIME_LIMIT_HELP,
      secretEnvNames: config.secretEnv,
      envAllow: config.sandbox.envAllow,
      uncontained: uncontainedPolicy(setup, o),
      ...(o.askNetwork ? { askNetwork: o.askNetwork } : {}),
      signal: abortTools.signal,
      // The instructions of subdirectories, shown to each thread where it works (the root's are
      // the system prompt's).
      nestedInstructions: true,
      ...(setup.extras.addDirs ? { readDirs: setup.extras.addDirs } : {}),
    });
    const system: LocalSystem = new LocalSystem({
      store,
      // The store is the project's, shared with every other run there: this process runs its own
      // session only (-c and -r are the ways back into another's left work).
      roots: [rootId],
      provider: withSessionFallback(setup, o, provider, modelRef, effortRef),
      tools: [...tools.tools, ...(o.extraTools ?? [])],
      validators: await toolChecks(),
      ...permissionOptions(setup),
      // Read per round: a model switch applies from the next completion of every thread.
      model: () => modelRef.current,
      // Read per completion too: `/effort` applies from the next one; unset, none is sent.
      effort: () => effortRef.current,
      systemPrompt: basePrompt(setup.root, setup.instructions.project, environmentText, promptFlags(setup)),
      contextWindow: (model) => contextWindowFor(model, config),
      ...(setup.retry ? { retry: setup.retry } : {}),
      reviewReport: o.reviewer(sandboxes),
      limits: {
        maxCallsPerReply: config.maxToolCallsPerReply,
        ...(setup.maxTurns !== undefined ? { maxCompletionsPerThread: setup.maxTurns } : {}),
      },
    });
    const session = new AgentSession(system, setup, sandboxes, { rootId }, modelRef, effortRef, abortTools, environmentText);
    system.subscribe((e) => session.onEvent(e));
    if (firstRequest) {
      const unsubscribe = system.subscribe((e) => {
        if (e.type === 'completion-finished' || e.type === 'error') requested();
      });
      void firstRequest.then(unsubscribe);
    }
    // Not waited for: each server's tools reach the model from the first request after it is
    // ready. stdio servers run in the current root's sandbox (read when each starts).
    if (setup.mcp) {
      session.mcp = startMcpServers({
        ...setup.mcp,
        ...(o.askMcpApproval ? { askApproval: o.askMcpApproval } : {}),
        sandbox: () => session.rootSandbox(),
        addTools: (t) => system.addTools(t),
      });
    }
    // The root's sandbox is made (and mounted) while the first request is out, not at its first
    // tool call.
    void (firstRequest ?? Promise.resolve()).then(() => session.rootSandbox()).catch(() => undefined);
    // The tool-call checker too, after the sandboxes' start (whose processes are the long wait).
    void (firstRequest ?? Promise.resolve()).then(() => setImmediate(() => system.warmTools()));
    await system.start();
    return session;
  }

  /** The current session's id, which is its root thread's. */
  get rootId(): string {
    return this.current.rootId;
  }

  /**
   * Starts a fresh session (`/new`): a new entry in the project's session list, a new snapshot
   * of the working tree for its sandboxes (recorded, so -c resumes them), and a new root thread.
   * The earlier session's threads finish in their own sandboxes. Returns the new id.
   */
  async newSession(title: string): Promise<string> {
    // Its threads get this process's system prompt: recorded, so that -c gives them the same.
    const created = this.setup.registry.create(title, this.setup.instructions.id);
    this.system.runRoot(created.id);
    keepEnvironment(join(this.setup.root, '.infinity'), created.id, this.environment);
    await this.sandboxes.forRoot(created.id);
    const move = () => {
      this.current = { rootId: created.id };
      return Promise.resolve();
    };
    // stdio MCP servers move to the new root's sandbox (they start again there).
    await (this.mcp ? this.mcp.whileSuspended(move) : move());
    return created.id;
  }

  get model(): string {
    return this.modelRef.current;
  }

  /** Switch models for every thread's next completion (`/model`). */
  setModel(id: string): void {
    this.modelRef.current = id;
  }

  /** `output_config.effort` of the next completions; undefined: none is sent (the model's default). */
  get effort(): Effort | undefined {
    return this.effortRef.current;
  }

  /** Set the effort for every thread's next completion (`/effort`); undefined for the model's default. */
  setEffort(effort: Effort | undefined): void {
    this.effortRef.current = effort;
  }

  /** The sandbox backend's name (known once the sandbox session is open). */
  async backend(): Promise<string> {
    return (await this.map()).session.backend;
  }

  /** Whether commands run confined here (every sandbox of a session has the same backend). */
  async commandsContained(): Promise<boolean> {
    return (await this.rootSandbox()).contained;
  }

  /** What the current session's root thread has said and heard so far (a continued session's transcript). */
  history(): Promise<readonly HistoryMessage[]> {
    return this.system.threadHistory(this.rootId);
  }

  /** Stored usage of the current session's threads per model, earlier runs included (`/cost`). */
  usage(): Promise<ThreadUsage[]> {
    return this.system.usageByThread(this.rootId);
  }

  /**
   * Everything the current root changed since its session's snapshot of the working tree, as it
   * may be applied there: what may not (see SandboxDiff.omitted) is left out and listed with its reason.
   */
  async rootDiff(): Promise<SandboxDiff> {
    return (await this.rootSandbox()).workingTreeDiff();
  }

  /**
   * Starts making rootDiff() in the background, so that it is ready when asked for (see
   * Sandbox.prepareWorkingTreeDiff); not if `stillWanted` says no once the sandbox is there.
   */
  prepareRootDiff(stillWanted: () => boolean): void {
    void this.rootSandbox().then(
      (sb) => {
        if (stillWanted()) sb.prepareWorkingTreeDiff();
      },
      () => undefined,
    );
  }

  /** Applies (a selection of) rootDiff() to the user's working tree, 3-way. */
  async applyToWorkingTree(diff: SandboxDiff, opts: { remember?: boolean } = {}): Promise<ApplyResult> {
    return (await this.rootSandbox()).applyToWorkingTree(diff, opts);
  }

  /** Children whose changes were never reported (and so never merged): listed, not dropped. */
  async unreported(): Promise<Array<{ threadId: string; files: string[] }>> {
    const out: Array<{ threadId: string; files: string[] }> = [];
    for (const { threadId, sandbox } of await (await this.map()).all()) {
      if (threadId === this.rootId) continue;
      const diff = await sandbox.diff();
      if (!diff.isEmpty) out.push({ threadId, files: diff.files.map((f) => f.path) });
    }
    return out;
  }

  /**
   * Files of the user's working tree that differ from the current session's base now (edited
   * since it began, or since the last refresh), except those that hold the root's version (the
   * session's changes applied to the tree are not the user's edits).
   */
  async changedSinceBase(): Promise<string[]> {
    return (await this.map()).session.changedSinceSnapshot({ except: await this.rootSandbox() });
  }

  /** Takes the user's edits into every sandbox's base; a sandbox's own changes to a file win. */
  refreshBase(): Promise<BaseRefresh> {
    const refresh = async () => (await this.map()).session.refreshBase();
    // stdio MCP servers run in the root sandbox, whose view the refresh rebuilds once nothing runs there.
    return this.mcp ? this.mcp.whileSuspended(refresh) : refresh();
  }

  /**
   * Stops everything. With `keep`, the current session's sandboxes stay on disk for its next run
   * (-c); without, they are deleted (their changes reached the working tree, or were dropped).
   * Other sessions' sandboxes (before a `/new`) are always kept: -r brings them back.
   */
  async close(opts: { keep: boolean } = { keep: true }): Promise<void> {
    this.abortTools.abort();
    await this.mcp?.close();
    // Independent (tools still running are cancelled either way): side by side, the store's last
    // write and the sandboxes' teardown overlap.
    await Promise.all([this.system.close(), this.sandboxes.close((rootId) => rootId !== this.rootId || opts.keep)]);
  }

  private async rootSandbox(): Promise<Sandbox> {
    return (await this.map()).sandboxFor(this.rootId);
  }

  /** The current session's sandboxes (opened on first use). */
  private map(): Promise<SandboxMap> {
    return this.sandboxes.forRoot(this.rootId);
  }

  private onEvent(e: RuntimeEvent): void {
    // A child's sandbox is made at its spawn, so it holds exactly the parent's edits so far.
    if (e.type === 'thread-spawned' && e.kind !== 'compaction') void this.sandboxes.sandboxFor(e.childId).catch(() => {});
    if (e.type === 'thread-closed') void this.sandboxes.discard(e.threadId).catch(() => {});
    if (e.type === 'tool-call-streaming' && REPORTING_TOOLS.has(e.name)) void this.prepareChildDiff(e.threadId).catch(() => {});
  }

  /**
   * A child began writing its report: its diff, which the review needs first, is made while the
   * model writes the rest (the sandbox keeps it while nothing changes there). Its parent then
   * hears of the report a diff earlier: a fan-out's children all report at about the same time,
   * and their parent waits for every one.
   */
  private async prepareChildDiff(threadId: string): Promise<void> {
    if ((await this.system.threadRecord(threadId))?.parentId == null) return;
    await (await this.sandboxes.sandboxFor(threadId)).diff();
  }
}
