import { join } from 'node:path';
import type { McpServerStatus } from '@infinity-code/mcp';
import type { HistoryMessage, ModelProvider } from '@infinity-code/runtime';
import type { Effort } from '@infinity-code/runtime/models';
import { pricingOf } from './config.js';
import { EXIT, UserError, type ExitCode } from './exit-codes.js';
import { projectGitArgs, requireProject } from './project.js';
import { promptWorkspace } from './prompt-workspace.js';
import { changesWaitLine } from './pending-changes.js';
import type { NetworkSetting } from './sandbox-config.js';
import { setUpSession, type SessionExtras, type SessionSetup } from './session-setup.js';
import { contextWindowFor } from './model-choice.js';
import { whileUiLoads } from './process-tuning.js';
import { SessionRegistry } from './sessions.js';
import type { TuiController } from './tui/index.js';
import type { storedResultDisplay } from '@infinity-code/tools';

/** What the session list calls the TUI's sessions (a headless one is named by its task). */
const TITLE = 'interactive session';

export interface InteractiveOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  flags: {
    model?: string;
    effort?: Effort;
    continue?: boolean;
    /** -r: a session by id or prefix; `true` (-r alone): the user picks one from a list. */
    resume?: string | true;
    maxTurns?: number;
    /** Commands run without asking where the sandbox cannot confine them. */
    unsandboxed?: boolean;
    network?: NetworkSetting;
    /** --mcp-config files or JSON strings (MCP servers). */
    mcpConfig?: string[];
    /** --strict-mcp-config: the --mcp-config servers only. */
    strictMcpConfig?: boolean;
  };
  /** Claude Code's other flags (see SessionExtras). */
  extras?: SessionExtras;
  /** The demo's scripted model instead of the Anthropic API. */
  provider?: ModelProvider;
  /** The demo types its task for the user. */
  firstMessage?: string;
  /** The demo's: its sandboxes are removed on quit with the repository, never resumed. */
  throwaway?: boolean;
}

/**
 * The terminal UI over one agent session; children's diffs wait for the human's review. The
 * first frame is drawn before the session (runtime, sandboxes) has opened: it opens meanwhile.
 */
export async function runInteractive(o: InteractiveOptions): Promise<ExitCode> {
  const f = o.flags;
  // -r alone: the user picks the session first; leaving the list leaves.
  const resume = f.resume === true ? await pickResumed(o) : f.resume;
  if (resume === null) return EXIT.ok;
  const asked = setUpSession({
    cwd: o.cwd,
    env: o.env,
    title: TITLE,
    ...(f.model ? { model: f.model } : {}),
    ...(f.effort ? { effort: f.effort } : {}),
    continueLatest: f.continue === true,
    ...(resume !== undefined ? { resume } : {}),
    ...(o.provider ? { provider: o.provider } : {}),
    ...(f.maxTurns !== undefined ? { maxTurns: f.maxTurns } : {}),
    ...(f.network !== undefined ? { network: f.network } : {}),
    unsandboxed: f.unsandboxed === true,
    ...(f.mcpConfig ? { mcpConfig: f.mcpConfig } : {}),
    ...(f.strictMcpConfig ? { strictMcpConfig: true } : {}),
    ...(o.extras ? { extras: o.extras } : {}),
  });
  // A stream gone silent is given up at once here (unless INFINITY_CODE_RETRY says otherwise):
  // the user is there to send again, and should not watch a spinner for another half minute.
  const setup: SessionSetup = { ...asked, retry: { stallRetries: 0, ...asked.retry } };

  const { runTui, deferredController } = await importUi();
  let start!: () => void;
  const opening = new Promise<void>((resolve) => (start = resolve)).then(() => openController(setup, o.env, o.cwd, o.throwaway === true));
  const info = {
    model: setup.model,
    ...(setup.effort ? { effort: setup.effort } : {}),
    contextWindow: contextWindowFor(setup.model, setup.config),
    backend: '…',
    sessionId: setup.session.id,
    pricing: pricingOf(setup.config),
  };
  const done = runTui(deferredController(opening.then((s) => s.controller)), info, {
    // Project commands and mentioned files come from the working tree itself, not a sandbox.
    workspace: promptWorkspace(setup.root, projectGitArgs(setup), o.cwd),
    ready: opening.then((s) => ({ history: s.history, callDisplay: s.callDisplay, resultDisplay: s.resultDisplay, notices: s.notices, onNotice: s.onNotice })),
    backend: opening.then((s) => s.backend),
    // As if typed: it shows in the transcript, names the session, and its `@` paths attach.
    ...(o.firstMessage ? { firstMessage: o.firstMessage } : {}),
  });
  // Open the session only once the first frame is out.
  setImmediate(start);
  // What became of the session's changes, said below the TUI's last frame.
  const farewell = await done;
  if (farewell) process.stdout.write(`${farewell}\n`);
  return EXIT.ok;
}

