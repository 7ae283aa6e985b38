import { join } from 'node:path';
import type { ModelProvider } from '@infinity-code/runtime';
import { AgentSession } from './agent-session.js';
import { loadConfig } from './config.js';
import { EXIT, type ExitCode } from './exit-codes.js';
import { toReviewDiff } from './git-patch.js';
import { requireGitRoot } from './project.js';
import { childDiff, describeApply, selectedDiff, settleChildDiff } from './review.js';
import { anthropicFromEnv } from './run-headless.js';
import { SessionRegistry } from './sessions.js';
import { allHunkIds, createReviewBroker, localController, runTui, type ReviewBroker } from './tui/index.js';

export interface InteractiveOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  flags: { model?: string; continue?: boolean; resume?: string; maxTurns?: number };
  /** The demo's scripted model instead of the Anthropic API. */
  provider?: ModelProvider;
  /** The demo types its task for the user. */
  firstMessage?: string;
}

/** The terminal UI over one agent session; children's diffs wait for the human's review. */
export async function runInteractive(o: InteractiveOptions): Promise<ExitCode> {
  const root = requireGitRoot(o.cwd);
  const config = loadConfig({ env: o.env, projectRoot: root });
  const model = o.flags.model ?? config.model;
  const provider = o.provider ?? anthropicFromEnv(o.env);
  const registry = new SessionRegistry(join(root, '.infinity'));
  const session = o.flags.resume
    ? registry.find(o.flags.resume)
    : o.flags.continue
      ? (registry.latest() ?? registry.create('interactive session'))
      : registry.create('interactive session');
  registry.touch(session.id);

  let broker!: ReviewBroker;
  const agent = await AgentSession.open({
    projectRoot: root,
    config,
    provider,
    model,
    rootId: session.id,
    reviewer: (sandboxes) => {
      broker = createReviewBroker({
        diffOf: async (child) => (await childDiff(sandboxes, child))?.review ?? null,
        apply: async (request, decision) => {
          const child = (await agent.store.loadThread(request.childThreadId!))!.record;
          const found = await childDiff(sandboxes, child);
          if (!found) return { message: 'The child has no changes left to apply.' };
          const result = await settleChildDiff(sandboxes, child, found.diff, decision);
          return { message: describeApply(result, 'the parent sandbox'), conflicts: result.conflicts };
        },
      });
      return broker.reviewer;
    },
    ...(o.flags.maxTurns !== undefined ? { limits: { maxCompletionsPerThread: o.flags.maxTurns } } : {}),
  });
  const controller = localController({
    system: agent.system,
    rootThreadId: session.id,
    reviews: broker,
    hooks: {
      async showDiff() {
        const diff = await agent.rootDiff();
        return diff.isEmpty ? null : toReviewDiff(diff.patch);
      },
      async applyToWorkingTree(_request, decision) {
        const diff = await agent.rootDiff();
        const rootSandbox = await agent.sandboxes.sandboxFor(session.id);
        const everything = allHunkIds(toReviewDiff(diff.patch)).every((id) => decision.accepted.includes(id));
        const result = everything
          ? await rootSandbox.applyToWorkingTree()
          : await rootSandbox.applyToWorkingTree(selectedDiff(diff, decision));
        return { message: describeApply(result, 'the working tree'), conflicts: result.conflicts };
      },
      async listSessions() {
        return registry.list().map((s) => ({ id: s.id, title: s.title, updatedAt: Date.parse(s.updatedAt) }));
      },
      async setModel() {
        throw new Error('Switching models inside a session is not supported yet; restart with --model <id>.');
      },
      async newSession() {
        const s = registry.create('interactive session');
        return { sessionId: s.id, rootThreadId: s.id };
      },
      quit: () => agent.close(),
    },
  });
  if (o.firstMessage) void controller.send(o.firstMessage);
  await runTui(controller, { model, contextWindow: config.contextWindow, backend: agent.backend, sessionId: session.id });
  return EXIT.ok;
}
