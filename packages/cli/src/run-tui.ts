import { join } from 'node:path';
import type { HistoryMessage, ModelProvider } from '@infinity-code/runtime';
import { loadConfig, pricingOf, type Config } from './config.js';
import { EXIT, type ExitCode } from './exit-codes.js';
import { requireGitRoot } from './project.js';
import { maxDiffFileBytes, type NetworkSetting } from './sandbox-config.js';
import { anthropicEnv } from './provider-env.js';
import { SessionRegistry, type SessionInfo } from './sessions.js';
import type { TuiController } from './tui/index.js';

export interface InteractiveOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  flags: {
    model?: string;
    continue?: boolean;
    resume?: string;
    maxTurns?: number;
    /** Commands run without asking where the sandbox cannot confine them. */
    unsandboxed?: boolean;
    network?: NetworkSetting;
  };
  /** The demo's scripted model instead of the Anthropic API. */
  provider?: ModelProvider;
  /** The demo types its task for the user. */
  firstMessage?: string;
}

/**
 * The terminal UI over one agent session; children's diffs wait for the human's review. The
 * first frame is drawn before the session (runtime, sandboxes) has opened: it opens meanwhile.
 */
export async function runInteractive(o: InteractiveOptions): Promise<ExitCode> {
  const root = requireGitRoot(o.cwd);
  const config = loadConfig({ env: o.env, projectRoot: root });
  const model = o.flags.model ?? config.model;
  const credentials = o.provider ? undefined : anthropicEnv(o.env);
  const registry = new SessionRegistry(join(root, '.infinity'));
  const session = o.flags.resume
    ? registry.find(o.flags.resume)
    : o.flags.continue
      ? (registry.latest() ?? registry.create('interactive session'))
      : registry.create('interactive session');
  registry.touch(session.id);

  const { runTui, deferredController } = await importUi();
  let start!: () => void;
  const opening = new Promise<void>((resolve) => (start = resolve)).then(async () => {
    const { AnthropicProvider } = await import('@infinity-code/runtime');
    const provider = o.provider ?? new AnthropicProvider(credentials!);
    return openController({ root, config, model, provider, session, registry, flags: o.flags });
  });
  const done = runTui(
    deferredController(opening.then((s) => s.controller)),
    { model, contextWindow: config.contextWindow, backend: '…', sessionId: session.id, pricing: pricingOf(config) },
    { ready: opening.then((s) => ({ backend: s.backend, history: s.history })) },
  );
  // Open the session only once the first frame is out.
  setImmediate(start);
  if (o.firstMessage) void opening.then((s) => s.controller.send(o.firstMessage!));
  await done;
  return EXIT.ok;
}

/**
 * React and its reconciler choose their production builds by NODE_ENV when first loaded: those
 * load and render faster. Set only for the import, so commands the agent runs never inherit it.
 *
 * Ink's layout engine (yoga-layout) instantiates its WebAssembly while it loads, from a data: URL
 * through fetch() when fetch exists; the first fetch() loads Node's HTTP client (undici), some
 * 100 ms before the first frame. Without fetch it decodes the same bytes itself, so fetch is
 * hidden for the import only (nothing else runs then); the SDK loads undici later, off the
 * first frame's path.
 */
async function importUi(): Promise<typeof import('./tui/index.js')> {
  const had = Object.prototype.hasOwnProperty.call(process.env, 'NODE_ENV');
  const previous = process.env.NODE_ENV;
  if (!had) process.env.NODE_ENV = 'production';
  const fetchProperty = Object.getOwnPropertyDescriptor(globalThis, 'fetch');
  const hideFetch = fetchProperty?.configurable === true;
  if (hideFetch) Object.defineProperty(globalThis, 'fetch', { value: undefined, writable: true, configurable: true });
  try {
    return await import('./tui/index.js');
  } finally {
    if (hideFetch) Object.defineProperty(globalThis, 'fetch', fetchProperty);
    if (!had) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = previous;
  }
}

interface OpenArgs {
  root: string;
  config: Config;
  model: string;
  provider: ModelProvider;
  session: SessionInfo;
  registry: SessionRegistry;
  flags: InteractiveOptions['flags'];
}