/**
 * The session `-r` alone resumes, as the user picks it from the project's list (newest first);
 * null when they leave the list. No sessions, or no terminal to pick on: a UserError saying so.
 */
async function pickResumed(o: InteractiveOptions): Promise<string | null> {
  const registry = new SessionRegistry(join(requireProject(o.cwd, o.env).root, '.infinity'));
  const sessions = registry.list();
  if (sessions.length === 0) {
    throw new UserError('There are no sessions in this project to resume yet: start one with infinity-code (without -r).', EXIT.usage);
  }
  if (!process.stdin.isTTY) {
    throw new UserError('-r without a session id shows a list to pick from, which needs a terminal: give the id, infinity-code -r <id>.', EXIT.usage);
  }
  const { pickSession } = await importUi();
  const picked = await pickSession(
    sessions.map((s) => ({ id: s.id, title: s.title, updatedAt: Date.parse(s.updatedAt), inUse: registry.inUseElsewhere(s.id) })),
  );
  return picked ?? null;
}

/** The terminal UI's modules, loaded with the process set up for them (process-tuning.ts). */
function importUi(): Promise<typeof import('./tui/index.js')> {
  return whileUiLoads(() => import('./tui/index.js'));
}

/**
 * The status line's word on the sandbox, after "sandbox": whether the agent's commands are
 * confined, and when not, whether each asks first. The backend's name is for bug reports, not here.
 */
export function sandboxStatus(contained: boolean, unsandboxed: boolean): string {
  if (contained) return 'on';
  return unsandboxed ? 'off' : 'off (commands ask first)';
}

