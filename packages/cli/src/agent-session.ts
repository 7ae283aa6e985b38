import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  LocalSystem,
  SqliteStore,
  type Limits,
  type ModelProvider,
  type ReportReviewer,
  type RetryPolicy,
  type RuntimeEvent,
  type Tool,
} from '@infinity-code/runtime';
import {
  openSession,
  SandboxError,
  type BackendName,
  type BaseRefresh,
  type SandboxDiff,
  type SandboxSession,
} from '@infinity-code/sandbox';
import { codingTools, type CommandRequest, type UncontainedPolicy } from '@infinity-code/tools';
import type { Config } from './config.js';
import { basePrompt } from './instructions.js';
import { containmentOf, type NetworkSetting } from './sandbox-config.js';
import { SandboxMap } from './sandbox-map.js';

export interface AgentSessionOptions {
  projectRoot: string;
  config: Config;
  provider: ModelProvider;
  model: string;
  /** The session's root thread. */
  rootId: string;
  /** How children's reports are reviewed (auto-accept headless, the TUI's broker otherwise). */
  reviewer: (sandboxes: SandboxMap) => ReportReviewer;
  limits?: Partial<Limits>;
  /** Extra tools (the demo's). */
  extraTools?: Tool[];
  sandboxStateDir?: string;
  backend?: BackendName;
  /** The sandbox session of an earlier run of this session (-c, -r, after a crash). */
  resumeSandboxes?: string;
  /** Retry and timeout settings of model calls (from INFINITY_CODE_RETRY). */
  retry?: Partial<RetryPolicy>;
  /** The network commands get (--network), instead of the config's `sandbox.network`. */
  network?: NetworkSetting;
  /** The largest changed file put into a diff (config `sandbox.maxFileMB`). */
  maxDiffFileBytes?: number;
  /**
   * Where the sandbox cannot confine commands: run them anyway (--unsandboxed), or ask the user
   * before each (`askUncontained`, the TUI); otherwise they are refused and `onCommandRefused`
   * hears of each.
   */
  allowUncontained?: boolean;
  askUncontained?: (request: CommandRequest, signal: AbortSignal) => Promise<boolean>;
  /** Asks whether a command that failed for lack of network may run again with it (the TUI). */
  askNetwork?: (request: CommandRequest, signal: AbortSignal) => Promise<boolean>;
  onCommandRefused?: (request: CommandRequest) => void;
}

/** What the user is told about the time limit of commands. */
const TIME_LIMIT_HELP =
  'The user can raise the limit with "sandbox": {"commandTimeoutMs": <milliseconds>} in the Infinity Code config ' +
  '(~/.config/infinity-code/config.json).';

function uncontainedPolicy(o: AgentSessionOptions): UncontainedPolicy {
  if (o.allowUncontained) return { kind: 'allow' };
  if (o.askUncontained) return { kind: 'ask', ask: o.askUncontained };
  return {
    kind: 'refuse',
    hint: 'The user can let them run unconfined by starting Infinity Code with --unsandboxed.',
    ...(o.onCommandRefused ? { onRefused: o.onCommandRefused } : {}),
  };
}

/** Reopens the earlier run's sandboxes when there are any, or takes a fresh snapshot. */
async function openSandboxes(o: AgentSessionOptions): Promise<SandboxSession> {
  const base = {
    repo: o.projectRoot,
    ...(o.sandboxStateDir ? { stateDir: o.sandboxStateDir } : {}),
    ...(o.backend ? { backend: o.backend } : {}),
    containment: containmentOf(o.config.sandbox, o.network),
    ...(o.maxDiffFileBytes !== undefined ? { applyPolicy: { maxFileBytes: o.maxDiffFileBytes } } : {}),
  };
  if (o.resumeSandboxes) {
    try {
      return await openSession({ ...base, resume: o.resumeSandboxes });
    } catch (err) {
      // Gone (collected, or never completed): the session goes on over a fresh snapshot.
      if (!(err instanceof SandboxError && err.code === 'not-found')) throw err;
    }
  }
  return openSession(base);
}

/**
 * One agent session in a project: the runtime (SQLite under `.infinity/`), the sandboxes the
 * threads edit in, and the coding tools over them. The TUI and the headless printer both drive
 * it and read its event stream.
 */
export class AgentSession {
  private readonly shutdown = new AbortController();

  private constructor(
    readonly system: LocalSystem,
    readonly store: SqliteStore,
    readonly sandboxSession: SandboxSession,
    readonly sandboxes: SandboxMap,
    readonly rootId: string,
    private readonly modelRef: { current: string },
    private readonly abortTools: AbortController,
  ) {}

