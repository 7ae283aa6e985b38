import { randomUUID } from 'node:crypto';
import type { McpServerStatus } from '@infinity-code/mcp';
import type { ContentBlock, RuntimeEvent, Usage } from '@infinity-code/runtime';
import { resultText, ZERO_USAGE } from '@infinity-code/runtime';
import type { RunResult } from './result.js';

/**
 * `--output-format stream-json`: one JSON object per line, in the message shapes of Claude Code's
 * stream-json so that tools already reading it work unchanged: `system`/`init` first, then
 * `assistant` messages (one per model reply, Messages API content) and `user` messages (tool
 * results), and `result` last. What Claude Code has no shape for comes as further types (`thread`,
 * `event`, `retry`, `error`, `changes`, `mcp_server`), each with the `thread_id` it concerns. Every line carries
 * `session_id`, a `uuid` of its own and a `timestamp` (when what it tells happened); a child
 * thread's messages carry `parent_tool_use_id`, the `spawn_thread` call that started it (as Claude
 * Code does for subagents). The schema is docs/stream-json.schema.json.
 */
export interface InitInfo {
  model: string;
  cwd: string;
  tools: string[];
  /** `acceptEdits` with --yes (every diff accepted inside the sandbox), `default` otherwise. */
  permissionMode: 'default' | 'acceptEdits' | 'bypassPermissions' | 'plan';
  sandbox: string;
  contained: boolean;
  /** The session's MCP servers and their state when the run starts (their tools follow as they are ready). */
  mcpServers?: Array<{ name: string; status: string }>;
  /** The project commands a task may start with (`/name args`), without their slash, as Claude Code lists them. */
  slashCommands?: string[];
  /** Where the credentials come from: the environment variable, or `none` (the demo's scripted model). */
  apiKeySource?: string;
}

export interface ChangesInfo {
  subtype: 'applied' | 'saved' | 'none';
  files: string[];
  conflicts: string[];
  patch_file: string | null;
}

interface Reply {
  text: string;
  toolUses: ContentBlock[];
  usage: Usage;
  model: string;
  finished: boolean;
  /** The reply's blocks as the runtime stored them: thinking (with its signature), text, calls. */
  content?: readonly ContentBlock[];
  stopReason?: string | null;
}

/** Turns the runtime's event stream into stream-json lines, written through `write`. */
export class StreamJsonWriter {
  private readonly replies = new Map<string, Reply>();
  /** Child thread → the spawn call that started it. */
  private readonly spawnedBy = new Map<string, string>();
  private messages = 0;
  /**
   * Lines held until the init line is out: the task goes to the model before the sandbox it
   * names is known, and a reader expects init first.
   */
  private held: object[] | undefined = [];

  constructor(
    private readonly write: (obj: object) => void,
    private readonly sessionId: string,
  ) {}

  /** Stamped when what it tells happens, even if it is held until init. */
  private line(obj: object): void {
    const stamped = stamp(obj);
    if (this.held) this.held.push(stamped);
    else this.write(stamped);
  }

  init(info: InitInfo): void {
    const held = this.held ?? [];
    this.held = undefined;
    this.write(
      stamp({
        type: 'system',
        subtype: 'init',
        cwd: info.cwd,
        session_id: this.sessionId,
        tools: info.tools,
        mcp_servers: info.mcpServers ?? [],
        model: info.model,
        permissionMode: info.permissionMode,
        slash_commands: info.slashCommands ?? [],
        apiKeySource: info.apiKeySource ?? 'none',
        output_style: 'default',
        thread_id: this.sessionId,
        sandbox: info.sandbox,
        contained: info.contained,
      }),
    );
    for (const obj of held) this.write(obj);
  }