async function openController(
  setup: SessionSetup,
  env: NodeJS.ProcessEnv,
  cwd: string,
  throwaway: boolean,
): Promise<{
  controller: TuiController;
  /** Once the root's sandbox is made: the first message does not wait for it. */
  backend: Promise<string>;
  history: readonly HistoryMessage[];
  callDisplay: (call: { name: string; input: Record<string, unknown> }) => string | undefined;
  resultDisplay: typeof storedResultDisplay;
  notices: string[];
  onNotice: (notify: (text: string, level: 'info' | 'error') => void) => () => void;
}> {
  const [{ AgentSession }, review, { ReviewedDiffs }, tui, { userEditsFeed }, { describeRefresh }, mcpSetup, { leaveSession }] = await Promise.all([
    import('./agent-session.js'),
    import('./review.js'),
    import('./reviewed-diffs.js'),
    import('./tui/index.js'),
    import('./user-edits-feed.js'),
    import('./refresh-message.js'),
    import('./mcp-setup.js'),
    import('./leave-session.js'),
  ]);
  let broker!: ReturnType<typeof tui.createReviewBroker>;
  // Every diff shown for review, children's and `/diff`'s: a decision applies what was shown.
  const reviewed = new ReviewedDiffs();
  // Where the sandbox can't confine commands, the user answers for each (unless --unsandboxed);
  // a command that failed without network may run again with it once the user says so.
  const approvals = tui.createCommandApprovals();
  // A repository's MCP server starts once the user says yes (asked once per definition, remembered).
  const mcpNotices = [...setup.mcpWarnings];
  // Set once the UI listens: what goes wrong later is said in the transcript.
  let notifyLater: ((text: string, level: 'info' | 'error') => void) | undefined;
  const askMcpApproval = mcpSetup.approvalAsker({
    approvals,
    threadId: setup.session.id,
    env,
    root: setup.root,
    onRememberFailed: (m) => (notifyLater ? notifyLater(m, 'error') : mcpNotices.push(m)),
  });
  const agent = await AgentSession.open(setup, {
    reviewer: (sandboxes) => {
      broker = tui.createReviewBroker(review.reportReview(sandboxes, { threadRecord: (id) => agent.system.threadRecord(id) }, reviewed));
      return broker.reviewer;
    },
    askUncontained: (request, signal) => approvals.ask(request, signal),
    askNetwork: (request, signal) => approvals.ask({ ...request, kind: 'network' }, signal),
    askMcpApproval,
  });
  const edits = userEditsFeed({ root: setup.root, changed: () => agent.changedSinceBase() });
  // Every hook asks the session for its current root: `/new` moves it, and these follow.
  let toolsSettled: Promise<void> | undefined;
  // Sessions named after their first message already (or titled otherwise): not read again.
  const titled = new Set<string>();
  const controller = tui.localController({
    system: agent.system,
    rootThreadId: agent.rootId,
    reviews: broker,
    approvals,
    hooks: {
      // Once: the tools are fixed from the first request on, and a server restarting later must
      // not hold up the user's messages.
      toolsReady: () => (toolsSettled ??= agent.mcp?.settled() ?? Promise.resolve()),
      sent(text) {
        const id = agent.rootId;
        if (titled.has(id)) return;
        titled.add(id);
        try {
          if (setup.registry.get(id)?.title === TITLE) setup.registry.retitle(id, text);
        } catch {
          // The message went; a session list that can't be written keeps the neutral title.
        }
      },
      ...review.workingTreeReview({ diff: () => agent.rootDiff(), apply: (diff) => agent.applyToWorkingTree(diff) }, reviewed),
      listSessions: () =>
        Promise.resolve(setup.registry.list().map((s) => ({ id: s.id, title: s.title, updatedAt: Date.parse(s.updatedAt) }))),
      setModel(id) {
        agent.setModel(id);
        return Promise.resolve({ contextWindow: contextWindowFor(id, setup.config) });
      },
      setEffort(effort) {
        agent.setEffort(effort);
        return Promise.resolve();
      },
      async newSession() {
        const id = await agent.newSession(TITLE);
        // The new session's base is the working tree as it is now: nothing is edited since.
        await edits.recheck();
        return { sessionId: id, rootThreadId: id };
      },
      watchUserEdits: (listener) => edits.subscribe(listener),
      async refreshBase() {
        const refreshed = await agent.refreshBase();
        await edits.recheck();
        return { message: describeRefresh(refreshed) };
      },
      mcpStatus: () => Promise.resolve(agent.mcp?.status() ?? []),
      async pendingChanges() {
        // The demo's changes go with its repository: nothing to ask about.
        if (throwaway) return null;
        const diff = await agent.rootDiff();
        return diff.isEmpty ? null : { files: diff.files.map((f) => f.path) };
      },
      async quit(changes) {
        await edits.close();
        // The demo's sandboxes go with its repository.
        if (throwaway) {
          await agent.close({ keep: false });
          return {};
        }
        const message = await leaveSession(agent, changes, { root: setup.root, cwd, folder: setup.folder !== undefined });
        return message ? { message } : {};
      },
    },
  });
  // A continued session shows its earlier transcript.
  const history = await agent.history();
  // The status line says so when commands can't be confined: each one then asks first. Knowing
  // takes the root's sandbox, made from the snapshot still being taken: not waited for here, so
  // a task typed (or pasted) at once goes to the model meanwhile.
  const backend = agent.commandsContained().then((contained) => sandboxStatus(contained, setup.unsandboxed));
  // MCP servers say in the transcript when they are ready or fail (/mcp has the details), and a
  // continued session whether its changes still wait for /diff.
  const onNotice = (notify: (text: string, level: 'info' | 'error') => void) => {
    notifyLater = notify;
    // Working on a folder without a repository: said the first time in this folder only.
    if (setup.folder?.notice) notify(setup.folder.notice, 'info');
    // Ready once (again after a restart, not after a /refresh), and each failure.
    const readyTold = new Map<string, number>();
    const tell = (s: McpServerStatus) => {
      if (s.state === 'failed') notify(`${mcpSetup.mcpProgressLine(s)} (/mcp lists the servers)`, 'error');
      if (s.state === 'ready' && readyTold.get(s.name) !== s.restarts) {
        readyTold.set(s.name, s.restarts);
        notify(mcpSetup.mcpProgressLine(s)!, 'info');
      }
    };
    // Not waited for: the transcript comes first.
    if (history.length > 0) {
      agent.rootDiff().then(
        (waiting) => !waiting.isEmpty && notify(changesWaitLine(waiting.files.map((f) => f.path)), 'info'),
        () => undefined,
      );
    }
    // Those settled already, then each change.
    for (const s of agent.mcp?.status() ?? []) tell(s);
    return agent.mcp?.onChange(tell) ?? (() => undefined);
  };
  const callDisplay = (call: { name: string; input: Record<string, unknown> }) => agent.system.callDisplay(call);
  // Loaded with the session already (its tools are these): the earlier transcript's rows read as they did live.
  const { storedResultDisplay: resultDisplay } = await import('@infinity-code/tools');
  return { controller, backend, history, callDisplay, resultDisplay, notices: mcpNotices, onNotice };
}