  static async open(o: AgentSessionOptions): Promise<AgentSession> {
    const infinityDir = join(o.projectRoot, '.infinity');
    mkdirSync(infinityDir, { recursive: true });
    // Our own files must never be part of the sandbox snapshot or of a diff.
    const ignore = join(infinityDir, '.gitignore');
    if (!existsSync(ignore)) writeFileSync(ignore, '*\n');
    // The store first: if it can't open, no sandbox session is left behind.
    const store = new SqliteStore({ path: join(infinityDir, 'state.db') });
    let sandboxSession: SandboxSession;
    try {
      sandboxSession = await openSandboxes(o);
    } catch (err) {
      await store.close();
      throw err;
    }
    const sandboxes = new SandboxMap(sandboxSession, store);
    const abortTools = new AbortController();
    const modelRef = { current: o.model };
    const tools = codingTools({
      sandboxFor: (threadId) => sandboxes.sandboxFor(threadId),
      repoRoot: o.projectRoot,
      commandTimeouts: { fastWindowMs: o.config.commandTimeoutMs, maxRunMs: o.config.sandbox.commandTimeoutMs },
      timeLimitHelp: TIME_LIMIT_HELP,
      secretEnvNames: o.config.secretEnv,
      envAllow: o.config.sandbox.envAllow,
      uncontained: uncontainedPolicy(o),
      ...(o.askNetwork ? { askNetwork: o.askNetwork } : {}),
      signal: abortTools.signal,
    });
    const system = new LocalSystem({
      store,
      provider: o.provider,
      tools: [...tools.tools, ...(o.extraTools ?? [])],
      // Read per round: a model switch applies from the next completion of every thread.
      model: () => modelRef.current,
      systemPrompt: basePrompt(o.projectRoot),
      contextWindow: o.config.contextWindow,
      ...(o.retry ? { retry: o.retry } : {}),
      reviewReport: o.reviewer(sandboxes),
      limits: { maxCallsPerReply: o.config.maxToolCallsPerReply, ...o.limits },
    });
    const session = new AgentSession(system, store, sandboxSession, sandboxes, o.rootId, modelRef, abortTools);
    system.subscribe((e) => session.onEvent(e));
    await system.start();
    return session;
  }

  get model(): string {
    return this.modelRef.current;
  }

  /** Switch models for every thread's next completion (`/model`). */
  setModel(id: string): void {
    this.modelRef.current = id;
  }

  get backend(): string {
    return this.sandboxSession.backend;
  }

  /** Whether commands run confined here (every sandbox of a session has the same backend). */
  async commandsContained(): Promise<boolean> {
    return (await this.sandboxes.sandboxFor(this.rootId)).contained;
  }

  /**
   * Everything the root changed since the session's snapshot of the working tree, as it may be
   * applied there: what may not (see SandboxDiff.omitted) is left out and listed with its reason.
   */
  async rootDiff(): Promise<SandboxDiff> {
    const root = await this.sandboxes.sandboxFor(this.rootId);
    return root.workingTreeDiff();
  }

  /** Children whose changes were never reported (and so never merged): listed, not dropped. */
  async unreported(): Promise<Array<{ threadId: string; files: string[] }>> {
    const out: Array<{ threadId: string; files: string[] }> = [];
    for (const { threadId, sandbox } of await this.sandboxes.all()) {
      if (threadId === this.rootId) continue;
      const diff = await sandbox.diff();
      if (!diff.isEmpty) out.push({ threadId, files: diff.files.map((f) => f.path) });
    }
    return out;
  }

  /**
   * Files of the user's working tree that differ from the sandboxes' base now (edited since the
   * session began, or since the last refresh), except those that hold the root's version (the
   * session's changes applied to the tree are not the user's edits).
   */
  async changedSinceBase(): Promise<string[]> {
    return this.sandboxSession.changedSinceSnapshot({ except: await this.sandboxes.sandboxFor(this.rootId) });
  }

  /** Takes the user's edits into every sandbox's base; a sandbox's own changes to a file win. */
  refreshBase(): Promise<BaseRefresh> {
    return this.sandboxSession.refreshBase();
  }

  /** The sandbox session's id, to resume it next time. */
  get sandboxSessionId(): string {
    return this.sandboxSession.id;
  }

  /**
   * Stops everything. With `keep`, the sandboxes stay on disk for the next run of this session
   * (-c); without, they are deleted (their changes reached the working tree, or were dropped).
   */
  async close(opts: { keep: boolean } = { keep: true }): Promise<void> {
    this.shutdown.abort();
    this.abortTools.abort();
    await this.system.close();
    await this.sandboxSession.close({ keep: opts.keep });
  }

  private onEvent(e: RuntimeEvent): void {
    // A child's sandbox is made at its spawn, so it holds exactly the parent's edits so far.
    if (e.type === 'thread-spawned' && e.kind !== 'compaction') void this.sandboxes.sandboxFor(e.childId).catch(() => {});
    if (e.type === 'thread-closed') void this.sandboxes.discard(e.threadId).catch(() => {});
  }
}