  event(e: RuntimeEvent): void {
    switch (e.type) {
      case 'completion-started':
        this.replies.set(e.threadId, { text: '', toolUses: [], usage: ZERO_USAGE, model: e.model, finished: false });
        return;
      case 'completion-retry': {
        // What the failed attempt streamed is discarded, as the runtime discards it.
        const r = this.replies.get(e.threadId);
        if (r) r.text = '';
        this.line({ type: 'retry', session_id: this.sessionId, thread_id: e.threadId, attempt: e.attempt, delay_ms: e.delayMs, kind: e.kind, message: e.message });
        return;
      }
      case 'text-delta': {
        const r = this.replies.get(e.threadId);
        if (r) r.text += e.text;
        return;
      }
      case 'completion-finished': {
        const r = this.replies.get(e.threadId);
        if (r) {
          // The model that answered: a retry may have gone to the fallback (--fallback-model).
          Object.assign(r, { usage: e.usage, finished: true, model: e.model });
          if (e.content) r.content = e.content;
          if (e.stopReason !== undefined) r.stopReason = e.stopReason;
        }
        return;
      }
      case 'tool-call': {
        const r = this.replies.get(e.threadId);
        r?.toolUses.push({ type: 'tool_use', id: e.call.id, name: e.call.name, input: e.call.input });
        return;
      }
      case 'turn-committed':
      case 'slice-finished':
        this.flushReply(e.threadId);
        return;
      case 'tool-result':
        this.line({
          type: 'user',
          message: {
            role: 'user',
            // A string, as Claude Code's (an image shows as a placeholder naming its type).
            content: [{ type: 'tool_result', tool_use_id: e.toolUseId, content: resultText(e.content), is_error: e.isError }],
          },
          ...this.origin(e.threadId),
        });
        return;
      case 'event-injected':
        this.line({
          type: 'event',
          subtype: e.source,
          ...this.origin(e.threadId),
          tool_use_id: e.originalCallId,
          content: e.content,
          ...(e.childThreadId !== undefined ? { child_thread_id: e.childThreadId } : {}),
          ...(e.final ? { final: true } : {}),
        });
        return;
      case 'thread-spawned':
        if (e.kind === 'compaction') return;
        this.spawnedBy.set(e.childId, e.spawnCallId);
        this.line({
          type: 'thread',
          subtype: 'spawned',
          session_id: this.sessionId,
          thread_id: e.childId,
          parent_thread_id: e.threadId,
          kind: e.kind,
          parent_tool_use_id: e.spawnCallId,
        });
        return;
      case 'thread-closed':
        this.line({ type: 'thread', subtype: 'closed', session_id: this.sessionId, thread_id: e.threadId });
        return;
      case 'error':
        this.line({ type: 'error', session_id: this.sessionId, thread_id: e.threadId, kind: e.kind, message: e.message });
        return;
      case 'compaction-applied':
      case 'compaction-started':
      case 'completion-silence':
      case 'input-accepted':
      case 'input-deferred':
      case 'input-dropped':
      case 'slice-started':
      case 'thinking-delta':
      case 'tool-call-streaming':
      case 'tool-denied':
      case 'tool-dispatched':
      case 'tool-interrupted':
      case 'tool-progress':
        return;
    }
  }

  /** An MCP server's new state (ready with its tools, failed, not started...). */
  mcpServer(s: Pick<McpServerStatus, 'name' | 'state' | 'tools' | 'message'>): void {
    this.line({
      type: 'mcp_server',
      session_id: this.sessionId,
      thread_id: this.sessionId,
      name: s.name,
      state: s.state,
      tools: s.tools,
      message: s.message ?? null,
    });
  }

  /**
   * --include-partial-messages: a Messages API stream event of a reply being written, in Claude
   * Code's `stream_event` line (see partial-messages.ts).
   */
  streamEvent(threadId: string, event: object): void {
    this.line({ type: 'stream_event', event, ...this.origin(threadId) });
  }

  /** What reached the working tree (or the saved patch), just before the result. */
  changes(c: ChangesInfo): void {
    this.line({ type: 'changes', session_id: this.sessionId, thread_id: this.sessionId, ...c });
  }

  /**
   * The last line. A run that failed before the init line has none: what was held comes out
   * anyway, then the result, so that a reader still gets the result last.
   */
  result(r: RunResult): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const obj of held) this.write(obj);
    this.line(r);
  }

  /** One `assistant` line per committed reply: its text, then its tool calls. */
  private flushReply(threadId: string): void {
    const r = this.replies.get(threadId);
    if (!r?.finished) return;
    this.replies.delete(threadId);
    // Thinking blocks come as Claude Code shows them: `thinking` (the progress notes, empty when
    // the model's display omits them) and `signature`.
    const content: readonly ContentBlock[] = r.content ?? [...(r.text !== '' ? [{ type: 'text' as const, text: r.text }] : []), ...r.toolUses];
    if (content.length === 0) return;
    this.line({
      type: 'assistant',
      message: {
        id: `msg_${this.sessionId}_${++this.messages}`,
        type: 'message',
        role: 'assistant',
        model: r.model,
        content,
        stop_reason: r.stopReason ?? (r.toolUses.length > 0 ? 'tool_use' : 'end_turn'),
        stop_sequence: null,
        usage: r.usage,
      },
      ...this.origin(threadId),
    });
  }

  private origin(threadId: string): { parent_tool_use_id: string | null; session_id: string; thread_id: string } {
    return { parent_tool_use_id: this.spawnedBy.get(threadId) ?? null, session_id: this.sessionId, thread_id: threadId };
  }
}

/** Claude Code's per-line identity: a fresh uuid (a result brings its own) and the time. */
function stamp(obj: object): object {
  return { ...obj, uuid: (obj as { uuid?: string }).uuid ?? randomUUID(), timestamp: new Date().toISOString() };
}