async function openController(
  a: OpenArgs,
): Promise<{ controller: TuiController; backend: string; history: readonly HistoryMessage[] }> {
  const [{ AgentSession }, review, tui, { userEditsFeed }, { describeRefresh }] = await Promise.all([
    import('./agent-session.js'),
    import('./review.js'),
    import('./tui/index.js'),
    import('./user-edits-feed.js'),
    import('./refresh-message.js'),
  ]);
  let broker!: ReturnType<typeof tui.createReviewBroker>;
  // Where the sandbox can't confine commands, the user answers for each (unless --unsandboxed);
  // a command that failed without network may run again with it once the user says so.
  const approvals = tui.createCommandApprovals();
  const maxDiff = maxDiffFileBytes(a.config.sandbox);
  const agent = await AgentSession.open({
    projectRoot: a.root,
    config: a.config,
    provider: a.provider,
    model: a.model,
    rootId: a.session.id,
    ...(a.session.sandboxSession ? { resumeSandboxes: a.session.sandboxSession } : {}),
    reviewer: (sandboxes) => {
      broker = tui.createReviewBroker({
        diffOf: async (child) => (await review.childDiff(sandboxes, child))?.review ?? null,
        apply: async (request, decision) => {
          const child = (await agent.store.loadThread(request.childThreadId!))!.record;
          const found = await review.childDiff(sandboxes, child);
          if (!found) return { message: 'The child has no changes left to apply.' };
          const result = await review.settleChildDiff(sandboxes, child, found.diff, decision);
          return { message: review.describeApply(result, 'the parent sandbox'), conflicts: result.conflicts };
        },
      });
      return broker.reviewer;
    },
    ...(a.flags.maxTurns !== undefined ? { limits: { maxCompletionsPerThread: a.flags.maxTurns } } : {}),
    ...(a.flags.network !== undefined ? { network: a.flags.network } : {}),
    ...(maxDiff !== undefined ? { maxDiffFileBytes: maxDiff } : {}),
    ...(a.flags.unsandboxed ? { allowUncontained: true } : { askUncontained: approvals.ask }),
    askNetwork: (request, signal) => approvals.ask({ ...request, kind: 'network' }, signal),
  });
  a.registry.setSandboxSession(a.session.id, agent.sandboxSessionId);
  const edits = userEditsFeed({ root: a.root, changed: () => agent.changedSinceBase() });
  const controller = tui.localController({
    system: agent.system,
    rootThreadId: a.session.id,
    reviews: broker,
    approvals,
    store: agent.store,
    hooks: {
      async showDiff() {
        const diff = await agent.rootDiff();
        return diff.isEmpty && diff.omitted.length === 0 ? null : review.reviewOf(diff);
      },
      async applyToWorkingTree(_request, decision) {
        const diff = await agent.rootDiff();
        const rootSandbox = await agent.sandboxes.sandboxFor(a.session.id);
        const result = await rootSandbox.applyToWorkingTree(review.selectedDiff(diff, decision)).catch((err: unknown) => {
          throw review.explainRefusedApply(err, '/diff');
        });
        const leftOut = review.describeLeftOut(diff.omitted);
        return { message: `${review.describeApply(result, 'the working tree')}${leftOut ? ` ${leftOut}` : ''}`, conflicts: result.conflicts };
      },
      async listSessions() {
        return a.registry.list().map((s) => ({ id: s.id, title: s.title, updatedAt: Date.parse(s.updatedAt) }));
      },
      async setModel(id) {
        agent.setModel(id);
        return { contextWindow: a.config.contextWindow };
      },
      async newSession() {
        const s = a.registry.create('interactive session');
        return { sessionId: s.id, rootThreadId: s.id };
      },
      watchUserEdits: (listener) => edits.subscribe(listener),
      async refreshBase() {
        const refreshed = await agent.refreshBase();
        await edits.recheck();
        return { message: describeRefresh(refreshed) };
      },
      // Kept: `infinity-code -c` continues with the same sandboxes.
      async quit() {
        await edits.close();
        await agent.close({ keep: true });
      },
    },
  });
  // A continued session shows its earlier transcript.
  const history = (await agent.store.loadThread(a.session.id))?.history ?? [];
  // The status line says so when commands can't be confined: each one then asks first.
  const backend = (await agent.commandsContained()) ? agent.backend : `${agent.backend} (commands unconfined)`;
  return { controller, backend, history };
}
